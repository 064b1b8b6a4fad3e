import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// R42 on the live graph: an interruption fades the music out before its pause and back
    /// in after it, measured per 1024-frame block on the headphones' monitor (the music plays
    /// there, the interrupter on the speaker).
    @Suite(.serialized)
    struct PolicyFadeTests {
        /// A level no sounding block of the music reaches during the call (dBFS).
        static let silent = -80.0

        /// What the recording shows around one interruption.
        struct Fade {
            /// The music's level before the call, and at the end of the recording (dBFS).
            var level: Double, after: Double
            /// From the first block 1 dB down to the first block of the silence (ms).
            var outMilliseconds: Double
            /// The largest drop between consecutive sounding blocks while the earlier was
            /// within 40 dB of the level (dB), over `comparedPairs` pairs; `brokenPairs`
            /// pairs the recording does not hold one cycle apart were left out.
            var largestDrop: Double, comparedPairs: Int, brokenPairs: Int
            /// The loudest block between the fade-out and the fade-in (dBFS); -inf: digital silence.
            var loudestWhileSilent: Double
            /// From the first sounding block after the silence to the first within 1 dB of
            /// the level the music comes back to (ms).
            var inMilliseconds: Double
            /// The level the fade-out started from (the duck level when ducked, dBFS).
            var fadeStartLevel: Double
            /// The blocks from just before the fade-out to the silence (dBFS), printed with
            /// the figures so that a failure shows its steps.
            var fadeOutBlocks: [Double] = []
        }

        static let blockMilliseconds = 1024.0 / 48.0

        /// Reads the fade out and back in from block levels: `from` is the block where the
        /// interrupter was started; `backTo` the level the music returns to (default: its level).
        static func fade(_ levels: Levels, from: Int, level: Double, backTo: Double? = nil) throws -> Fade {
            let b = levels.blocks
            guard from < b.count else { throw TestFailure("no blocks after the call's start") }
            // The silence: the longest run of blocks below `silent` after the call started.
            guard let silence = levels.longestRun(below: silent, from: from), silence.count >= 5 else { throw TestFailure("the music never went silent after the call started") }
            // The first block 1 dB down; a cut has none before the silence.
            let fadeStart = (from..<silence.lowerBound).first { b[$0] < level - 1 && b[$0] > silent } ?? silence.lowerBound
            // Drops between consecutive sounding blocks while the earlier block is within
            // 40 dB of the level. A dropout (a block of digital silence inside the tone, or
            // one a dropout cuts into) is skipped; two blocks the recording does not hold
            // one cycle apart (a cycle the loaded machine's recorder missed) are not compared.
            var largestDrop = 0.0, compared = 0, broken = 0
            var previous: Int?
            for i in max(from, fadeStart - 1)...silence.lowerBound {
                if i == silence.lowerBound {
                    if let p = previous, b[p] > level - 40 { largestDrop = max(largestDrop, b[p] - silent) }
                    break
                }
                guard b[i].isFinite, !levels.partial.contains(i) else { continue }
                if let p = previous, b[p] > level - 40 {
                    if levels.unbroken(p, i) {
                        largestDrop = max(largestDrop, b[p] - b[i])
                        compared += 1
                    } else {
                        broken += 1
                    }
                }
                previous = i
            }
            let target = backTo ?? level
            let inStart = silence.upperBound
            let inEnd = (inStart..<b.count).first { b[$0] >= target - 1 } ?? b.count
            let loudest = b[silence].max() ?? -.infinity
            let fadeStartLevel = fadeStart > from ? b[fadeStart - 1] : level
            return Fade(level: level, after: levels.median(b.count - 20..<b.count - 2),
                        outMilliseconds: Double(silence.lowerBound - fadeStart) * blockMilliseconds,
                        largestDrop: largestDrop, comparedPairs: compared, brokenPairs: broken, loudestWhileSilent: loudest,
                        inMilliseconds: Double(inEnd - inStart) * blockMilliseconds, fadeStartLevel: fadeStartLevel,
                        fadeOutBlocks: Array(b[max(from, fadeStart - 2)...silence.lowerBound]))
        }

        /// Music (`victim`, a legacy Music stream unless given) on the headphones,
        /// `interrupter` started on the speaker; waits for the music's interruption and its
        /// end, then 1.5 s of the music back. `whileMusic` runs once the music plays.
        static func recordAround(
            _ sandbox: Sandbox, victim: [String]? = nil, interrupter: (String) -> [String],
            environment: [String: String] = [:], callSeconds: Double = 2, waitForInterruption: Bool = true,
            whileMusic: ((Int, Recorder) throws -> Void)? = nil
        ) throws -> (levels: Levels, from: Int, level: Double) {
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let call = try tone(in: sandbox, seconds: callSeconds, frequency: 660, name: "call.wav")
            let recorder = try Recorder(sandbox: sandbox, sink: "headphones")
            let (player, node) = try sandbox.startPlayer((victim ?? ["pw-play", "--media-role", "Music"]) + [music], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            try whileMusic?(node, recorder)
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            let callMark = recorder.mark
            let interrupter = try sandbox.spawn(interrupter(call), environment: environment)
            if waitForInterruption {
                try sandbox.waitUntil(timeout: 10, "the music to be interrupted") {
                    try PolicyInterruptionTests.interrupted(sandbox, node)
                }
            }
            try sandbox.waitUntil(timeout: 15, "the interrupter to end") { !interrupter.isRunning }
            try sandbox.waitUntil(timeout: 10, "the music to play again") {
                try !PolicyInterruptionTests.interrupted(sandbox, node) && PolicyInterruptionTests.running(sandbox, node)
            }
            try sandbox.waitForMoreRecording(recorder, seconds: 1.5)
            let wav = try recorder.stop()
            let levels = Levels(wav, tone: 440)
            let from = (callMark - 44) / 4096
            let level = levels.median(from - 20..<from - 1)
            return (levels, from, level)
        }

        static func report(_ name: String, _ f: Fade) {
            print(String(format: "fade (%@): level %.2f dBFS, out %.0f ms from %.2f dBFS, largest drop %.2f dB/block (%d pairs, %d across a gap left out), loudest while paused %.1f dBFS, in %.0f ms, after %.2f dBFS",
                         name, f.level, f.outMilliseconds, f.fadeStartLevel, f.largestDrop, f.comparedPairs, f.brokenPairs,
                         f.loudestWhileSilent, f.inMilliseconds, f.after))
            print("  fade-out blocks (dBFS): " + f.fadeOutBlocks.map { String(format: "%.1f", $0) }.joined(separator: " "))
        }

        /// R42's figures: out in 150–800 ms (eight steps a cycle and a half apart: about half
        /// a second at the default quantum limit) with no drop above 6 dB per block while
        /// within 40 dB of the level (compared over most of the fade's blocks, whatever gaps
        /// the recording has), silent (≤ −80 dBFS) during the call, back in 150–1500 ms to
        /// the level it comes back to (±1 dB).
        static func expectFade(_ f: Fade, backTo: Double? = nil) {
            #expect(f.outMilliseconds >= 150 && f.outMilliseconds <= 800, "fade-out \(f.outMilliseconds) ms")
            #expect(f.largestDrop <= 6, "largest drop \(f.largestDrop) dB per block")
            #expect(f.comparedPairs >= 8, "only \(f.comparedPairs) pairs of blocks compared (\(f.brokenPairs) across a gap)")
            #expect(f.loudestWhileSilent <= silent, "loudest block during the call \(f.loudestWhileSilent) dBFS")
            #expect(f.inMilliseconds >= 150 && f.inMilliseconds <= 1500, "fade-in \(f.inMilliseconds) ms")
            #expect(abs(f.after - (backTo ?? f.level)) <= 1, "after \(f.after), expected \(backTo ?? f.level)")
        }

        /// One call over music in a fresh sandbox, read and checked against R42's figures.
        static func expectFadeAroundACall(_ name: String, victim: [String]? = nil, interrupter: (String) -> [String],
                                          environment: [String: String] = [:]) throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let r = try recordAround(sandbox, victim: victim, interrupter: interrupter, environment: environment)
            let f = try fade(r.levels, from: r.from, level: r.level)
            report(name, f)
            expectFade(f)
        }

        @Test func r42ALegacyCallFadesLegacyMusicOutAndBackIn() throws {
            try Self.expectFadeAroundACall("legacy call over legacy music",
                                           interrupter: { ["pw-play", "--media-role", "Phone", "--target", "speaker", $0] })
        }

        @Test func r42ALegacyCallFadesAPulseClientsMusicOutAndBackIn() throws {
            try Self.expectFadeAroundACall("legacy call over paplay", victim: ["paplay", "--property=media.role=Music"],
                                           interrupter: { ["pw-play", "--media-role", "Phone", "--target", "speaker", $0] })
        }

        @Test func r42ADeclaredVoiceChatCallFadesTheMusicOutAndBackIn() throws {
            let declaration = "{ audio.session.category=playAndRecord audio.session.mode=voiceChat " +
                "audio.session.deactivation=notifyOthersOnDeactivation }"
            try Self.expectFadeAroundACall("declared voiceChat call", interrupter: { ["pw-play", "--target", "speaker", $0] },
                                           environment: ["PIPEWIRE_PROPS": declaration])
        }

        /// A prompt ducks the music, then a call comes: the music fades from its duck level
        /// to silence, and after the call it fades back in to where the prompt leaves it.
        @Test func r42ADuckedStreamFadesFromItsDuckLevel() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let prompt = try tone(in: sandbox, seconds: 30, frequency: 880, name: "prompt.wav")
            var navigation: ChildProcess?
            defer { navigation?.terminate(signal: SIGKILL, timeout: 2) }
            let r = try Self.recordAround(sandbox, interrupter: { ["pw-play", "--media-role", "Phone", "--target", "speaker", $0] }) { node, recorder in
                navigation = try sandbox.spawn(["pw-play", "--media-role", "Navigation", "--target", "speaker", prompt])
                try sandbox.waitUntil(timeout: 10, "the music to be ducked") {
                    (try sandbox.sessionState(subject: node)?["duckGain"] as? Double).map { $0 < 0.99 } == true
                }
                // The duck's ramp down (250 ms, paced by the graph's cycles) and a margin.
                try sandbox.waitForMoreRecording(recorder, seconds: 1.0)
            }
            // The level before the call is the ducked one; the undimmed level is 14 dB above it.
            let f = try Self.fade(r.levels, from: r.from, level: r.level)
            Self.report("ducked music", f)
            #expect(f.outMilliseconds >= 100 && f.outMilliseconds <= 800, "fade-out \(f.outMilliseconds) ms")
            #expect(f.largestDrop <= 6, "largest drop \(f.largestDrop) dB per block")
            #expect(f.comparedPairs >= 5, "only \(f.comparedPairs) pairs of blocks compared (\(f.brokenPairs) across a gap)")
            #expect(f.loudestWhileSilent <= Self.silent)
            // The prompt plays on after the call: the music comes back to the duck level.
            #expect(f.inMilliseconds >= 150 && f.inMilliseconds <= 1500, "fade-in \(f.inMilliseconds) ms")
            #expect(abs(f.after - r.level) <= 1, "after \(f.after), ducked level \(r.level)")
        }

        /// A call that ends while the music still fades out: the music ramps back from where
        /// it is and is never paused.
        @Test func r42ACallThatEndsMidFadeGivesTheMusicBackWithoutAPause() throws {
            var options = SandboxOptions()
            // A long fade-out and no grace period, so the call's end falls inside the fade.
            options.moduleArguments = ["fade.out-ms": "2500", "resume.grace-ms": "0"]
            let sandbox = try Sandbox.start(options)
            defer { sandbox.stop() }
            let r = try Self.recordAround(sandbox, interrupter: { ["pw-play", "--media-role", "Phone", "--target", "speaker", $0] },
                                          callSeconds: 0.6, waitForInterruption: false)
            let b = r.levels.blocks
            let window = r.from..<b.count
            let lowest = window.map { b[$0] }.filter(\.isFinite).min() ?? -.infinity
            let silentBlocks = window.filter { !(b[$0] > Self.silent) }.count
            let after = r.levels.median(b.count - 20..<b.count - 2)
            print(String(format: "fade (call ends mid-fade): level %.2f dBFS, lowest %.2f dBFS, %d silent blocks, after %.2f dBFS",
                         r.level, lowest, silentBlocks, after))
            #expect(lowest < r.level - 3, "the music did not fade at all: lowest \(lowest)")
            #expect(lowest > Self.silent, "the music reached silence: \(lowest)")
            #expect(silentBlocks <= 2, "\(silentBlocks) silent blocks: the music was paused")
            #expect(abs(after - r.level) <= 1)
        }
    }
}

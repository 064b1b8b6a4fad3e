import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// R3 / S4 / §12: a prompt ducks the music with the module's own gain
    /// (softVolumes). Music plays on the headphones, the prompt on the speaker, so the
    /// headphones' monitor holds the music alone.
    @Suite(.serialized)
    struct PolicyDuckTests {
        static let duckLevel = dB(0.2)

        struct Outcome {
            var before: Double, during: Double, after: Double, largestStep: Double, comparedPairs: Int, brokenPairs: Int
            /// Blocks of digital silence after the music's start (`Levels.steps` skips them).
            var silentBlocks: Int
            var savedStateBefore: Data?, savedStateAfter: Data?
            var volumesBefore: String, volumesAfter: String
        }

        /// The user's channelVolumes of a node as `pw-cli enum-params` prints them.
        static func channelVolumes(_ sandbox: Sandbox, _ node: Int) throws -> String {
            let out = try sandbox.run(["pw-cli", "enum-params", String(node), "Props"]).stdout
            guard let r = out.range(of: "Props:channelVolumes") else { return "none" }
            return out[r.upperBound...].split(separator: "\n").dropFirst(2).prefix(2).joined(separator: ",")
        }

        /// WirePlumber's saved state of the music stream (restore-stream's lines for it).
        static func restoreStream(_ sandbox: Sandbox) -> Data? {
            guard let data = FileManager.default.contents(atPath: sandbox.savedStreamStatePath) else {
                return nil
            }
            // The music's key: its role up to WirePlumber 0.5.8; from 0.5.x on (0.5.18 here) the
            // role names only notifications, and the key is the program's name (pw-play).
            let keys = ["Output/Audio:media.role:Music", "Output/Audio:application.name:pw-play"]
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
                // WirePlumber 0.4: a line per value (`…Music:volume=…`); 0.5: one JSON object (`…Music={…}`).
                .filter { line in keys.contains { line.hasPrefix($0 + ":") || line.hasPrefix($0 + "=") } }
                .map(normalizedStateLine)
            return lines.isEmpty ? nil : Data(lines.joined(separator: "\n").utf8)
        }

        /// WirePlumber 0.5 writes a stream's values as a JSON object whose key order changes
        /// from one save to the next: the object with sorted keys, so equal values compare equal.
        static func normalizedStateLine(_ line: Substring) -> String {
            guard let eq = line.firstIndex(of: "="), line[line.index(after: eq)...].hasPrefix("{"),
                  let object = try? JSONSerialization.jsonObject(with: Data(line[line.index(after: eq)...].utf8)),
                  let sorted = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
                return String(line)
            }
            return String(line[...eq]) + String(decoding: sorted, as: UTF8.self)
        }

        /// Plays music, waits for its level, plays `prompt`, waits for the duck and its end;
        /// `during` runs while the music is ducked.
        static func duck(_ sandbox: Sandbox, prompt: (String) -> [String], environment: [String: String] = [:],
                         during: ((Int) throws -> Void)? = nil) throws -> (Levels, Outcome) {
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let promptFile = try tone(in: sandbox, seconds: 1.5, frequency: 880, name: "prompt.wav")
            let recorder = try Recorder(sandbox: sandbox, sink: "headphones")
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            // WirePlumber saves a new stream's state after a delay: wait for it.
            try sandbox.waitUntil(timeout: 10, "WirePlumber to save the music's state") { restoreStream(sandbox) != nil }
            let savedBefore = restoreStream(sandbox)
            let volumesBefore = try channelVolumes(sandbox, node)

            let p = try sandbox.spawn(prompt(promptFile), environment: environment)
            try sandbox.waitUntil(timeout: 10, "the music to be ducked") {
                (try sandbox.sessionState(subject: node)?["duckGain"] as? Double).map { $0 < 0.99 } == true
            }
            try during?(node)
            try sandbox.waitUntil(timeout: 15, "the prompt to end") { !p.isRunning }
            try sandbox.waitUntil(timeout: 10, "the duck to end") {
                (try sandbox.sessionState(subject: node)?["duckGain"] as? Double) == 1.0
            }
            // The ramp up (500 ms) and a margin of steady level after it.
            try sandbox.waitForMoreRecording(recorder, seconds: 1.5)
            let volumesAfter = try channelVolumes(sandbox, node)
            let wav = try recorder.stop()
            let levels = Levels(wav, tone: 440)
            let n = levels.blocks.count
            // The first blocks hold the recorder's own start (silence before the music).
            let firstSound = levels.blocks.firstIndex { $0.isFinite && $0 > -40 } ?? 0
            let before = levels.median(firstSound + 2..<firstSound + 20)
            let run = levels.longestRun(below: before - 6) ?? 0..<0
            let plateau = run.lowerBound + run.count / 4..<run.upperBound - run.count / 4
            let after = levels.median(n - 20..<n - 2)
            let steps = levels.steps(firstSound + 2..<n - 2)
            let silent = levels.silentBlocks(firstSound + 2..<n - 2)
            let outcome = Outcome(before: before, during: levels.median(plateau), after: after,
                                  largestStep: steps.largest, comparedPairs: steps.compared, brokenPairs: steps.broken,
                                  silentBlocks: silent.count,
                                  savedStateBefore: savedBefore, savedStateAfter: restoreStream(sandbox),
                                  volumesBefore: volumesBefore, volumesAfter: volumesAfter)
            print(String(format: "duck: music %.2f dB before, %.2f dB during, %.2f dB after, largest step %.2f dB/block (%d pairs, %d across a gap left out), plateau %d blocks, dropouts %d",
                         before, outcome.during, after, outcome.largestStep, steps.compared, steps.broken, plateau.count,
                         silent.count) + (silent.isEmpty ? "" : " (blocks \(silent.map { $0 - firstSound }) after the music's first, of \(n - firstSound))"))
            return (levels, outcome)
        }

        static func expectDuck(_ o: Outcome, userDelta: Double = 0) {
            #expect(abs(o.during - (o.before + userDelta + duckLevel)) <= 1, "during \(o.during), before \(o.before)")
            #expect(abs(o.after - (o.before + userDelta)) <= 0.5, "after \(o.after), before \(o.before)")
            #expect(o.largestStep <= 3, "largest step \(o.largestStep) dB")
            // Gaps in the recording are rare: nearly every pair of blocks is compared.
            #expect(o.brokenPairs * 10 <= o.comparedPairs, "\(o.brokenPairs) pairs across a gap, \(o.comparedPairs) compared")
            // So is silence: a few cycles the loaded machine missed (at most 4 blocks in 225
            // ducks recorded with three or four integration suites running at once on two
            // cores), not a cut at each step of the ramp, which the step check skips.
            #expect(o.silentBlocks <= 8, "\(o.silentBlocks) blocks of silence")
        }

        @Test func s4NavigationPromptDucksLegacyMusicAndLeavesTheUsersVolumeAlone() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let (_, o) = try Self.duck(sandbox, prompt: { ["pw-play", "--media-role", "Navigation", "--target", "speaker", $0] })
            Self.expectDuck(o)
            #expect(o.volumesBefore == o.volumesAfter, "channelVolumes \(o.volumesBefore) -> \(o.volumesAfter)")
            #expect(o.savedStateBefore != nil)
            #expect(o.savedStateBefore == o.savedStateAfter, "WirePlumber's restore-stream changed")
        }

        @Test func r3DeclaredVoicePromptDuckOthersDucksTheMusic() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let declaration = "{ audio.session.category=playback audio.session.mode=voicePrompt audio.session.options=duckOthers }"
            let (_, o) = try Self.duck(sandbox, prompt: { ["pw-play", "--target", "speaker", $0] },
                                       environment: ["PIPEWIRE_PROPS": declaration])
            Self.expectDuck(o)
            #expect(o.volumesBefore == o.volumesAfter, "channelVolumes \(o.volumesBefore) -> \(o.volumesAfter)")
            #expect(o.savedStateBefore == o.savedStateAfter, "WirePlumber's restore-stream changed")
        }

        /// R3: no ramp step larger than 3 dB reaches the audio in one cycle, whatever the
        /// graph's quantum: the steps are paced by the graph's longest cycle, so a graph
        /// running 2048-sample cycles (as PipeWire 1.4 did) gets the same smooth duck as
        /// one running 1024.
        @Test(arguments: [1024, 2048])
        func r3DuckStepsStayUnder3dBPerCycleAtQuantum(_ quantum: Int) throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let r = try sandbox.run(["pw-metadata", "-n", "settings", "0", "clock.force-quantum", String(quantum)])
            #expect(r.status == 0, "\(r.stderr)")
            let (_, o) = try Self.duck(sandbox, prompt: { ["pw-play", "--media-role", "Navigation", "--target", "speaker", $0] })
            Self.expectDuck(o)
        }

        /// §12: "the duck multiplies the user's volume; it never replaces it".
        @Test func aUserVolumeChangeDuringTheDuckIsKeptAndReducked() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let longPrompt: (String) -> [String] = { ["pw-play", "--media-role", "Navigation", "--target", "speaker", $0] }
            let (levels, o) = try Self.duck(sandbox, prompt: longPrompt) { node in
                let r = try sandbox.run(["pw-cli", "set-param", String(node), "Props", "{ channelVolumes: [ 0.5, 0.5 ] }"])
                #expect(r.status == 0, "\(r.stderr)")
            }
            let half = dB(0.5)
            #expect(abs(o.after - (o.before + half)) <= 0.5, "after \(o.after), before \(o.before)")
            // Somewhere in the duck the music sat at user volume x duck level.
            let reducked = levels.blocks.filter { abs($0 - (o.before + half + Self.duckLevel)) <= 1 }.count
            #expect(reducked >= 10, "blocks at the re-ducked level: \(reducked)")
            // No step limit here: the user's own change is applied by the stream before the
            // module hears of it and re-ducks (one cycle at user volume x 1).
            #expect(o.volumesAfter.contains("0.500000"), "channelVolumes after: \(o.volumesAfter)")
            let saved = String(decoding: o.savedStateAfter ?? Data(), as: UTF8.self)
            // WirePlumber 0.4: `…Music:channelVolumes=0.5;0.5;`; 0.5: `…Music={… "channelVolumes":[0.5, 0.5] …}`.
            let compact = saved.replacingOccurrences(of: " ", with: "")
            #expect(compact.contains("Output/Audio:media.role:Music:channelVolumes=0.5;0.5;") ||
                    compact.range(of: #""channelVolumes":\[0\.50*,0\.50*\]"#, options: .regularExpression) != nil,
                    "saved stream state: \(saved)")
        }
    }
}

import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

/// Ducking (R3, §12) and interruption (R10, R15) measured on one recording.
///
/// The music (375 Hz) and the prompt or call (1500 Hz) play on the same sink, the
/// headphones, whose monitor is recorded. Both tones have a whole number of cycles in
/// 256 and 1024 frames, so a Goertzel filter separates them exactly in any window: the
/// music's level and the other program's start and end come from the same timeline.
enum Tones {
    static let music = 375.0
    static let other = 1500.0
    static let window = 256
    static let hop = 64
    static let onThreshold = -30.0   // the prompt/call present (its full level is -6 dB)

    struct Series {
        var music: [Double]   // level (dB) of the music per window (hop 64, window 256)
        var other: [Double]
        func start(_ j: Int) -> Int { j * Tones.hop }
    }

    static func series(_ m: [Float]) -> Series {
        var a: [Double] = [], b: [Double] = []
        var s = 0
        while s + window <= m.count {
            a.append(level(toneAmplitude(m, start: s, n: window, frequency: music)))
            b.append(level(toneAmplitude(m, start: s, n: window, frequency: other)))
            s += hop
        }
        return Series(music: a, other: b)
    }

    /// First and last frame of the other program (±1 hop).
    static func otherSpan(_ s: Series) -> (on: Int, off: Int)? {
        guard let first = s.other.firstIndex(where: { $0 > onThreshold }),
              let last = s.other.lastIndex(where: { $0 > onThreshold }) else { return nil }
        // A window first holds the tone at the -30 dB threshold when ~1/16 of it is tone.
        return (s.start(first) + window - window / 16, s.start(last) + window / 16)
    }

    static func median(_ v: [Double]) -> Double? {
        let f = v.filter(\.isFinite).sorted()
        return f.isEmpty ? nil : percentile(f, 50)
    }
}

struct DuckTrial: Codable {
    var ok: Bool
    var error: String?
    var beforeDb: Double?
    /// From the prompt's first sample to the music within 1 dB of the duck level (ms).
    var reachedMs: Double?
    /// Median music level while ducked minus (level before + duck level) (dB).
    var levelErrorDb: Double?
    var duckedDb: Double?
    /// The music's level change from before to the middle of the prompt (dB, negative = quieter).
    var changeDuringPromptDb: Double?
    var stepDownDb: Double?
    var stepUpDb: Double?
    /// From the prompt's last sample to the music back within 1 dB of its level before (ms).
    var restoreMs: Double?
    var promptMs: Double?
}

struct DuckResult: Codable {
    var system: String
    var trials: [DuckTrial]
    var reachedCount: Int
    var reachedMs: Stats
    var levelErrorDb: Stats
    var changeDuringPromptDb: Stats
    var stepDownDb: Stats
    var stepUpDb: Stats
    var restoreMs: Stats
    var duckLevelDb: Double
    var envelope: Envelope?
    var promptCommand: String
}

struct InterruptTrial: Codable {
    var ok: Bool
    var error: String?
    var paused: Bool
    /// From the call's first sample to the music's last sample (ms).
    var pauseMs: Double?
    /// From the call's last sample to the music's first sample again (ms): sample-exact
    /// when the sink played digital silence between them, else from the windows (±1.3 ms).
    var resumeMs: Double?
    /// From the call's last sample to the music's first window within 40 dB of its level
    /// (ms): later than `resumeMs` by the part of a fade-in that starts below that.
    var resumeAudibleMs: Double?
    var resumed: Bool
    var callMs: Double?
    var musicDuringCallDb: Double?
    /// R42: from the music's first window 1 dB below its level to its first window 40 dB
    /// below it (ms); about 0 for a cut.
    var fadeOutMs: Double?
    /// The largest drop of the music from one 1024-frame block to the next while it was
    /// within 40 dB of its level (dB); a cut drops by 40 dB or more at once.
    var fadeOutStepDb: Double?
    /// From the music's first window above the silence after the call to its first within
    /// 1 dB of its level (ms).
    var fadeInMs: Double?
}

struct InterruptResult: Codable {
    var system: String
    var trials: [InterruptTrial]
    var pausedCount: Int
    var resumedCount: Int
    var pauseMs: Stats
    var resumeMs: Stats
    var resumeAudibleMs: Stats?
    var fadeOutMs: Stats?
    var fadeOutStepDb: Stats?
    var fadeInMs: Stats?
    var envelope: Envelope?
    var callCommand: String
}

enum DuckInterrupt {
    static let duckLevel = dB(0.2)
    static let envPre = 300.0     // ms before the prompt/call
    static let envPost = 2_300.0  // ms after its start

    /// Music playing on the headphones, recorded; `body` runs the trials.
    static func withMusic<T>(_ sandbox: Sandbox, _ body: (Tape) throws -> T) throws -> T {
        if try sandbox.nodeID(named: "headphones") == nil { try sandbox.addDevice(.headphones) }
        try sandbox.waitUntil(timeout: 10, poll: 0.01, "headphones to be the default sink") { sandbox.defaultSinkName() == "headphones" }
        let file = try sandbox.tone(seconds: 120, frequency: Tones.music, name: "di-music.wav")
        let tape = try Tape(sandbox, sink: "headphones")
        defer { tape.stop() }
        let (player, _, _) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", file], on: "headphones")
        defer { player.terminate(signal: SIGKILL, timeout: 2) }
        try tape.waitForMore(seconds: 0.3)
        return try body(tape)
    }

    /// Plays `argv` (the 1 s prompt/call) and returns the mono samples from 0.4 s before it to 1.2 s after its end.
    static func episode(_ sandbox: Sandbox, _ tape: Tape, argv: [String], environment: [String: String] = [:]) throws -> [Float] {
        try tape.waitForMore(seconds: 0.4)
        let m0 = tape.mark
        let p = try sandbox.spawn(argv, environment: environment)
        defer { p.terminate(signal: SIGKILL, timeout: 2) }
        try sandbox.waitUntil(timeout: 10, poll: 0.01, "\(argv[0]) to end") { !p.isRunning }
        try tape.waitForMore(seconds: 1.2)
        let m1 = tape.mark
        let a = max(0, tape.frame(ofMark: m0) - 19_200)
        return mono(tape.samples(fromFrame: a, toFrame: tape.frame(ofMark: m1)))
    }

    static func envelopeRow(_ s: Tones.Series, on: Int, before: Double) -> [Double] {
        // One point per 256 frames (every 4th window), relative to the level before.
        let first = on - Int(envPre * 48)
        let last = on + Int(envPost * 48)
        var row: [Double] = []
        var f = first
        while f < last {
            let j = max(0, f / Tones.hop)
            row.append(j < s.music.count ? s.music[j] - before : .nan)
            f += 256
        }
        return row
    }

    // MARK: Ducking

    static func duck(_ sandbox: Sandbox, system: String, trials: Int) -> DuckResult {
        var results: [DuckTrial] = []
        var rows: [[Double]] = []
        let promptArgv = ["pw-play", "--media-role", "Navigation"]
        do {
            let prompt = try sandbox.tone(seconds: 1.0, frequency: Tones.other, name: "prompt.wav")
            try withMusic(sandbox) { tape in
                for i in 0..<trials {
                    do {
                        let m = try episode(sandbox, tape, argv: promptArgv + [prompt])
                        let (t, row) = analyseDuck(m)
                        results.append(t)
                        if let row { rows.append(row) }
                    } catch {
                        results.append(DuckTrial(ok: false, error: describe(error)))
                        if !sandbox.daemonsAlive { break }
                    }
                    progress("  ducking \(system): trial \(i + 1)/\(trials)" + (results.last.map { t in
                        t.ok ? String(format: " reached %@, change during prompt %.1f dB",
                                      t.reachedMs.map { String(format: "%.0f ms", $0) } ?? "never",
                                      t.changeDuringPromptDb ?? .nan) : " failed: \(t.error ?? "")"
                    } ?? ""))
                }
            }
        } catch {
            results.append(DuckTrial(ok: false, error: describe(error)))
        }
        let ok = results.filter(\.ok)
        return DuckResult(
            system: system, trials: results, reachedCount: ok.filter { $0.reachedMs != nil }.count,
            reachedMs: Stats(ok.compactMap(\.reachedMs)), levelErrorDb: Stats(ok.compactMap(\.levelErrorDb)),
            changeDuringPromptDb: Stats(ok.compactMap(\.changeDuringPromptDb)),
            stepDownDb: Stats(ok.compactMap(\.stepDownDb)), stepUpDb: Stats(ok.compactMap(\.stepUpDb)),
            restoreMs: Stats(ok.compactMap(\.restoreMs)), duckLevelDb: duckLevel,
            envelope: Envelope.aggregate(rows, blockFrames: 256, offsetBlocks: Int(envPre * 48) / 256),
            promptCommand: (promptArgv + ["prompt.wav"]).joined(separator: " "))
    }

    /// Largest change between consecutive 1024-frame blocks of the music's level in `range` (frames).
    static func largestStep(_ m: [Float], _ range: Range<Int>) -> Double? {
        var prev: Double?
        var best: Double?
        var s = max(0, range.lowerBound)
        while s + 1024 <= min(m.count, range.upperBound) {
            let l = level(toneAmplitude(m, start: s, n: 1024, frequency: Tones.music))
            if let p = prev { best = max(best ?? 0, abs(l - p)) }
            prev = l
            s += 1024
        }
        return best
    }

    static func analyseDuck(_ m: [Float]) -> (DuckTrial, [Double]?) {
        let s = Tones.series(m)
        guard let span = Tones.otherSpan(s) else { return (DuckTrial(ok: false, error: "the prompt is not in the recording"), nil) }
        let wOn = span.on / Tones.hop, wOff = span.off / Tones.hop
        let beforeWindows = s.music.indices.filter { s.start($0) + Tones.window <= span.on - 480 && s.start($0) >= span.on - 480 - 14_400 }
        guard let before = Tones.median(beforeWindows.map { s.music[$0] }), before > -40 else {
            return (DuckTrial(ok: false, error: "no music before the prompt"), nil)
        }
        var t = DuckTrial(ok: true, beforeDb: before, promptMs: Double(span.off - span.on) / 48)
        let target = before + duckLevel
        // Reached: the first window (after the prompt started) entirely at or below target + 1 dB.
        var reachedFrame: Int?
        if let j = (max(0, wOn - 4)..<min(s.music.count, wOff)).first(where: { s.music[$0] <= target + 1 }) {
            reachedFrame = s.start(j) + Tones.window
            t.reachedMs = Double(s.start(j) + Tones.window - span.on) / 48
        }
        // The music in the middle of the prompt (its second half).
        let mid = (wOn + wOff) / 2
        if let d = Tones.median(Array(s.music[min(mid, s.music.count)..<min(max(mid, wOff - 4), s.music.count)])) {
            t.changeDuringPromptDb = d - before
        }
        if let r = reachedFrame {
            let plateau = (r + 1024) / Tones.hop..<max((r + 1024) / Tones.hop, (span.off - 1024) / Tones.hop)
            if let d = Tones.median(plateau.filter { $0 < s.music.count }.map { s.music[$0] }) {
                t.duckedDb = d
                t.levelErrorDb = d - target
            }
            t.stepDownDb = largestStep(m, (span.on - 2048)..<(r + 2048))
            // Restored: the first window after the prompt's end back within 1 dB of the level before.
            if let j = (wOff..<s.music.count).first(where: { s.music[$0] >= before - 1 }) {
                let restored = s.start(j) + Tones.window
                t.restoreMs = Double(restored - span.off) / 48
                t.stepUpDb = largestStep(m, (span.off - 2048)..<(restored + 2048))
            }
        } else {
            // No duck: the steps around the prompt are what the music did (nothing, for stock WirePlumber).
            t.stepDownDb = largestStep(m, (span.on - 2048)..<(span.on + 24_000))
            t.stepUpDb = largestStep(m, (span.off - 2048)..<(span.off + 24_000))
        }
        return (t, envelopeRow(s, on: span.on, before: before))
    }

    // MARK: Interruption

    static func interrupt(_ sandbox: Sandbox, system: String, trials: Int) -> InterruptResult {
        var results: [InterruptTrial] = []
        var rows: [[Double]] = []
        let callArgv = ["pw-play", "--media-role", "Phone"]
        do {
            let call = try sandbox.tone(seconds: 1.0, frequency: Tones.other, name: "call.wav")
            try withMusic(sandbox) { tape in
                for i in 0..<trials {
                    do {
                        let m = try episode(sandbox, tape, argv: callArgv + [call])
                        let (t, row) = analyseInterrupt(m)
                        results.append(t)
                        if let row { rows.append(row) }
                    } catch {
                        results.append(InterruptTrial(ok: false, error: describe(error), paused: false, resumed: false))
                        if !sandbox.daemonsAlive { break }
                    }
                    progress("  interruption \(system): trial \(i + 1)/\(trials)" + (results.last.map { t in
                        !t.ok ? " failed: \(t.error ?? "")" :
                            t.paused ? String(format: " paused after %.1f ms, resumed %@", t.pauseMs ?? .nan,
                                              t.resumeMs.map { String(format: "%.1f ms after the call", $0) } ?? "no")
                            : " music not paused"
                    } ?? ""))
                }
            }
        } catch {
            results.append(InterruptTrial(ok: false, error: describe(error), paused: false, resumed: false))
        }
        let ok = results.filter(\.ok)
        return InterruptResult(
            system: system, trials: results, pausedCount: ok.filter(\.paused).count, resumedCount: ok.filter(\.resumed).count,
            pauseMs: Stats(ok.compactMap(\.pauseMs)), resumeMs: Stats(ok.compactMap(\.resumeMs)),
            resumeAudibleMs: Stats(ok.compactMap(\.resumeAudibleMs)),
            fadeOutMs: Stats(ok.compactMap(\.fadeOutMs)), fadeOutStepDb: Stats(ok.compactMap(\.fadeOutStepDb)),
            fadeInMs: Stats(ok.compactMap(\.fadeInMs)),
            envelope: Envelope.aggregate(rows, blockFrames: 256, offsetBlocks: Int(envPre * 48) / 256),
            callCommand: (callArgv + ["call.wav"]).joined(separator: " "))
    }

    static func analyseInterrupt(_ m: [Float]) -> (InterruptTrial, [Double]?) {
        let s = Tones.series(m)
        guard let span = Tones.otherSpan(s) else {
            return (InterruptTrial(ok: false, error: "the call is not in the recording", paused: false, resumed: false), nil)
        }
        let beforeWindows = s.music.indices.filter { s.start($0) + Tones.window <= span.on - 480 && s.start($0) >= span.on - 480 - 14_400 }
        guard let before = Tones.median(beforeWindows.map { s.music[$0] }), before > -40 else {
            return (InterruptTrial(ok: false, error: "no music before the call", paused: false, resumed: false), nil)
        }
        var t = InterruptTrial(ok: true, paused: false, resumed: false, callMs: Double(span.off - span.on) / 48)
        let silent = before - 40
        // The first music-free window at or after the call's start (a little earlier allowed).
        let from = max(0, (span.on - 4_800) / Tones.hop)
        // The call's own start and end are steps that splash a few windows of energy into every
        // bin: a pause is a run of music-free windows allowed to be broken by up to 6 windows.
        if let g0 = (from..<s.music.count).first(where: { s.music[$0] < silent }) {
            var g1 = g0
            while true {
                var next = g1 + 1
                while next < s.music.count && next - g1 <= 7 && s.music[next] >= silent { next += 1 }
                if next < s.music.count && next - g1 <= 7 && s.music[next] < silent { g1 = next } else { break }
            }
            if g1 - g0 >= 8 {   // at least ~10 ms without music: a pause, not a zero crossing
                t.paused = true
                t.pauseMs = Double(s.start(g0) - span.on) / 48
                if g1 + 1 < s.music.count {
                    t.resumed = true
                    let audible = s.start(g1) + Tones.window
                    t.resumeAudibleMs = Double(audible - span.off) / 48
                    if let gap = silentGap(m, endingBefore: audible, callOff: span.off) {
                        t.resumeMs = Double(gap.musicStart - gap.callEnd) / 48
                    } else {
                        t.resumeMs = t.resumeAudibleMs
                    }
                }
                (t.fadeOutMs, t.fadeOutStepDb, t.fadeInMs) = fades(s, from: from, silence: g0...g1, before: before)
            }
        }
        let mid = (span.on + span.off) / 2 / Tones.hop
        t.musicDuringCallDb = Tones.median(Array(s.music[min(mid, s.music.count)..<min(mid + 40, s.music.count)])).map { $0 - before }
        return (t, envelopeRow(s, on: span.on, before: before))
    }

    /// The digital silence between the call's last sample and the music's first, found
    /// back from `end` (the end of the last window without music: the music plays within a
    /// hop after it): `callEnd` is the call's last non-zero sample, `musicStart` the
    /// music's first. Nil when the sink was not digitally silent in between, or when the
    /// silence does not follow the call's end (`callOff`, found from the windows) within a
    /// window.
    static func silentGap(_ m: [Float], endingBefore end: Int, callOff: Int) -> (callEnd: Int, musicStart: Int)? {
        let zero: Float = 1.5 / 32768   // below one step of the recording's 16 bits
        let run = 64                    // a tone at -50 dBFS or louder is never this long at zero
        let end = min(end + Tones.hop, m.count)
        var j = end - 1, n = 0
        while j >= 0 && n < run {
            n = abs(m[j]) <= zero ? n + 1 : 0
            j -= 1
        }
        guard n == run else { return nil }
        var musicStart = j + 1
        while musicStart < m.count && abs(m[musicStart]) <= zero { musicStart += 1 }
        var callEnd = j
        while callEnd >= 0 && abs(m[callEnd]) <= zero { callEnd -= 1 }
        guard callEnd >= 0, musicStart < end, abs(callEnd - callOff) <= Tones.window else { return nil }
        return (callEnd, musicStart)
    }

    /// R42's figures from the music's windows around its silence (`silence`: the music-free
    /// windows of the pause): the fade-out's length and largest drop per 1024 frames while
    /// within 40 dB of the level `before`, and the fade-in's length back to within 1 dB.
    static func fades(_ s: Tones.Series, from: Int, silence: ClosedRange<Int>, before: Double)
        -> (outMs: Double?, stepDb: Double?, inMs: Double?) {
        let m = s.music
        let perBlock = 1024 / Tones.hop
        let fadeStart = (from..<silence.lowerBound).first { m[$0] < before - 1 } ?? silence.lowerBound
        let outMs = Double(s.start(silence.lowerBound) - s.start(fadeStart)) / 48
        var step = 0.0
        var j = max(0, fadeStart - perBlock)
        while j + perBlock <= silence.lowerBound {
            if m[j] > before - 40 { step = max(step, m[j] - max(m[j + perBlock], before - 100)) }
            j += 1
        }
        let back = silence.upperBound + 1
        var inMs: Double?
        if back < m.count, let full = (back..<m.count).first(where: { m[$0] >= before - 1 }) {
            inMs = Double(s.start(full) - s.start(back)) / 48
        }
        return (outMs, step, inMs)
    }
}

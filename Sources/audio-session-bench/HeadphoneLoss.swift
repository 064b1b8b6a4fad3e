import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

/// Level of the speaker around the unplug, over trials: per block, median and p10/p90.
struct Envelope: Codable {
    var blockFrames: Int
    /// Block start relative to the unplug command (ms).
    var tMs: [Double]
    var median: [Double]
    var p10: [Double]
    var p90: [Double]

    static func aggregate(_ rows: [[Double]], blockFrames: Int, offsetBlocks: Int) -> Envelope? {
        guard let n = rows.map(\.count).min(), n > 0 else { return nil }
        var med: [Double] = [], lo: [Double] = [], hi: [Double] = []
        for i in 0..<n {
            let col = rows.map { $0[i] }.sorted()
            med.append(percentile(col, 50)); lo.append(percentile(col, 10)); hi.append(percentile(col, 90))
        }
        let t = (0..<n).map { Double(($0 - offsetBlocks) * blockFrames) / 48.0 }
        return Envelope(blockFrames: blockFrames, tMs: t, median: med, p10: lo, p90: hi)
    }
}

struct HeadphoneLossClient: Codable {
    var client: String
    var command: String
    var trials: Int
    var failed: Int
    var errors: [String]
    /// Non-zero samples (both channels) on the speaker per successful trial.
    var leakedSamples: [Int]
    var leaked: Stats
    var zeroLeakTrials: Int
    /// Non-zero samples on the speaker from the recorder's start (after the re-plug) to the unplug,
    /// while the player starts on the headphones: should be none in both systems.
    var startSamples: [Int]
    var trialsWithStartSamples: Int
    /// Trials that leaked and whose player had also reached the speaker while starting.
    var leakTrialsWithStartSamples: Int = 0
    /// From the unplug command to the first non-zero sample on the speaker (trials that leaked).
    var firstSoundMs: Stats
    /// Length of the measured window per trial (ms).
    var windowMs: Stats
    var mediaRole: String?
    var secondsPerTrial: Double
    var envelope: Envelope?
}

/// R30 on the live graph: headphones (a null sink) are removed while a client plays on them;
/// the speaker's monitor is recorded continuously and every trial's window is cut from it.
enum HeadphoneLoss {
    struct Client: Sendable {
        var name: String
        var argv: @Sendable (String) -> [String]
        var environment: [String: String] = [:]
    }

    static let clients: [Client] = [
        Client(name: "pw-play", argv: { ["pw-play", "--media-role", "Music", $0] }),
        Client(name: "paplay", argv: { ["paplay", "--property=media.role=Music", $0] }),
        // ALSA through pipewire-alsa's `pipewire` PCM; the role through PIPEWIRE_PROPS (pw_stream reads it).
        Client(name: "aplay", argv: { ["aplay", "-q", "-D", "pipewire", $0] },
               environment: ["PIPEWIRE_PROPS": "{ media.role=Music }"]),
    ]

    static let envelopeBlock = 256
    static let windowAfterRelink = 0.25
    static let preFrames = 4_800      // 100 ms before the unplug
    static let postFrames = 14_400    // 300 ms after

    static func run(_ sandbox: Sandbox, system: String, trials: Int, settle: Double) -> [HeadphoneLossClient] {
        var out: [HeadphoneLossClient] = []
        let music: String
        do { music = try sandbox.tone(seconds: 30, frequency: 375, name: "hl-music.wav") } catch {
            return clients.map { failedClient($0, trials: trials, error: describe(error)) }
        }
        for client in clients {
            out.append(runClient(sandbox, system: system, client: client, music: music, trials: trials, settle: settle))
        }
        return out
    }

    static func failedClient(_ c: Client, trials: Int, error: String) -> HeadphoneLossClient {
        HeadphoneLossClient(client: c.name, command: c.argv("FILE").joined(separator: " "), trials: trials, failed: trials,
                            errors: [error], leakedSamples: [], leaked: Stats([Int]()), zeroLeakTrials: 0, startSamples: [], trialsWithStartSamples: 0,
                            firstSoundMs: Stats([Double]()), windowMs: Stats([Double]()), mediaRole: nil,
                            secondsPerTrial: 0, envelope: nil)
    }

    static func runClient(_ sandbox: Sandbox, system: String, client: Client, music: String, trials: Int,
                          settle: Double) -> HeadphoneLossClient {
        let started = Date()
        var leaks: [Int] = [], starts: [Int] = [], firstSound: [Double] = [], windows: [Double] = []
        var envelopes: [[Double]] = []
        var errors: [String] = []
        var failed = 0
        var role: String?
        for i in 0..<trials {
            do {
                let r = try trial(sandbox, client: client, music: music, settle: settle)
                leaks.append(r.leaked)
                starts.append(r.startSamples)
                if let f = r.firstSoundMs { firstSound.append(f) }
                windows.append(r.windowMs)
                envelopes.append(r.envelope)
                if role == nil { role = r.role }
            } catch {
                failed += 1
                if errors.count < 5 { errors.append("trial \(i + 1): " + describe(error)) }
                if !sandbox.daemonsAlive { errors.append("a daemon exited; remaining trials skipped"); failed += trials - i - 1; break }
            }
            if (i + 1) % 25 == 0 || i + 1 == trials {
                let z = leaks.filter { $0 == 0 }.count
                progress("  headphone loss \(system) \(client.name): \(i + 1)/\(trials) trials, \(z) without leak, \(failed) failed")
            }
        }
        let env = Envelope.aggregate(envelopes, blockFrames: envelopeBlock, offsetBlocks: preFrames / envelopeBlock)
        return HeadphoneLossClient(
            client: client.name,
            command: (client.environment.map { "\($0.key)='\($0.value)' " }.joined()) + client.argv("music.wav").joined(separator: " "),
            trials: trials, failed: failed, errors: errors, leakedSamples: leaks, leaked: Stats(leaks),
            zeroLeakTrials: leaks.filter { $0 == 0 }.count, startSamples: starts,
            trialsWithStartSamples: starts.filter { $0 > 0 }.count,
            leakTrialsWithStartSamples: zip(leaks, starts).filter { $0.0 > 0 && $0.1 > 0 }.count,
            firstSoundMs: Stats(firstSound), windowMs: Stats(windows),
            mediaRole: role, secondsPerTrial: Date().timeIntervalSince(started) / Double(max(1, trials)), envelope: env)
    }

    struct TrialResult {
        var leaked: Int
        var startSamples: Int
        var firstSoundMs: Double?
        var windowMs: Double
        var envelope: [Double]
        var role: String?
    }

    static func trial(_ sandbox: Sandbox, client: Client, music: String, settle: Double) throws -> TrialResult {
        if try sandbox.nodeID(named: "headphones") == nil {
            try sandbox.addDevice(.headphones)
        }
        try sandbox.waitUntil(timeout: 10, poll: 0.01, "headphones to be the default sink") {
            sandbox.defaultSinkName() == "headphones"
        }
        // A recorder per trial, started once the headphones are back: WirePlumber moves a running
        // recorder of the speaker's monitor to the headphones when they come back (seen in this bench).
        let tape = try Tape(sandbox, sink: "speaker")
        defer { tape.stop(); unlink(tape.path) }
        let startMark = tape.mark
        let (player, node, props) = try sandbox.startPlayer(client.argv(music), environment: client.environment, on: "headphones")
        defer { player.terminate(signal: SIGKILL, timeout: 2) }
        // The player's samples are flowing on the headphones; nothing plays on the speaker.
        if settle > 0 { try tape.waitForMore(seconds: settle) }
        let playMark = tape.mark
        do {
            let d = try sandbox.dump()
            let rec = Graph.nodeID(d, named: "sandbox-recorder-speaker") ?? -1
            let speaker = Graph.nodeID(d, named: "speaker") ?? -2
            let feeds = Graph.links(d).filter { $0.input == rec }
            guard !feeds.isEmpty, feeds.allSatisfy({ $0.output == speaker }) else {
                throw BenchFailure("the recorder is not fed by the speaker alone before the unplug")
            }
        }
        // The unplug: `pw-cli destroy` of the headphones' node; the mark is taken just before it.
        guard let hpID = try sandbox.nodeID(named: "headphones") else { throw BenchFailure("no headphones node") }
        let unplugMark = tape.mark
        let r = try sandbox.run(["pw-cli", "destroy", String(hpID)], timeout: 10)
        guard r.status == 0 else { throw BenchFailure("pw-cli destroy \(hpID): \(r.stderr)") }
        try sandbox.waitUntil(timeout: 10, poll: 0.01, "the headphones to go") { try sandbox.nodeID(named: "headphones") == nil }
        // WirePlumber moves the orphaned stream to the speaker: wait for that link (paused or not).
        try sandbox.waitUntil(timeout: 10, poll: 0.01, "the orphaned stream to be linked to the speaker") {
            let d = try sandbox.dump()
            guard let speaker = Graph.nodeID(d, named: "speaker") else { return false }
            return reachedNodes(d, from: node, activeOnly: false).contains(speaker)
        }
        try tape.waitForMore(seconds: windowAfterRelink)
        let endMark = tape.mark
        // The window starts at the unplug. pw-record's file grows in 8 KiB steps (2048 frames), so
        // what follows the mark may hold up to 2048 frames from before the unplug: the player has
        // played on the headphones for `settle` seconds first, so that is silence on the speaker.
        let unplug = tape.frame(ofMark: unplugMark)
        let a = unplug, b = tape.frame(ofMark: endMark)
        let startSamples = tape.samples(fromFrame: tape.frame(ofMark: startMark), toFrame: unplug).reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
        let s = tape.samples(fromFrame: a, toFrame: b)
        let leaked = s.reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
        if ProcessInfo.processInfo.environment["BENCH_DEBUG"] != nil, leaked > 0 {
            let idx = s.indices.filter { s[$0] != 0 }
            progress("    leak: \(leaked) samples, frames \(a + idx.first! / 2 - unplug)...\(a + idx.last! / 2 - unplug) from the unplug mark, peak \(s.map(abs).max()!); player linked at \(tape.frame(ofMark: playMark) - unplug)")
        }
        var first: Double?
        if let idx = s.firstIndex(where: { $0 != 0 }) { first = Double(a + idx / 2 - unplug) / 48.0 }
        // The envelope: 100 ms before the unplug to 500 ms after (read separately: it may reach
        // past the window's end; the recorder keeps running).
        try tape.waitForMore(seconds: max(0, Double(unplug + postFrames - tape.frame(ofMark: tape.mark)) / 48_000 + 0.01))
        let envSamples = tape.samples(fromFrame: max(0, unplug - preFrames), toFrame: unplug + postFrames)
        var env = rmsLevels(envSamples, frames: envelopeBlock)
        if unplug < preFrames { env = Array(repeating: -100, count: (preFrames - unplug) / envelopeBlock) + env }
        return TrialResult(leaked: leaked, startSamples: startSamples, firstSoundMs: first, windowMs: Double(b - a) / 48.0, envelope: env,
                           role: props["media.role"] as? String)
    }
}

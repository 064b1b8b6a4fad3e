import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

/// One player kind in one loss scenario, over trials.
struct PeerPauseRow: Codable {
    /// "headphones" (the headphones' sink removed) or "bluetooth" (the headset disconnects).
    var scenario: String
    var player: String
    /// How the player takes MPRIS Pause: honours, none (no MPRIS), ignores, never-answers.
    var pauseKind: String
    var command: String
    var trials: Int
    var failed: Int
    var errors: [String]
    /// Non-zero samples (both channels) on the speaker from the loss to the window's end.
    var leakedSamples: [Int]
    var leaked: Stats
    var zeroLeakTrials: Int
    /// From the loss to the first non-zero sample on the speaker (trials that leaked).
    var firstSoundMs: Stats
    /// The player's PlaybackStatus at the window's end, counted over trials (MPRIS players).
    var statusAfter: [String: Int]
    /// MPRIS Pause calls the player received per trial (the fixture players count them).
    var pauseCalls: [Int]
    var windowSeconds: Double
}

/// A headphones sink removed and a Bluetooth headset disconnected while a player plays on it,
/// with four kinds of player: an MPRIS player that honours Pause (mpv with mpv-mpris),
/// programs without MPRIS (pw-play, paplay), an MPRIS player that answers Pause and keeps
/// playing, and one that never answers. Measured on the PipeWire 1.6 generation, where stock
/// WirePlumber 0.5.18 sends MPRIS Pause itself (`linking.pause-playback`); the module's
/// system runs `pw-session agent` as its users would.
enum PeerPause {
    struct Player: Sendable {
        var name: String
        var pauseKind: String
        /// The MPRIS name playerctl knows it by; nil without MPRIS.
        var mpris: String?
        var argv: @Sendable (_ music: String, _ fixture: String, _ mprisPlugin: String) -> [String]
        /// The stream is its child's (the fixture plays with a child pw-play).
        var playsFromChild = false
    }

    static let players: [Player] = [
        Player(name: "mpv (MPRIS, honours Pause)", pauseKind: "honours", mpris: "mpv",
               argv: { m, _, plugin in ["mpv", "--no-config", "--script=\(plugin)", "--no-video", "--ao=pulse",
                                        "--loop=inf", "--no-terminal", m] }),
        Player(name: "pw-play (no MPRIS)", pauseKind: "none", mpris: nil,
               argv: { m, _, _ in ["pw-play", "--media-role", "Music", m] }),
        Player(name: "paplay (no MPRIS)", pauseKind: "none", mpris: nil,
               argv: { m, _, _ in ["paplay", "--property=media.role=Music", m] }),
        Player(name: "MPRIS player that answers Pause and plays on", pauseKind: "ignores", mpris: "ignorer",
               argv: { m, f, _ in ["/usr/bin/python3", f, "--name", "ignorer", "--pause", "ignore", m] }, playsFromChild: true),
        Player(name: "MPRIS player that never answers Pause", pauseKind: "never-answers", mpris: "silent",
               argv: { m, f, _ in ["/usr/bin/python3", f, "--name", "silent", "--pause", "never-answer", m] }, playsFromChild: true),
    ]

    /// Long enough for WirePlumber's wait on a player that never answers (3 s) and its rescan.
    static let windowSeconds = 6.0

    static func run(_ sandbox: Sandbox, system: String, module: Bool, trials: Int, checkout: String) -> [PeerPauseRow] {
        let fixture = checkout + "/Tests/Fixtures/mpris-player.py"
        var rows: [PeerPauseRow] = []
        let setup: (music: String, plugin: String, agent: ChildProcess?)
        do {
            let music = try sandbox.tone(seconds: 60, frequency: 375, name: "peer-music.wav")
            let plugin = try mprisPlugin()
            var agent: ChildProcess?
            if module {
                // The module's users run the agent: it carries the policy's pauses to MPRIS players.
                let a = try sandbox.spawn([pwSessionPath(), "agent"])
                try sandbox.waitUntil(timeout: 15, "pw-session agent to connect") {
                    guard a.isRunning else { throw BenchFailure("pw-session agent exited: \(a.logTail(lines: 5))") }
                    return Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Client").contains {
                        Sandbox.props($0)["audio.session.control.mpris"] != nil
                    }
                }
                agent = a
            }
            setup = (music, plugin, agent)
        } catch {
            return [PeerPauseRow(scenario: "setup", player: "—", pauseKind: "—", command: "", trials: trials, failed: trials,
                                 errors: [describe(error)], leakedSamples: [], leaked: Stats([Int]()), zeroLeakTrials: 0,
                                 firstSoundMs: Stats([Double]()), statusAfter: [:], pauseCalls: [], windowSeconds: windowSeconds)]
        }
        defer { setup.agent?.terminate(signal: SIGTERM, timeout: 5) }
        for scenario in ["headphones", "bluetooth"] {
            for player in players {
                rows.append(runRow(sandbox, system: system, scenario: scenario, player: player, music: setup.music,
                                   fixture: fixture, plugin: setup.plugin, trials: trials))
            }
        }
        return rows
    }

    /// R30 with a Bluetooth headset, many trials: pw-play on the headset, the headset
    /// disconnects (Device1.Connected false, its transport gone), what reaches the speaker
    /// in the 1.5 s after. Not an MPRIS player: what WirePlumber 0.5.18's MPRIS pause cannot
    /// reach.
    static func disconnects(_ sandbox: Sandbox, system: String, trials: Int) -> PeerPauseRow? {
        guard let player = players.first(where: { $0.pauseKind == "none" }) else { return nil }
        do {
            let music = try sandbox.tone(seconds: 60, frequency: 375, name: "bt-music.wav")
            return runRow(sandbox, system: system, scenario: "bluetooth", player: player, music: music, fixture: "", plugin: "",
                          trials: trials, window: 1.5)
        } catch {
            return PeerPauseRow(scenario: "bluetooth", player: player.name, pauseKind: player.pauseKind, command: "", trials: trials,
                                failed: trials, errors: [describe(error)], leakedSamples: [], leaked: Stats([Int]()), zeroLeakTrials: 0,
                                firstSoundMs: Stats([Double]()), statusAfter: [:], pauseCalls: [], windowSeconds: 1.5)
        }
    }

    static func runRow(_ sandbox: Sandbox, system: String, scenario: String, player: Player, music: String,
                       fixture: String, plugin: String, trials: Int, window: Double = windowSeconds) -> PeerPauseRow {
        var leaks: [Int] = [], first: [Double] = [], calls: [Int] = [], errors: [String] = []
        var status: [String: Int] = [:]
        var failed = 0
        for i in 0..<trials {
            do {
                let r = try trial(sandbox, scenario: scenario, player: player, music: music, fixture: fixture, plugin: plugin,
                                  window: window)
                leaks.append(r.leaked)
                if let f = r.firstMs { first.append(f) }
                if let s = r.status { status[s, default: 0] += 1 }
                if let c = r.pauseCalls { calls.append(c) }
            } catch {
                failed += 1
                if errors.count < 5 { errors.append("trial \(i + 1): " + describe(error)) }
                if !sandbox.daemonsAlive { errors.append("a daemon exited; remaining trials skipped"); failed += trials - i - 1; break }
            }
        }
        progress("  peer \(system) \(scenario) \(player.name): \(leaks.filter { $0 == 0 }.count)/\(trials) without leak, "
                 + "median \(Stats(leaks).median.map { String(format: "%.0f", $0) } ?? "—") samples, status \(status), \(failed) failed")
        return PeerPauseRow(scenario: scenario, player: player.name, pauseKind: player.pauseKind,
                            command: player.argv("music.wav", "mpris-player.py", "mpris.so").joined(separator: " "),
                            trials: trials, failed: failed, errors: errors, leakedSamples: leaks, leaked: Stats(leaks),
                            zeroLeakTrials: leaks.filter { $0 == 0 }.count, firstSoundMs: Stats(first),
                            statusAfter: status, pauseCalls: calls, windowSeconds: window)
    }

    struct TrialResult {
        var leaked: Int
        var firstMs: Double?
        var status: String?
        var pauseCalls: Int?
    }

    static func trial(_ sandbox: Sandbox, scenario: String, player: Player, music: String, fixture: String,
                      plugin: String, window windowSeconds: Double) throws -> TrialResult {
        // The private output, made the default as when it is plugged in or connects.
        let sink: String
        if scenario == "headphones" {
            if try sandbox.nodeID(named: "headphones") == nil { try sandbox.addDevice(.headphones) }
            sink = "headphones"
        } else {
            try sandbox.fakeBluez("Connect")
            var name: String?
            try sandbox.waitUntil(timeout: 20, "the headset's bluez_output sink") {
                name = try headsetSink(sandbox)
                return name != nil
            }
            sink = name ?? ""
        }
        try sandbox.waitUntil(timeout: 15, "\(sink) to be the default output") {
            if sandbox.defaultSinkName() != sink { _ = try sandbox.run(["pactl", "set-default-sink", sink], timeout: 10) }
            return sandbox.defaultSinkName() == sink
        }
        let tape = try Tape(sandbox, sink: "speaker")
        defer { tape.stop(); unlink(tape.path) }
        let (process, _, _) = try sandbox.startPlayer(player.argv(music, fixture, plugin), on: sink, timeout: 30,
                                                      streamOwner: player.playsFromChild ? { childOf($0.pid) } : { $0.pid })
        defer { stopPlayer(process) }
        if let name = player.mpris {
            try sandbox.waitUntil(timeout: 15, "\(player.name) to report Playing") { try mprisStatus(sandbox, name) == "Playing" }
        }
        try tape.waitForMore(seconds: 0.2)
        let lossMark = tape.mark
        if scenario == "headphones" {
            guard let id = try sandbox.nodeID(named: "headphones") else { throw BenchFailure("no headphones node") }
            let r = try sandbox.run(["pw-cli", "destroy", String(id)], timeout: 10)
            guard r.status == 0 else { throw BenchFailure("pw-cli destroy \(id): \(r.stderr)") }
        } else {
            try sandbox.fakeBluez("Disconnect", ["device"])
        }
        try sandbox.waitUntil(timeout: 10, poll: 0.01, "\(sink) to go") { try sandbox.nodeID(named: sink) == nil }
        try tape.waitForMore(seconds: max(0, windowSeconds - Double(tape.mark - lossMark) / (48_000 * 4)),
                             timeout: windowSeconds + 10)
        let loss = tape.frame(ofMark: lossMark)
        let s = tape.samples(fromFrame: loss, toFrame: loss + Int(windowSeconds * 48_000))
        let leaked = s.reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
        let firstMs = s.firstIndex { $0 != 0 }.map { Double($0 / 2) / 48.0 }
        let status = try player.mpris.map { try mprisStatus(sandbox, $0) ?? "gone" }
        let calls = player.playsFromChild ? process.logTail(lines: 200).split(separator: "\n").filter { $0 == "Pause" }.count : nil
        return TrialResult(leaked: leaked, firstMs: firstMs, status: status, pauseCalls: calls)
    }

    /// The first child of `pid` (the fixture's pw-play), from /proc.
    static func childOf(_ pid: Int32) -> Int32? {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.flatMap { Int32($0) }
    }

    /// Stops a player and, for the fixture, its child.
    static func stopPlayer(_ p: ChildProcess) {
        let child = childOf(p.pid)
        p.terminate(signal: SIGTERM, timeout: 3)
        if let child { kill(child, SIGKILL) }
    }

    static func mprisStatus(_ sandbox: Sandbox, _ name: String) throws -> String? {
        let r = try sandbox.run(["playerctl", "--player=\(name)", "status"], timeout: 10)
        let s = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return r.status == 0 && !s.isEmpty ? s : nil
    }

    static func headsetSink(_ sandbox: Sandbox) throws -> String? {
        Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Node").compactMap {
            Sandbox.props($0)["node.name"] as? String
        }.first { $0.hasPrefix("bluez_output.") }
    }

    static func mprisPlugin() throws -> String {
        guard let p = SandboxConfig.mpvMPRISPlugin() else {
            throw BenchFailure("the mpv MPRIS plugin is missing: install the Debian package mpv-mpris (make deps)")
        }
        return p
    }

    /// The pw-session next to this program (the release build's).
    static func pwSessionPath() -> String {
        let exe = (CommandLine.arguments.first ?? "") as NSString
        let beside = exe.deletingLastPathComponent + "/pw-session"
        return FileManager.default.isExecutableFile(atPath: beside) ? beside : "pw-session"
    }
}

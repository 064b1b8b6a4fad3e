import Foundation
import HostileClients
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

/// Faults and hostile input: what a client can do to the daemon through the module.
struct FaultsResult: Codable {
    /// Times a client destroyed the policy's metadata object, and whether it came back each time.
    var metadataDestroyed: Int = 0
    var metadataRecreated: Int = 0
    /// Rounds of hostile clients (huge values, many keys, long option lists, rewritten
    /// declarations), each created and then disconnected.
    var rounds: Int = 0
    var clientsPerRound: Int = 0
    /// pipewire's RssAnon after each round, kB.
    var rssAnonKiB: [Int] = []
    /// Hostile clients connected, declared and answered per second (the fixture's own
    /// start-up to its "ready", per round).
    var clientsPerSecond: [Double] = []
    /// pipewire's RssAnon once the rounds are over and WirePlumber and pipewire-pulse have
    /// been stopped too (what the daemon keeps with nobody left but itself), kB: the median
    /// of `rssAnonAloneEachKiB`.
    var rssAnonAloneKiB: Int?
    /// That figure on each daemon the section ran on, in order (each started for it, with
    /// the same rounds): one daemon's figure moves by several MiB from one daemon to the
    /// next, with or without the module.
    var rssAnonAloneEachKiB: [Int] = []
    /// Daemons the section ran on; the per-round figures are the first one's.
    var daemons: Int = 0
    /// pipewire PIDs that changed during the section (a crash and restart): must be 0.
    var crashes: Int = 0
    var error: String?
}

enum Faults {
    /// The policy's metadata object: its global id and its `object.serial` (a recreated
    /// object may get the freed id again, never the same serial).
    static func metadata(_ sandbox: Sandbox) throws -> (id: Int, serial: String)? {
        // pw-dump puts a metadata object's properties at the top level, not under info.
        for o in Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Metadata") {
            let props = o["props"] as? [String: Any] ?? [:]
            guard props["metadata.name"] as? String == "audio-session", let id = o["id"] as? Int else { continue }
            return (id, "\(props["object.serial"] ?? "")")
        }
        return nil
    }

    /// Without the module (`module` false) only the hostile clients come and go: the same
    /// load, for the daemon's memory afterwards.
    static func run(_ sandbox: Sandbox, module: Bool, fixture: String, rounds: Int, perRound: Int) -> FaultsResult {
        var r = FaultsResult()
        guard let pw = sandbox.daemonProcesses.first(where: { $0.name == "pipewire" }) else {
            r.error = "no pipewire daemon"
            return r
        }
        do {
            // A client destroys the policy's metadata three times.
            for _ in 0..<(module ? 3 : 0) {
                guard let old = try metadata(sandbox) else { throw BenchFailure("no audio-session metadata") }
                _ = try sandbox.run(["pw-cli", "destroy", String(old.id)], timeout: 10)
                r.metadataDestroyed += 1
                try sandbox.waitUntil(timeout: 10, "the metadata to come back") {
                    guard let again = try metadata(sandbox) else { return false }
                    return again.serial != old.serial
                }
                r.metadataRecreated += 1
            }
            r.rounds = rounds
            r.clientsPerRound = perRound
            for round in 1...max(rounds, 1) {
                let input = sandbox.directory + "/tmp/fault-\(round).txt"
                try (HostileDeclarations.lines(round: round, count: perRound).joined(separator: "\n") + "\n")
                    .write(toFile: input, atomically: true, encoding: .utf8)
                let start = Date()
                let clients = try sandbox.spawn(["sh", "-c", "exec \(fixture) --rewrite 5 < \(input)"])
                try sandbox.waitUntil(timeout: 120, poll: 0.05, "round \(round) of hostile clients") {
                    guard clients.isRunning else { throw BenchFailure("the fixture exited: \(clients.logTail(lines: 3))") }
                    return clients.logTail(lines: 3).contains("ready")
                }
                let tail = clients.logTail(lines: 3)
                guard tail.contains("failed 0") else { throw BenchFailure("round \(round): the fixture reported failures: \(tail)") }
                r.clientsPerSecond.append(Double(perRound) / max(Date().timeIntervalSince(start), 0.001))
                clients.terminate()
                try sandbox.waitUntil(timeout: 60, poll: 0.2, "round \(round): the clients to be gone") {
                    !Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Client").contains {
                        Sandbox.props($0)["application.name"] as? String == "audio-session-stress-clients"
                    }
                }
                if let kB = Proc.statusKiB(pw.pid, ["RssAnon"])["RssAnon"] { r.rssAnonKiB.append(kB) }
                progress("   faults round \(round): \(perRound) hostile clients, pipewire RssAnon \(r.rssAnonKiB.last ?? -1) kB")
            }
            // Nobody left but the daemon: the session manager and the pulse server go too,
            // with every proxy they held (the sandbox is not used after this section).
            for d in sandbox.daemonProcesses where d.name == "wireplumber" || d.name == "pipewire-pulse" {
                _ = d.terminate(signal: SIGTERM, timeout: 10)
            }
            try sandbox.waitUntil(timeout: 10, poll: 0.2, "the daemon to drop the session manager's clients") {
                !Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Client").contains {
                    let name = Sandbox.props($0)["application.name"] as? String ?? ""
                    return name == "WirePlumber" || name == "pipewire-pulse" || name.hasPrefix("WirePlumber")
                }
            }
            // Settled: three readings 0.5 s apart within 1%.
            var last: [Int] = []
            for _ in 0..<20 {
                if let kB = Proc.statusKiB(pw.pid, ["RssAnon"])["RssAnon"] { last.append(kB) }
                if last.count >= 3, let lo = last.suffix(3).min(), let hi = last.suffix(3).max(), Double(hi - lo) <= 0.01 * Double(hi) { break }
                usleep(500_000)
            }
            r.rssAnonAloneKiB = last.last
            if let kB = last.last { r.rssAnonAloneEachKiB = [kB] }
            progress("   faults: with WirePlumber and pipewire-pulse gone, pipewire RssAnon \(r.rssAnonAloneKiB ?? -1) kB")
        } catch {
            r.error = describe(error)
        }
        r.crashes = pw.isRunning ? 0 : 1
        r.daemons = 1
        return r
    }

    /// The section's result over one more daemon: its memory figure joins the others (the
    /// median is the figure), its crashes and metadata counts add up, its error is kept if
    /// none came before; the per-round figures stay the first daemon's.
    static func adding(_ next: FaultsResult, to first: FaultsResult) -> FaultsResult {
        var r = first
        r.daemons += next.daemons
        r.crashes += next.crashes
        r.metadataDestroyed += next.metadataDestroyed
        r.metadataRecreated += next.metadataRecreated
        r.rssAnonAloneEachKiB += next.rssAnonAloneEachKiB
        r.rssAnonAloneKiB = Stats(r.rssAnonAloneEachKiB).median.map { Int($0.rounded()) }
        if r.error == nil, let e = next.error { r.error = "daemon \(r.daemons): \(e)" }
        return r
    }
}

import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

struct IdleResult: Codable {
    var ok: Bool
    var error: String?
    var rssKiB: Int?
    var rssNoShmemKiB: Int?
    var windowSeconds: Double
    var voluntary: Int?
    var involuntary: Int?
    var threads: Int?
    /// (voluntary + involuntary context switches of all threads) scaled to one minute.
    var wakeupsPerMinute: Double?
    var cpuMsInWindow: Double?
}

struct StreamsResult: Codable {
    var ok: Bool
    var error: String?
    var requested: Int
    var streams: Int?
    /// How many of them ran (linked and started) when memory was sampled: a sink's mixer
    /// takes a limited number of inputs (128 on PipeWire 0.3.65), the rest stay suspended.
    var running: Int?
    /// Medians of the last three of `rssSamplesKiB` / `rssNoShmemSamplesKiB`.
    var rssKiB: Int?
    var rssNoShmemKiB: Int?
    var rssIdleKiB: Int?
    /// VmRSS and RssAnon + RssFile sampled every 0.5 s once every stream is linked, until settled.
    var rssSamplesKiB: [Int]?
    var rssNoShmemSamplesKiB: [Int]?
    var rssSettled: Bool?
}

/// The sandboxes rounds started for themselves (`DaemonCost.startRoundSandbox`) and have not
/// stopped yet: an interrupted bench stops them with the systems' own.
let roundSandboxes = Box<[Sandbox]>([])

/// A cost section's result for one system, which `calmest` may have measured several times.
protocol RepeatedCostSection {
    /// Each round's figure, ms per 1,000 events.
    var roundsMsPerThousand: [Double]? { get }
    /// How many times the section ran (again while the stock daemon's own figures spread
    /// more than a quiet machine's), and the stock figures' spread (third quartile over
    /// first) in each attempt; the attempt kept is the one that spread least.
    var attempts: Int? { get set }
    var stockSpreads: [Double]? { get set }
}

struct CPUResult: Codable, RepeatedCostSection {
    var ok: Bool
    var error: String?
    var events: Int
    var seconds: Double?
    var cpuMs: Double?
    /// The median of the rounds.
    var cpuMsPerThousand: Double?
    var ticks: Int?
    /// Each round's figure: the daemon's CPU per 1,000 events varies between rounds by more
    /// than the module adds, so a section takes several and reports their median.
    var roundsMsPerThousand: [Double]?
    /// The daemon's context switches per 1,000 events, each round's (burst's) in the order of
    /// `roundsMsPerThousand`: whether the module makes the daemon switch more often (wake up,
    /// or be preempted while it works). Nil unless every round has its figure.
    var roundsWakeupsPerThousand: [Double]?
    /// The helper died during the round: its output from the crash on.
    var helperCrashReport: String?
    /// The crash reports of the rounds whose helper died.
    var helperCrashReports: [String]?
    /// Why the other rounds that failed (a sandbox that did not start) ran once more.
    var roundFailures: [String]?
    /// See `RepeatedCostSection`.
    var attempts: Int?
    var stockSpreads: [Double]?
    /// The churn's rounds, paced by playing: per round, the streams made during the churn that
    /// played (linked by the session manager and running) and those that did not within 5 s,
    /// and the session manager's CPU over the churn (ms), which says whether it kept up.
    var roundsPlayed: [Int]?
    var roundsUnplayed: [Int]?
    var roundsSessionManagerMs: [Double]?
    /// A side-by-side round (`DaemonCost.churnCPUPair`) not counted because the other
    /// system's failed.
    var partnerFailed: Bool?
}

/// One client rewriting its own properties as fast as the daemon takes them
/// (`Tests/Fixtures/prop-flood.c`): what each update costs the daemon.
struct PropertyFloodResult: Codable, RepeatedCostSection {
    var ok: Bool
    var error: String?
    /// `activation` (a declared session's activation-request bumped) or `silent` (silent mode flipped).
    var mode: String
    var updates: Int
    var seconds: Double?
    var cpuMs: Double?
    /// The median of the rounds.
    var cpuMsPerThousand: Double?
    var roundsMsPerThousand: [Double]?
    /// See `RepeatedCostSection`.
    var attempts: Int?
    var stockSpreads: [Double]?
}

extension CPUResult {
    /// The progress line: the daemon's CPU per 1,000 events, and the error if any.
    var summary: String {
        "CPU: \(cpuMsPerThousand.map { String(format: "%.1f ms", $0) } ?? "?") per 1,000 stream pause/resume events"
            + (error.map { " (\($0))" } ?? "")
    }
}

extension PropertyFloodResult {
    /// The progress line: the daemon's CPU per 1,000 updates, and the error if any.
    var summary: String {
        "\(mode) property updates: \(cpuMsPerThousand.map { String(format: "%.1f ms", $0) } ?? "?") of daemon CPU per 1,000"
            + (error.map { " (\($0))" } ?? "")
    }
}

struct ChurnResult: Codable {
    var ok: Bool
    var error: String?
    var seconds: Double?
    var live: Int
    var rate: Double
    var created: Int?
    var destroyed: Int?
    var failed: Int?
    var maxLateMs: Double?
    var rssBeforeKiB: Int?
    var rssAfterKiB: Int?
    var rssPeakKiB: Int?
    var cpuMs: Double?
    var cpuMsPerThousandStreamEvents: Double?
    /// `audio-session` metadata updates a listener saw during the churn (the policy's decisions as published).
    var metadataUpdates: Int?
    var metadataUpdatesPerSecond: Double?
    /// Stream creations + destructions per second handled.
    var streamEventsPerSecond: Double?
    /// Lines in the daemon's log (warnings and errors) that report xruns or late clients during the churn.
    var xrunLogLines: Int?
    var xrunSamples: [String]
    /// The churn helper (an AudioSession client) died: what it printed.
    var helperCrashes: [String] = []
    /// For each death, the end of the helper's output from the crash on (the runtime's
    /// backtrace), to find the cause after the sandbox is gone.
    var helperCrashReports: [String] = []
    /// A probe client's round trips to the daemon (a core sync every 5 ms) during the churn:
    /// how long the daemon's main loop kept a client waiting (largest, p99, median, ms).
    var loopRoundTrips: Int?
    /// The module's own warnings that one decision held the daemon's loop longer than a cycle.
    var slowDecisionLogLines: Int?
    var loopLargestMs: Double?
    var loopP99Ms: Double?
    var loopMedianMs: Double?
}

struct NotifyResult: Codable {
    var ok: Bool
    var error: String?
    var method: String
    var beganMs: Stats
    var endedMs: Stats
    var allMs: Stats
    var failed: Int
    var errors: [String]
}

enum DaemonCost {
    /// Waits until every sink is suspended (WirePlumber suspends idle nodes after 5 s) and
    /// no client has a stream. The streams of WirePlumber's own role loopbacks (virtual
    /// nodes, in the peer's sandbox) are part of the graph, not a client's: they are
    /// suspended with the sinks, not gone.
    static func waitSuspended(_ sandbox: Sandbox) throws {
        try sandbox.waitUntil(timeout: 20, poll: 0.5, "the sinks to be suspended") {
            let nodes = Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Node")
            let sinks = nodes.filter { Sandbox.props($0)["media.class"] as? String == "Audio/Sink" }
            let streams = nodes.filter { (Sandbox.props($0)["media.class"] as? String ?? "").hasPrefix("Stream/") }
            let clientStreams = streams.filter { !isVirtual($0) }
            return clientStreams.isEmpty && !sinks.isEmpty
                && (sinks + streams).allSatisfy { Sandbox.state($0) == "suspended" }
        }
    }

    /// Whether a node is one the session manager made (`node.virtual`, a loopback's side).
    static func isVirtual(_ node: [String: Any]) -> Bool {
        let v = Sandbox.props(node)["node.virtual"]
        return v as? Bool == true || v as? String == "true"
    }

    static func idle(_ sandbox: Sandbox, seconds: Double) -> IdleResult {
        var r = IdleResult(ok: false, windowSeconds: seconds)
        do {
            guard let pid = sandbox.pipewirePID else { throw BenchFailure("no pipewire pid") }
            try waitSuspended(sandbox)
            usleep(500_000)
            r.rssKiB = Proc.rssKiB(pid)
            r.rssNoShmemKiB = Proc.rssNoShmemKiB(pid)
            guard let c0 = Proc.contextSwitches(pid), let cpu0 = Proc.cpuNanoseconds(pid) else { throw BenchFailure("cannot read /proc/\(pid)") }
            usleep(useconds_t(seconds * 1_000_000))
            guard let c1 = Proc.contextSwitches(pid), let cpu1 = Proc.cpuNanoseconds(pid) else { throw BenchFailure("cannot read /proc/\(pid)") }
            r.voluntary = c1.voluntary - c0.voluntary
            r.involuntary = c1.involuntary - c0.involuntary
            r.threads = c1.threads
            r.wakeupsPerMinute = Double(r.voluntary! + r.involuntary!) * 60 / seconds
            r.cpuMsInWindow = (cpu1 - cpu0) / 1e6
            r.ok = true
        } catch { r.error = describe(error) }
        return r
    }

    static func streams(_ sandbox: Sandbox, count: Int, idleRSS: Int?) -> StreamsResult {
        var r = StreamsResult(ok: false, requested: count, rssIdleKiB: idleRSS)
        do {
            guard let pid = sandbox.pipewirePID else { throw BenchFailure("no pipewire pid") }
            let h = try sandbox.spawn([selfPath(), "helper", "streams", String(count)])
            defer { h.terminate(signal: SIGKILL, timeout: 3) }
            try waitForHelperLine(sandbox, h, "READY", timeout: 40, "\(count) streams")
            // Wait until WirePlumber has linked what it can and those streams run (the same
            // count for 10 s: WirePlumber 0.4 may link nothing for seconds while it works
            // through a burst): the daemon's memory grows with each stream that starts. The
            // helper counts its streaming streams itself; nothing else asks the daemon.
            var runningSeen: [Int] = []
            try sandbox.waitUntil(timeout: 90, poll: 0.5, "the streams to run") {
                guard h.isRunning else { throw BenchFailure("helper exited: \(h.logTail(lines: 3))") }
                let last = helperOutput(h).split(separator: "\n").last { $0.hasPrefix("STREAMING ") }
                runningSeen.append(last.flatMap { Int($0.dropFirst("STREAMING ".count)) } ?? 0)
                let recent = runningSeen.suffix(20)
                return recent.count == 20 && recent.allSatisfy { $0 > 0 && $0 == recent.first }
            }
            r.running = runningSeen.last
            // Then sample every 0.5 s until four samples in a row lie within 0.5% of each
            // other (at most 20 s), and report the median of the last three.
            var rss: [Int] = [], noShmem: [Int] = []
            func settled(_ v: [Int]) -> Bool {
                guard v.count >= 4, let lo = v.suffix(4).min(), let hi = v.suffix(4).max(), lo > 0 else { return false }
                return Double(hi - lo) / Double(lo) < 0.005
            }
            for _ in 0..<40 {
                usleep(500_000)
                if let v = Proc.rssKiB(pid) { rss.append(v) }
                if let v = Proc.rssNoShmemKiB(pid) { noShmem.append(v) }
                if settled(rss) && settled(noShmem) { break }
            }
            // The streams the helper made (with a node each), as it said when ready.
            r.streams = helperLine(h, "READY").flatMap { Int($0.dropFirst("READY ".count)) }
            r.rssSamplesKiB = rss
            r.rssNoShmemSamplesKiB = noShmem
            r.rssSettled = settled(rss) && settled(noShmem)
            let last = Array(rss.suffix(3)).sorted(), lastNoShmem = Array(noShmem.suffix(3)).sorted()
            r.rssKiB = last.isEmpty ? nil : last[last.count / 2]
            r.rssNoShmemKiB = lastNoShmem.isEmpty ? nil : lastNoShmem[lastNoShmem.count / 2]
            r.ok = true
        } catch { r.error = describe(error) }
        // The streams go with the helper; wait until the graph is back to idle.
        try? sandbox.waitUntil(timeout: 20, poll: 0.2, "the streams to go") { Graph.streamCount(try sandbox.dump()) == 0 }
        return r
    }

    /// `rounds` rounds of `cpuRound`, each with a new helper; the figure is their median.
    static func cpu(_ sandbox: Sandbox, events: Int, rate: Double, rounds: Int) -> CPUResult {
        var all: [CPUResult] = []
        for i in 0..<max(1, rounds) {
            let one = cpuRound(sandbox, events: events, rate: rate, round: i)
            all.append(one)
            guard one.ok else { return one }
        }
        return combine(all, events: events)
    }

    static func combine(_ all: [CPUResult], events: Int) -> CPUResult {
        if let failed = all.first(where: { !$0.ok }) { return failed }
        var r = CPUResult(ok: true, events: events)
        let figures = all.compactMap(\.cpuMsPerThousand)
        r.roundsMsPerThousand = figures
        r.cpuMsPerThousand = Stats(figures).median
        r.cpuMs = r.cpuMsPerThousand.map { $0 * Double(events) / 1000 }
        r.seconds = Stats(all.compactMap(\.seconds)).median
        r.ticks = all.compactMap(\.ticks).reduce(0, +)
        func each<T>(_ key: KeyPath<CPUResult, [T]?>) -> [T]? {
            let lists = all.compactMap { $0[keyPath: key] }
            return lists.count == all.count ? lists.flatMap { $0 } : nil
        }
        r.roundsPlayed = each(\.roundsPlayed)
        r.roundsUnplayed = each(\.roundsUnplayed)
        r.roundsSessionManagerMs = each(\.roundsSessionManagerMs)
        return r
    }

    static func cpuRound(_ sandbox: Sandbox, events: Int, rate: Double, round: Int) -> CPUResult {
        var r = CPUResult(ok: false, events: events)
        let startFile = sandbox.directory + "/tmp/toggle-go-\(round)"
        do {
            guard let pid = sandbox.pipewirePID else { throw BenchFailure("no pipewire pid") }
            let h = try sandbox.spawn([selfPath(), "helper", "toggle", String(events), String(rate), startFile])
            defer { h.terminate(signal: SIGKILL, timeout: 3) }
            let cost = try measurePhase(sandbox, h, daemon: pid, startFile: startFile, what: "the toggles", readyTimeout: 20,
                                        settle: 0.3, doneTimeout: Double(events) / rate + 30)
            r.seconds = helperResult(h)?["seconds"] as? Double
            r.cpuMs = cost.cpuMs
            r.cpuMsPerThousand = cost.cpuMs * 1000 / Double(events)
            r.ticks = cost.ticks
            r.ok = true
        } catch { r.error = describe(error) }
        try? sandbox.waitUntil(timeout: 20, poll: 0.2, "the stream to go") { Graph.streamCount(try sandbox.dump()) == 0 }
        return r
    }

    /// One round of pause/resume bursts on two systems (a module system and the stock one of
    /// its generation), burst by burst in turn: the first system's burst 0, the second's,
    /// then the second's burst 1 before the first's, and so on (ABBA). One helper in each
    /// sandbox plays its stream through all of the round's bursts, so two bursts that pair
    /// up lie a few seconds apart: the machine's load, which drifts over seconds by more than
    /// the module adds to an event, is nearly the same for both. Each system's result lists
    /// its bursts' figures in order (`roundsMsPerThousand`): burst n of one pairs with burst n
    /// of the other.
    static func cpuBurstRound(_ systems: [Sandbox], events: Int, rate: Double, bursts: Int, round: Int) -> [CPUResult] {
        var out = systems.map { _ in CPUResult(ok: false, events: events) }
        var helpers: [(pid: Int32, helper: ChildProcess, start: String)] = []
        var figures = systems.map { _ in [Double]() }
        var wakeups = systems.map { _ in [Double]() }
        do {
            for s in systems {
                guard let pid = s.pipewirePID else { throw BenchFailure("no pipewire pid") }
                let start = s.directory + "/tmp/toggle-burst-\(round)"
                let h = try s.spawn([selfPath(), "helper", "toggle", String(events), String(rate), start, "--bursts", String(bursts)])
                helpers.append((pid, h, start))
            }
            // Both set up before the first burst: neither's setup runs during the other's burst.
            for (s, h) in zip(systems, helpers) {
                try waitForHelperLine(s, h.helper, "READY", timeout: 20, "the toggles to be set up")
            }
            usleep(300_000)
            for n in 0..<bursts {
                for i in (n % 2 == 0 ? Array(systems.indices) : systems.indices.reversed()) {
                    let h = helpers[i]
                    let cost = try measurePhase(systems[i], h.helper, daemon: h.pid, startFile: "\(h.start).\(n)",
                                                what: "burst \(n + 1) of the toggles", readyTimeout: 20,
                                                doneTimeout: Double(events) / rate + 30, done: "DONE \(n)")
                    figures[i].append(cost.cpuMs * 1000 / Double(events))
                    if let w = cost.wakeups { wakeups[i].append(Double(w) * 1000 / Double(events)) }
                }
            }
            for i in systems.indices {
                out[i].ok = true
                out[i].cpuMs = figures[i].reduce(0, +) * Double(events) / 1000
                out[i].roundsMsPerThousand = figures[i]
                out[i].roundsWakeupsPerThousand = wakeups[i].count == figures[i].count ? wakeups[i] : nil
                out[i].cpuMsPerThousand = Stats(figures[i]).median
                out[i].seconds = helperResult(helpers[i].helper)?["seconds"] as? Double
            }
        } catch {
            for i in out.indices { out[i].error = describe(error) }
        }
        // The round's daemons are stopped next (`cpuBurstRoundOnNewDaemons`): nothing waits
        // for the streams to go.
        for h in helpers { h.helper.terminate(signal: SIGKILL, timeout: 3) }
        return out
    }

    /// `cpuBurstRound` on a new daemon of each system (`systems`' options, in the round's
    /// order), started for the round, idle (their sinks suspended) before it begins, and
    /// stopped after it. A daemon's cost per event depends on the daemon: two of the same
    /// system, side by side, can differ by several percent in every round, so each round's
    /// pairs of bursts compare a new pair.
    static func cpuBurstRoundOnNewDaemons(_ systems: [SandboxOptions], events: Int, rate: Double, bursts: Int,
                                          round: Int) -> [CPUResult] {
        var started: [Sandbox] = []
        defer { for s in started { stopRoundSandbox(s) } }
        do {
            for o in systems {
                started.append(try startRoundSandbox(o))
            }
            for s in started { try waitSuspended(s) }
        } catch {
            let e = "new daemons for round \(round + 1): \(describe(error))"
            return systems.map { _ in CPUResult(ok: false, error: e, events: events) }
        }
        return cpuBurstRound(started, events: events, rate: rate, bursts: bursts, round: round)
    }

    /// A sandbox started for one round, which the bench's signal handler stops too until
    /// `stopRoundSandbox` has.
    static func startRoundSandbox(_ options: SandboxOptions) throws -> Sandbox {
        let s = try Sandbox.start(options)
        roundSandboxes.update { $0.append(s) }
        return s
    }

    static func stopRoundSandbox(_ s: Sandbox) {
        s.stop()
        roundSandboxes.update { $0.removeAll { $0 === s } }
    }

    /// The rounds of `cpuBurstRound` of one system as one result: every burst's figure, in
    /// order, and their median; or the first round that failed.
    static func combineBursts(_ all: [CPUResult], events: Int) -> CPUResult {
        if let failed = all.first(where: { !$0.ok }) { return failed }
        var r = CPUResult(ok: true, events: events)
        let figures = all.flatMap { $0.roundsMsPerThousand ?? [] }
        r.roundsMsPerThousand = figures
        let wakeups = all.compactMap(\.roundsWakeupsPerThousand)
        r.roundsWakeupsPerThousand = wakeups.count == all.count ? wakeups.flatMap { $0 } : nil
        r.cpuMsPerThousand = Stats(figures).median
        r.cpuMs = all.compactMap(\.cpuMs).reduce(0, +)
        r.seconds = Stats(all.compactMap(\.seconds)).median
        return r
    }

    /// `updates` property updates of one client (`fixture` in `mode`), the daemon's CPU time
    /// over them. The client waits for the daemon's answer every 100 updates.
    static func propertyFlood(_ sandbox: Sandbox, fixture: String, mode: String, updates: Int, rounds: Int) -> PropertyFloodResult {
        var all: [PropertyFloodResult] = []
        for i in 0..<max(1, rounds) {
            let one = propertyFloodRound(sandbox, fixture: fixture, mode: mode, updates: updates, round: i)
            all.append(one)
            guard one.ok else { return one }
        }
        return combine(all, mode: mode, updates: updates)
    }

    /// The rounds of one flood as one result: their median, or the first round that failed.
    static func combine(_ all: [PropertyFloodResult], mode: String, updates: Int) -> PropertyFloodResult {
        if let failed = all.first(where: { !$0.ok }) { return failed }
        var r = PropertyFloodResult(ok: true, mode: mode, updates: updates)
        let figures = all.compactMap(\.cpuMsPerThousand)
        r.roundsMsPerThousand = figures
        r.cpuMsPerThousand = Stats(figures).median
        r.cpuMs = r.cpuMsPerThousand.map { $0 * Double(updates) / 1000 }
        r.seconds = Stats(all.compactMap(\.seconds)).median
        return r
    }

    static func propertyFloodRound(_ sandbox: Sandbox, fixture: String, mode: String, updates: Int, round: Int) -> PropertyFloodResult {
        var r = PropertyFloodResult(ok: false, mode: mode, updates: updates)
        let startFile = sandbox.directory + "/tmp/flood-go-\(mode)-\(round)"
        do {
            guard let pid = sandbox.pipewirePID else { throw BenchFailure("no pipewire pid") }
            guard FileManager.default.isExecutableFile(atPath: fixture) else { throw BenchFailure("no fixture at \(fixture)") }
            let h = try sandbox.spawn([fixture, mode, String(updates), startFile])
            defer { h.terminate(signal: SIGKILL, timeout: 3) }
            // What the module deferred to its next loop turn or publishing interval is counted too.
            let cost = try measurePhase(sandbox, h, daemon: pid, startFile: startFile, what: "\(updates) property updates",
                                        readyTimeout: 20, settle: 0.3, doneTimeout: 120, after: 0.1)
            r.seconds = helperLine(h, "DONE").flatMap { Double($0.dropFirst(5)) }
            r.cpuMs = cost.cpuMs
            r.cpuMsPerThousand = cost.cpuMs * 1000 / Double(updates)
            r.ok = true
        } catch { r.error = describe(error) }
        return r
    }

    /// The daemon's CPU per 1,000 stream events of one churn of each system (`options`: the
    /// module's, then stock's), each on a daemon started for it and stopped afterwards. Most
    /// of a stream's creation and destruction is PipeWire's own, and how much depends on the
    /// daemon: the pages its allocator hands back after each node's destruction are faulted
    /// in again by the next one, and how many varies from one daemon to the next by far more
    /// than the module adds (20 s of churn on PipeWire 1.6: 2.2 to 3.3 s of CPU on fresh
    /// stock daemons, 2.4 to 3.5 s with the module). So each round has daemons of its own,
    /// and a system's figure is the median of the rounds.
    ///
    /// The two systems churn at the same time, each, when `cpus` names one per system, with
    /// every process of its sandbox on that CPU alone. Rounds one after the other put them
    /// under different moments of the machine: its load drifts over seconds, and the same
    /// daemon's CPU per event went from 1,044 to 1,212 ms per 1,000 between rounds a few
    /// minutes apart, by more than the module adds. Side by side, both churn under the same
    /// moment; the caller swaps their CPUs from round to round, so that neither keeps the
    /// CPU the bench itself runs on.
    ///
    /// The streams are paced by playing (`helper churn --paced-by-playing`): each one plays
    /// before the next is made, so that every stream event of the round is a whole one (made,
    /// linked, running, unlinked, destroyed) in both systems. A churn faster than the session
    /// manager links leaves it to chance how many streams get linked before they go: WirePlumber
    /// 0.4.13 spent a whole CPU on 200 streams replaced 50 times a second, and the links the
    /// daemon made in 15 s of it went from 193 to 748 from one daemon to the next, for the same
    /// 750 streams. The daemon's CPU per event then measured how far the session manager got.
    static func churnCPUPair(options: [SandboxOptions], cpus: [Int]?, seconds: Double, rate: Double, live: Int,
                             round: Int) -> [CPUResult] {
        var results = options.map { _ in CPUResult(ok: false, events: 0) }
        var sandboxes: [Sandbox] = []
        var helpers: [ChildProcess] = []
        defer {
            for h in helpers { h.terminate(signal: SIGKILL, timeout: 3) }
            for s in sandboxes { stopRoundSandbox(s) }
        }
        // The system whose step failed (nil: both, or neither alone).
        var culprit: Int?
        do {
            for (k, o) in options.enumerated() {
                culprit = k
                sandboxes.append(try startRoundSandbox(o))
            }
            var pids: [Int32] = []
            for (k, s) in sandboxes.enumerated() {
                culprit = k
                guard let pid = s.pipewirePID else { throw BenchFailure("no pipewire pid") }
                pids.append(pid)
            }
            var startFiles: [String] = []
            for (k, s) in sandboxes.enumerated() {
                culprit = k
                try waitSuspended(s)
                let startFile = s.directory + "/tmp/churn-cost-go-\(round)-\(k)"
                startFiles.append(startFile)
                helpers.append(try s.spawn([selfPath(), "helper", "churn", String(seconds), String(rate), String(live), startFile,
                                            "--paced-by-playing"]))
            }
            // The first streams play before READY: up to 30 s for a slow session manager.
            for (k, s) in sandboxes.enumerated() {
                culprit = k
                try waitForHelperLine(s, helpers[k], "READY", timeout: 90, "the churn to be set up")
            }
            if let cpus, cpus.count == sandboxes.count {
                for (k, s) in sandboxes.enumerated() { CPUPinning.pin(s.daemonPIDs + [helpers[k].pid], to: cpus[k]) }
            }
            let managers = sandboxes.map(\.sessionManagerPID)
            var c0: [Double] = [], m0: [Double?] = []
            for k in sandboxes.indices {
                culprit = k
                guard let c = Proc.cpuNanoseconds(pids[k]) else { throw BenchFailure("cannot read /proc/\(pids[k])") }
                c0.append(c)
                m0.append(managers[k].flatMap(Proc.cpuNanoseconds))
            }
            culprit = nil
            for f in startFiles {
                guard FileManager.default.createFile(atPath: f, contents: nil) else { throw BenchFailure("cannot make \(f)") }
            }
            // Each daemon's CPU is read as soon as its own churn is done.
            var c1: [Double?] = sandboxes.map { _ in nil }, m1: [Double?] = sandboxes.map { _ in nil }
            let deadline = Date().addingTimeInterval(seconds + 60)
            while c1.contains(where: { $0 == nil }) {
                culprit = nil
                for k in sandboxes.indices where c1[k] == nil {
                    culprit = k
                    if helperLine(helpers[k], "DONE") != nil {
                        c1[k] = Proc.cpuNanoseconds(pids[k])
                        m1[k] = managers[k].flatMap(Proc.cpuNanoseconds)
                        if c1[k] == nil { throw BenchFailure("cannot read /proc/\(pids[k])") }
                    } else if !helpers[k].isRunning {
                        results[k].helperCrashReport = crashReport(helperOutput(helpers[k]))
                        throw BenchFailure("the churn helper exited before the churn was done: \(helpers[k].logTail(lines: 5))")
                    }
                }
                culprit = nil
                guard Date() < deadline else { throw BenchFailure("timed out waiting for the churn") }
                usleep(20_000)
            }
            for k in sandboxes.indices {
                culprit = k
                let res = helperResult(helpers[k]) ?? [:]
                // The streams made before the start are not counted: created counts them.
                let events = (res["created"] as? Int ?? 0) - live + (res["destroyed"] as? Int ?? 0)
                guard events > 0 else { throw BenchFailure("the churn helper reported no stream events") }
                let cpuMs = ((c1[k] ?? c0[k]) - c0[k]) / 1e6
                results[k].events = events
                results[k].seconds = res["seconds"] as? Double
                results[k].cpuMs = cpuMs
                results[k].cpuMsPerThousand = cpuMs * 1000 / Double(events)
                results[k].roundsPlayed = (res["played"] as? Int).map { [$0] }
                results[k].roundsUnplayed = (res["unplayed"] as? Int).map { [$0] }
                results[k].roundsSessionManagerMs = m0[k].flatMap { a in m1[k].map { [($0 - a) / 1e6] } }
                results[k].ok = true
            }
        } catch {
            // Both or neither: a pair is compared only whole.
            for k in results.indices {
                results[k].ok = false
                if let culprit, culprit != k {
                    results[k].partnerFailed = true
                    results[k].error = "the other system's round failed: \(describe(error))"
                } else {
                    results[k].error = describe(error)
                }
            }
        }
        return results
    }

    /// A dead helper's output from its crash on (the runtime's backtrace), at most 200 lines;
    /// its last 80 lines when no crash line is found.
    static func crashReport(_ output: String) -> String {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let from = lines.firstIndex(where: isCrashLine) ?? max(lines.count - 80, 0)
        return lines[from...].prefix(200).joined(separator: "\n")
    }

    /// The line where a helper's crash report begins (the runtime's "crashed", a fatal error).
    static func isCrashLine(_ line: Substring) -> Bool {
        line.contains("crashed") || line.contains("Fatal")
    }

    static let xrunPatterns = ["xrun", "too slow", "not ready", "underrun", "overrun"]
    /// A churn helper silent for this long is stalled (it reports progress every second).
    static let stallSeconds: TimeInterval = 10

    /// The churn: a helper keeps `live` streams, destroying the oldest and creating one `rate` times
    /// a second. Should the helper crash, that is recorded and a new one carries on for the rest.
    static func churn(_ sandbox: Sandbox, seconds: Double, rate: Double, live: Int, probe: String) -> ChurnResult {
        var r = ChurnResult(ok: false, live: live, rate: rate, xrunSamples: [])
        let probeStart = sandbox.directory + "/tmp/churn-go-1", probeStop = sandbox.directory + "/tmp/churn-probe-stop"
        let prober = FileManager.default.isExecutableFile(atPath: probe) ? try? sandbox.spawn([probe, "5", probeStart, probeStop]) : nil
        defer { prober?.terminate(signal: SIGKILL, timeout: 3) }
        let log = sandbox.directory + "/logs/pipewire.log"
        do {
            guard let pid = sandbox.pipewirePID else { throw BenchFailure("no pipewire pid") }
            try waitSuspended(sandbox)
            r.rssBeforeKiB = Proc.rssKiB(pid)
            let monitor = try? sandbox.spawn(["stdbuf", "-oL", "pw-metadata", "-m", "-n", "audio-session"])
            defer { monitor?.terminate(signal: SIGKILL, timeout: 3) }
            func updates() -> Int { monitor.map { helperOutput($0).components(separatedBy: "update:").count - 1 } ?? 0 }
            var created = 0, destroyed = 0, failed = 0, crashes = 0, lateMax = 0.0
            var cpuMs = 0.0, elapsed = 0.0, updateCount = 0
            var peak = 0
            let logStart = Sandbox_fileSize(log)
            var attempt = 0
            while elapsed < seconds - 0.5 && attempt < 5 {
                attempt += 1
                let startFile = sandbox.directory + "/tmp/churn-go-\(attempt)"
                let h = try sandbox.spawn([selfPath(), "helper", "churn", String(seconds - elapsed), String(rate), String(live), startFile])
                defer { h.terminate(signal: SIGKILL, timeout: 3) }
                try waitForHelperLine(sandbox, h, "READY", timeout: 60, "\(live) streams")
                usleep(500_000)
                let u0 = updates()
                guard let c0 = Proc.cpuNanoseconds(pid) else { throw BenchFailure("cannot read /proc/\(pid)") }
                let t0 = Date()
                guard FileManager.default.createFile(atPath: startFile, contents: nil) else { throw BenchFailure("cannot make \(startFile)") }
                var crashed = false, stalled = false
                // A helper that stops making progress (it reports once a second) is
                // stalled: it is killed and counted like a crash, and a new one goes on.
                var progressLines = 0, lastProgress = Date()
                try sandbox.waitUntil(timeout: seconds + 60, poll: 0.25, "the churn") {
                    peak = max(peak, Proc.rssKiB(pid) ?? 0)
                    if !h.isRunning { crashed = true; return true }
                    let out = helperOutput(h)
                    if helperLine(h, "DONE") != nil { return true }
                    let n = out.components(separatedBy: "PROGRESS ").count
                    if n != progressLines {
                        progressLines = n
                        lastProgress = Date()
                    } else if Date().timeIntervalSince(lastProgress) > stallSeconds {
                        stalled = true
                        crashed = true
                        return true
                    }
                    return false
                }
                let c1 = Proc.cpuNanoseconds(pid) ?? c0
                cpuMs += (c1 - c0) / 1e6
                updateCount += updates() - u0
                if crashed {
                    crashes += 1
                    let out = helperOutput(h)
                    let last = out.split(separator: "\n").last { $0.hasPrefix("PROGRESS ") }?.split(separator: " ")
                    created += Int(last?[1] ?? "") ?? 0
                    destroyed += Int(last?[2] ?? "") ?? 0
                    elapsed += Date().timeIntervalSince(t0)
                    let why = stalled
                        ? "stalled: no progress for \(Int(stallSeconds)) s"
                        : out.split(separator: "\n").first(where: isCrashLine).map(String.init) ?? "exit status \(h.exitStatus ?? -1)"
                    if stalled { h.terminate(signal: SIGKILL, timeout: 3) }
                    r.helperCrashes.append(String(why.prefix(200)))
                    r.helperCrashReports.append(crashReport(out))
                    progress("   churn helper died after \(String(format: "%.1f", elapsed)) s (\(why)); continuing with a new one")
                    // Its streams go with its connection.
                    try? sandbox.waitUntil(timeout: 30, poll: 0.2, "the streams to go") { Graph.streamCount(try sandbox.dump()) == 0 }
                } else {
                    let res = helperResult(h) ?? [:]
                    created += res["created"] as? Int ?? 0
                    destroyed += res["destroyed"] as? Int ?? 0
                    failed += res["failed"] as? Int ?? 0
                    lateMax = max(lateMax, res["maxLateMs"] as? Double ?? 0)
                    elapsed += res["seconds"] as? Double ?? Date().timeIntervalSince(t0)
                    h.terminate(signal: SIGKILL, timeout: 3)
                }
            }
            // A probe that finds no stop file runs until it is killed below and leaves no figures.
            if !FileManager.default.createFile(atPath: probeStop, contents: nil) { progress("   cannot make \(probeStop): the loop probe is stopped without its figures") }
            if let p = prober {
                try? sandbox.waitUntil(timeout: 15, poll: 0.05, "the loop probe's figures") { helperLine(p, "DONE") != nil || !p.isRunning }
                if let line = helperLine(p, "DONE") {
                    let f = line.split(separator: " ").dropFirst().map { Double($0) }
                    if f.count == 4 {
                        r.loopRoundTrips = f[0].map { Int($0) }
                        r.loopLargestMs = f[1]
                        r.loopP99Ms = f[2]
                        r.loopMedianMs = f[3]
                    }
                }
            }
            r.seconds = elapsed
            r.created = created
            r.destroyed = destroyed
            r.failed = failed
            r.maxLateMs = lateMax
            r.rssPeakKiB = peak
            r.cpuMs = cpuMs
            // Creations and destructions during the timed churn (the initial `live` ones are set-up).
            let events = Double(max(0, created - live * attempt) + max(0, destroyed - live * (attempt - crashes)))
            if events > 0 { r.cpuMsPerThousandStreamEvents = cpuMs * 1000 / events }
            if elapsed > 0 {
                r.streamEventsPerSecond = events / elapsed
                if let m = monitor, m.isRunning {
                    r.metadataUpdates = updateCount
                    r.metadataUpdatesPerSecond = Double(updateCount) / elapsed
                }
            }
            let logText = Sandbox_read(log, from: logStart)
            let lines = logText.split(separator: "\n").filter { l in xrunPatterns.contains { l.lowercased().contains($0) } }
            r.xrunLogLines = lines.count
            r.slowDecisionLogLines = logText.split(separator: "\n").filter { $0.contains("held the daemon's loop") }.count
            r.xrunSamples = lines.prefix(3).map { String($0.prefix(200)) }
            try? sandbox.waitUntil(timeout: 30, poll: 0.2, "the streams to go") { Graph.streamCount(try sandbox.dump()) == 0 }
            try? waitSuspended(sandbox)
            r.rssAfterKiB = Proc.rssKiB(pid)
            r.ok = created > 0
        } catch { r.error = describe(error) }
        return r
    }

    static func notify(_ sandbox: Sandbox, trials: Int, module: Bool) -> NotifyResult {
        let method = "AudioSession library (Sources/AudioSession): observer callback of session A; clock from just before session B's setActive"
        var r = NotifyResult(ok: false, method: method, beganMs: Stats([Double]()), endedMs: Stats([Double]()),
                             allMs: Stats([Double]()), failed: 0, errors: [])
        do {
            let h = try sandbox.spawn([selfPath(), "helper", "notify", String(trials), module ? "5" : "2"])
            defer { h.terminate(signal: SIGKILL, timeout: 3) }
            try sandbox.waitUntil(timeout: Double(trials) * 2 + 30, poll: 0.05, "the notification helper") { !h.isRunning }
            guard let res = helperResult(h) else { throw BenchFailure("no result from the helper: \(h.logTail(lines: 5))") }
            if let e = res["error"] as? String { throw BenchFailure(e) }
            let began = res["beganMs"] as? [Double] ?? [], ended = res["endedMs"] as? [Double] ?? []
            r.beganMs = Stats(began)
            r.endedMs = Stats(ended)
            r.allMs = Stats(began + ended)
            r.failed = res["failed"] as? Int ?? 0
            r.errors = res["errors"] as? [String] ?? []
            r.ok = !began.isEmpty
        } catch { r.error = describe(error) }
        return r
    }
}

func Sandbox_fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
}

func Sandbox_read(_ path: String, from offset: Int) -> String {
    guard let h = FileHandle(forReadingAtPath: path) else { return "" }
    defer { try? h.close() }
    do { try h.seek(toOffset: UInt64(offset)) } catch { return "" }
    return String(decoding: h.readDataToEndOfFile(), as: UTF8.self)
}

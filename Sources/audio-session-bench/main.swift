// make bench: the audio-session module against stock PipeWire 0.3.65 + WirePlumber 0.4.13,
// and on PipeWire 1.4 + WirePlumber 0.5 against its stock policy, measured in private
// headless sandboxes on this machine, with real programs.
//
// Systems: `module` and `baseline` (stock) run the system's PipeWire; `module-pw1.4` and
// `baseline-pw1.4` the PipeWire tree given with --pw14-prefix (scripts/pipewire-tree.sh),
// the module from --pw14-module-dir (built against that tree's headers); `peer-pw1.4` is
// WirePlumber 0.5's own role-based policy on that tree.
//
// Usage: audio-session-bench --help (BenchOptions.swift).
// Writes DIR/results.json (default bench-out/). scripts/bench.sh runs it, then
// scripts/plot.py turns the JSON into BENCHMARKS.md and docs/bench/*.png.
//
// `audio-session-bench helper ...` is this program run inside a sandbox (Helpers.swift).
import ArgumentParser
import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "helper" {
    let helper: ParsableCommand
    do { helper = try HelperOptions.parseAsRoot(Array(CommandLine.arguments.dropFirst(2))) } catch {
        HelperOptions.exit(withError: error)
    }
    exit(await Helper.run(helper))
}

// MARK: Options

let options = BenchOptions.parseOrExit()
let quick = options.quick
let outDir = options.out
let sections = Set(options.only.split(separator: ",").map(String.init))
let faultRounds = options.pick(options.faultRounds, 5, 2)
let faultClients = options.pick(options.faultClients, 200, 50)
let faultDaemons = max(1, options.pick(options.faultDaemons, 5, 1))
let pw14Prefix = options.pw14Prefix ?? ProcessInfo.processInfo.environment["AUDIO_SESSION_PIPEWIRE_PREFIX"]
let pw14ModuleDir = options.pw14ModuleDir
/// This checkout (the fake BlueZ and the fixture players): the working directory, as make bench runs it.
let checkout = FileManager.default.currentDirectoryPath
let pw16Prefix = options.pw16Prefix
let pw16ModuleDir = options.pw16ModuleDir
let systems = (options.systems ?? ("module,baseline" + (pw14Prefix == nil ? "" : ",module-pw1.4,baseline-pw1.4,peer-pw1.4")
                                   + (pw16Prefix == nil ? "" : ",module-pw1.6,baseline-pw1.6")))
    .split(separator: ",").map(String.init)
let peerTrials = options.pick(options.peerTrials, 5, 2)
let bluetoothTrials = options.pick(options.bluetoothTrials, 100, 5)
let hlTrials = options.pick(options.hlTrials, 100, 5)
let hlSettle = options.pick(options.hlSettle, 0.1, 0.1)
let duckTrials = options.pick(options.duckTrials, 10, 2)
let baselineDuckTrials = options.pick(options.baselineDuckTrials, 5, 2)
let interruptTrials = options.pick(options.interruptTrials, 10, 2)
let baselineInterruptTrials = options.pick(options.baselineInterruptTrials, 5, 2)
let notifyTrials = options.pick(options.notifyTrials, 200, 20)
let idleSeconds = options.pick(options.idleSeconds, 20, 5)
let streamCount = options.pick(options.streams, 200, 50)
let toggleEvents = options.pick(options.toggleEvents, 2000, 400)
let toggleRate = options.pick(options.toggleRate, 200, 200)
/// Rounds of the pause/resume toggles; their median is the figure.
// The daemon's CPU over one round of toggles varies by about 10% from round to round on a
// shared machine: 11 rounds keep the median's own error well inside the 10% it is judged by.
let costRounds = options.pick(nil, 11, 2)
/// Where a module system and its stock system are measured together (phase 1b), the toggles
/// run in bursts, the two systems' bursts in turn: this many rounds (new daemons and a new
/// helper each) of this many bursts of this many events per system.
// A pair of 10 s rounds lies 10 to 20 s apart, and the machine's load moves over that time
// by more than the module adds: on a noisy day the ratios of 11 such pairs (PipeWire 0.3.65)
// ranged 0.99 to 1.56, their middle half 1.05 to 1.24. Bursts of 2.5 s pair up 2.5 s apart;
// 40 pairs of them the same day had their middle half within 1.06 to 1.15. The daemons
// themselves differ too: two PipeWire 1.6 daemons side by side, whose modules differed only in
// how a stream's start updated one record, cost 638-651 and 600-606 ms per 1,000 toggles in
// the same four rounds, the difference outside the module's own code (whose samples were
// about the same in both); and with a new pair of daemons for each of six rounds (PipeWire
// 0.3.65, 2026-11-29), the pairs' own medians ranged 1.03 to 1.20. Each round therefore
// starts a new pair of daemons: the median is over ten pairs of daemons, not one. Stock
// against stock (PipeWire 1.4, 2026-12-02), six such rounds gave a median of 1.011, the
// rounds' own medians 0.975 to 1.039: the method adds no bias of its own, but six pairs
// left the module's median 1.046 to 1.114 from one full run to the next; ten narrow it by
// about a quarter, for about two more minutes per generation.
let burstRounds = options.pick(nil, 10, 1)
let burstsPerRound = options.pick(nil, 6, 4)
let burstEvents = options.pick(options.toggleEvents.map { max(2, $0 / 4) }, 500, 100)
// A flood round takes a fraction of a second, so its figure carries more of the machine's
// noise than a 10 s round of toggles: more rounds of it, at little cost in time. With 21,
// the middle half of the silent-mode pairs on 0.3.65 still spanned 1.02 to 1.32 (2026-12-04).
let floodRounds = options.pick(nil, 41, 2)
let floodActivationUpdates = options.pick(options.floodActivationUpdates, 20_000, 2_000)
let floodSilentUpdates = options.pick(options.floodSilentUpdates, 20_000, 2_000)
let churnSeconds = options.pick(options.churnSeconds, 60, 10)
/// The churn's CPU per event: this many rounds per system, each on a fresh daemon, this long.
/// A fresh daemon's cost for the same churn varies by a fifth or more (its heap: section 7 of
/// the report), and so does a pair's ratio: seven pairs on PipeWire 1.6 (2026-12-02) ranged
/// 1.03 to 1.19, and the median of seven such pairs was 1.072 to 1.133 from one run to the
/// next. The two systems of a pair churn side by side (`DaemonCost.churnCPUPair`), so a pair
/// takes the time of one round: twenty-one of them in about the time eleven took in turn.
let churnCostRounds = options.pick(nil, 21, 1)
let churnCostSeconds = options.pick(nil, 15.0, 5.0)
/// The churn's rounds keep fewer streams than section 7's churn, and make them at most this
/// fast, each one after the last plays (`DaemonCost.churnCPUPair`): a session manager that
/// falls behind decides how much work the daemon does, and a system that makes fewer streams
/// in a round's time is charged more of the mixing (every live stream plays) per event. On
/// one CPU (`CPUPinning`), WirePlumber 0.5.18 spent 17 s of CPU on 20 s of 50 streams replaced
/// ten times a second, and WirePlumber 0.5.8 let 50 streams at twenty a second fall behind
/// (936 streams made in eleven rounds with the module, 1,002 without); with 20 streams
/// replaced ten times a second both made all 150 streams of a 15 s round on time, WirePlumber
/// 0.5.18 busy 73% of it (2026-12-03). PipeWire 0.3.65's mixer takes 128 inputs at most.
let churnCostLive = options.pick(options.churnCostLive, 20, 20)
let churnCostRate = options.pick(options.churnCostRate, 10, 10)
/// The cost sections run on one CPU (`CPUPinning`), unless told otherwise.
let costOnOneCPU = !options.allCPUs
let churnRate = options.pick(options.churnRate, 50, 50)
let churnLive = options.pick(options.churnLive, 200, 50)
/// A cost section's figures are kept when the stock system's spread is at most this. On a
/// quiet machine it is 1.12 to 1.37 (pause/resume bursts, 2026-11-29 to 2026-12-01); in a
/// run whose bursts both systems took three to seven times as long for minutes, 3.97.
let calmSpread = options.calmSpread ?? 1.5
/// At most this many attempts of a cost section: the calmest one (lowest stock spread) is kept.
let costAttempts = options.pick(options.costAttempts, 3, 1)

/// Where the client fixtures (built by meson with the module) are: beside the sandbox's
/// module when they were built there, else in the system build (clients speak every
/// generation's protocol).
func fixtureDirectory(_ s: Sandbox) -> String {
    if let m = s.modulePath {
        let dir = (m as NSString).deletingLastPathComponent
        if FileManager.default.isExecutableFile(atPath: dir + "/audio-session-prop-flood") { return dir }
    }
    return checkout + "/build/meson"
}

// MARK: Results

struct SystemResult: Codable {
    var system: String
    var description: String
    var sandboxStartSeconds: Double?
    var sandboxError: String?
    var daemonRestarts: Int = 0
    var idle: IdleResult?
    var headphoneLoss: [HeadphoneLossClient]?
    var duck: DuckResult?
    var interrupt: InterruptResult?
    var notify: NotifyResult?
    var streams: StreamsResult?
    var cpu: CPUResult?
    /// One client's property updates: activation requests, then silent-mode flips.
    var propertyFloods: [PropertyFloodResult]?
    var churn: ChurnResult?
    /// The daemon's CPU per 1,000 stream events of the churn, each round on a daemon of its
    /// own, side by side with the stock system of the generation (`DaemonCost.churnCPUPair`).
    var churnCost: CPUResult?
    var faults: FaultsResult?
    /// Where the daemon's time goes (`perf`), the module system on the system's PipeWire.
    var profile: ProfileResult?
    var peerPause: [PeerPauseRow]?
    /// A Bluetooth headset disconnecting under pw-play, many trials (the -pw1.6 systems).
    var bluetoothLoss: PeerPauseRow?
    var seconds: Double = 0
}

struct Parameters: Codable {
    var hlTrials: Int, hlSettle: Double, duckTrials: Int, baselineDuckTrials: Int, interruptTrials: Int, baselineInterruptTrials: Int
    var notifyTrials: Int, idleSeconds: Double, streams: Int, toggleEvents: Int, toggleRate: Double
    var churnSeconds: Double, churnRate: Double, churnLive: Int, quick: Bool
    var peerTrials: Int?
    var bluetoothTrials: Int?
    /// The sections that compare the daemon's CPU ran with nothing else running (SectionGate).
    var costSectionsAlone: Bool?
    /// Rounds of the pause/resume toggles (the figure is their median).
    var costRounds: Int?
    /// Paired systems' toggles: rounds, bursts per round and events per burst (`cpuBurstRound`).
    var burstRounds: Int?
    var burstsPerRound: Int?
    var burstEvents: Int?
    /// Each round of bursts ran on a new pair of daemons (`cpuBurstRoundOnNewDaemons`).
    var burstDaemonsPerRound: Bool?
    /// Rounds of each property flood (the figure is their median).
    var floodRounds: Int?
    /// Module and stock rounds of the CPU sections alternate (phase 1b).
    var costInterleaved: Bool?
    /// The churn's CPU per event: rounds per system, each on a daemon of its own, and their length.
    var churnCostRounds: Int?
    var churnCostSeconds: Double?
    /// The churn's rounds: streams alive at once, and the most made per second (each made
    /// after the last one plays).
    var churnCostLive: Int?
    var churnCostRate: Double?
    /// The cost sections (pause/resume, the churn's rounds, the property floods) ran every
    /// process of theirs on this one CPU (`CPUPinning`); nil: on all of them.
    var costCPU: Int?
    /// The churn's rounds ran the two systems side by side (`DaemonCost.churnCPUPair`), each
    /// on one of these CPUs, swapped every round (nil: side by side on every CPU).
    var churnCostSideBySide: Bool?
    var churnCostCPUs: [Int]?
    /// A cost section ran again while the stock figures' third quartile over their first was
    /// above `calmSpread`, at most `costAttempts` times (`calmest`).
    var calmSpread: Double?
    var costAttempts: Int?
}

struct Results: Codable {
    var machine: Machine
    var parameters: Parameters
    var systems: [SystemResult]
    var totalSeconds: Double = 0
    var modulePath: String?
}

var results = Results(
    machine: Machine.collect(command: options.command),
    parameters: Parameters(hlTrials: hlTrials, hlSettle: hlSettle, duckTrials: duckTrials, baselineDuckTrials: baselineDuckTrials,
                           interruptTrials: interruptTrials, baselineInterruptTrials: baselineInterruptTrials,
                           notifyTrials: notifyTrials, idleSeconds: idleSeconds, streams: streamCount,
                           toggleEvents: toggleEvents, toggleRate: toggleRate, churnSeconds: churnSeconds,
                           churnRate: churnRate, churnLive: churnLive, quick: quick, peerTrials: peerTrials,
                           bluetoothTrials: bluetoothTrials, costSectionsAlone: true, costRounds: costRounds,
                           burstRounds: burstRounds, burstsPerRound: burstsPerRound, burstEvents: burstEvents,
                           burstDaemonsPerRound: true, floodRounds: floodRounds, costInterleaved: true,
                           churnCostRounds: churnCostRounds, churnCostSeconds: churnCostSeconds,
                           churnCostLive: churnCostLive, churnCostRate: churnCostRate,
                           costCPU: costOnOneCPU ? CPUPinning.target() : nil,
                           churnCostSideBySide: true, churnCostCPUs: costOnOneCPU ? CPUPinning.sideBySide() : nil,
                           calmSpread: calmSpread, costAttempts: costAttempts),
    systems: [])

try? FileManager.default.createDirectory(atPath: outDir, withIntermediateDirectories: true)

@MainActor func save() {
    let enc = JSONEncoder()
    enc.outputFormatting = [.prettyPrinted, .sortedKeys]
    enc.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    do {
        try enc.encode(results).write(to: URL(fileURLWithPath: outDir + "/results.json"))
    } catch {
        progress("cannot write \(outDir)/results.json: \(error)")
    }
}

// MARK: Run

/// Results of one system, filled by sections that may run on other threads.
final class Box<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func update(_ f: (inout T) -> Void) { lock.lock(); f(&value); lock.unlock() }
    var get: T { lock.lock(); defer { lock.unlock() }; return value }
}

/// One system's sandbox; restarted when a daemon died (recorded: a crash is a finding).
final class Runner: @unchecked Sendable {
    let system: String
    let module: Bool
    let options: SandboxOptions
    var sandbox: Sandbox?
    let result: Box<SystemResult>
    let started = Date()

    init(system: String) {
        self.system = system
        module = system.hasPrefix("module")
        let onTree = system.hasSuffix("-pw1.4")
        var description = module ? "PipeWire 0.3.65 + WirePlumber 0.4.13 + libpipewire-module-audio-session" :
            "stock PipeWire 0.3.65 + WirePlumber 0.4.13 (sandbox --no-module)"
        var options = SandboxOptions(loadModule: module, pipewire: .system)
        // Every system's sandbox starts at the same time, seven sets of daemons on a machine
        // that may have two cores: a deadline meant for one sandbox alone is too short here
        // (WirePlumber 0.5.18 once took longer than 20 s to publish its metadata).
        options.startupTimeout = 90
        var setupError: String?
        if onTree {
            description = module ? "PipeWire 1.4 + WirePlumber 0.5 + libpipewire-module-audio-session" :
                "stock PipeWire 1.4 + WirePlumber 0.5 (sandbox --no-module)"
            if system.hasPrefix("peer") {
                // WirePlumber 0.5's own role-based policy as its documentation shows it: a
                // loopback sink per media role, WirePlumber's duck level 0.3, no module.
                description = "PipeWire 1.4 + WirePlumber 0.5 with its role-based policy (role loopbacks, duck level 0.3), no module"
                options.roleLoopbacks = true
                options.roleDuckLevel = 0.3
            }
            if let prefix = pw14Prefix {
                do { options.pipewire = try PipeWireInstall(prefix: prefix) } catch { setupError = "\(error)" }
            } else {
                setupError = "no PipeWire 1.4 tree: pass --pw14-prefix (scripts/pipewire-tree.sh makes one)"
            }
            if module {
                if let dir = pw14ModuleDir { options.moduleDirectory = dir } else {
                    setupError = setupError ?? "no module built against PipeWire 1.4: pass --pw14-module-dir"
                }
            }
        }
        if system.hasSuffix("-pw1.6") {
            // Stock WirePlumber 0.5.18 as shipped: its MPRIS pause (linking.pause-playback) is on.
            description = module ? "PipeWire 1.6 + WirePlumber 0.5.18 + libpipewire-module-audio-session (and pw-session agent in the peer section)" :
                "stock PipeWire 1.6 + WirePlumber 0.5.18 with its MPRIS pause on (sandbox --no-module)"
            // The peer section's headset: the fake BlueZ on the sandbox's system bus.
            options.bluetooth = true
            options.fakeBluez = checkout + "/data/fake-bluez.py"
            if let prefix = pw16Prefix {
                do { options.pipewire = try PipeWireInstall(prefix: prefix) } catch { setupError = "\(error)" }
            } else {
                setupError = "no PipeWire 1.6 root: pass --pw16-prefix (scripts/pipewire-rootfs.sh makes one)"
            }
            if module {
                if let dir = pw16ModuleDir { options.moduleDirectory = dir } else {
                    setupError = setupError ?? "no module built against PipeWire 1.6: pass --pw16-module-dir"
                }
            }
        }
        self.options = options
        result = Box(SystemResult(system: system, description: description, sandboxError: setupError))
    }

    func start() {
        let t0 = Date()
        progress("== \(system): starting the sandbox")
        if let e = result.get.sandboxError {
            progress("   \(system): not run: \(e)")
            return
        }
        do {
            do {
                sandbox = try Sandbox.start(options)
            } catch {
                // One more try: a system that fails to start leaves its columns empty for
                // the whole run. A second failure is reported as the sandbox's error.
                progress("   \(system): sandbox failed to start (\(describe(error))); trying once more")
                sandbox = try Sandbox.start(options)
            }
            let dt = Date().timeIntervalSince(t0)
            // The first start's (a sandbox started again for a section keeps it).
            result.update { $0.sandboxStartSeconds = $0.sandboxStartSeconds ?? dt }
        } catch {
            let e = describe(error)
            result.update { $0.sandboxError = e }
            progress("   \(system): sandbox failed: \(e)")
        }
    }

    /// The sandbox, restarted if a daemon exited.
    func alive() -> Sandbox? {
        guard let s = sandbox else { return nil }
        if s.daemonsAlive { return s }
        let dead = s.daemonProcesses.filter { !$0.isRunning }.map { "\($0.name) (status \($0.exitStatus ?? -1))" }
        progress("   \(system): a daemon exited: \(dead.joined(separator: ", ")); restarting the sandbox")
        result.update { $0.daemonRestarts += 1 }
        s.stop()
        sandbox = try? Sandbox.start(options)
        return sandbox
    }

    func section(_ name: String, _ body: (Sandbox, inout SystemResult) -> Void) {
        guard sections.contains(name), let s = alive() else { return }
        // The daemon's CPU per event is compared across systems: those sections run with
        // nothing else measuring at the same time, one system after the other.
        let alone = SectionGate.aloneSections.contains(name)
        SectionGate.shared.enter(alone: alone)
        defer { SectionGate.shared.leave(alone: alone) }
        let s0 = Date()
        progress("-- \(system): \(name)")
        var r = result.get
        body(s, &r)
        let final = r
        result.update { $0 = final }
        progress(String(format: "   %@ %@ done in %.1f s", system, name, Date().timeIntervalSince(s0)))
    }

    func stop() {
        sandbox?.stop()
        sandbox = nil
        let dt = Date().timeIntervalSince(started)
        result.update { $0.seconds = dt }
    }
}

/// Sections of all systems run side by side, but a section measuring the daemon's CPU runs
/// alone: it waits until the running sections end, and the others wait for it (it goes
/// ahead of sections that have not started yet).
final class SectionGate: @unchecked Sendable {
    static let shared = SectionGate()
    static let aloneSections: Set<String> = ["cpu", "props", "churn", "profile"]
    private let condition = NSCondition()
    private var running = 0
    private var aloneRunning = false
    private var aloneWaiting = 0

    func enter(alone: Bool) {
        condition.lock()
        defer { condition.unlock() }
        if alone {
            aloneWaiting += 1
            while aloneRunning || running > 0 { condition.wait() }
            aloneWaiting -= 1
            aloneRunning = true
        } else {
            while aloneRunning || aloneWaiting > 0 { condition.wait() }
            running += 1
        }
    }

    func leave(alone: Bool) {
        condition.lock()
        if alone { aloneRunning = false } else { running -= 1 }
        condition.broadcast()
        condition.unlock()
    }
}

let runners = systems.map { Runner(system: $0) }
let allRunners = runners
for sig in [SIGINT, SIGTERM] {
    signal(sig) { s in
        // Best effort: the daemons are in their own process groups.
        for r in allRunners { r.sandbox?.stop() }
        for sandbox in roundSandboxes.get { sandbox.stop() }
        _exit(128 + s)
    }
}

@MainActor func collect() {
    results.systems = runners.map { $0.result.get }
    save()
}

/// Runs `body` for every runner at once (sections that only wait on the graph).
func concurrently(_ body: @escaping @Sendable (Runner) -> Void) {
    let group = DispatchGroup()
    for r in runners {
        DispatchQueue.global().async(group: group) { body(r) }
    }
    group.wait()
}

progress("audio-session-bench: \(results.machine.cpuModel), \(results.machine.nproc) cores, load \(results.machine.loadAverageStart)")
progress("sections: \(sections.sorted().joined(separator: ",")); systems: \(systems.joined(separator: ","))" + (quick ? " (quick)" : ""))

// Phase 1, every sandbox up at once: start, idle cost (each daemon's own counters), memory with
// many streams (one system after the other), headphone loss (each trial waits on its own
// graph; the systems' trials run side by side).
concurrently { r in r.start() }
if let m = runners.first(where: { $0.system == "module" })?.sandbox { results.modulePath = m.modulePath }
concurrently { r in
    r.section("idle") { s, res in
        res.idle = DaemonCost.idle(s, seconds: idleSeconds)
        if let i = res.idle {
            progress("   \(r.system) pipewire idle: RSS \(i.rssKiB.map(String.init) ?? "?") KiB, \(i.wakeupsPerMinute.map { String(format: "%.1f", $0) } ?? "?") wake-ups/min" + (i.error.map { " (\($0))" } ?? ""))
        }
    }
}
collect()
// The daemon's memory with many streams, one system at a time, while every daemon has the
// same history behind it (started, then idle): measured later, the module's daemon would
// carry the heap of sections it runs more trials of (notify, duck, interrupt) or, the first
// system, of every section before (its sandbox is kept for phase 2). Once per daemon: the
// same 200 streams made again on the same daemon take far more (PipeWire 1.6's RssAnon
// 41, 148, then 567 MB in three rounds, with the module or without), so a second round
// would measure that growth rather than what the module adds.
for r in runners {
    r.section("streams") { s, res in
        res.streams = DaemonCost.streams(s, count: streamCount, idleRSS: res.idle?.rssKiB)
        if let x = res.streams {
            progress("   \(x.streams ?? 0) streams: pipewire RSS \(x.rssKiB.map(String.init) ?? "?") KiB, "
                     + "without shared buffers \(x.rssNoShmemKiB.map(String.init) ?? "?") KiB" + (x.error.map { " (\($0))" } ?? ""))
        }
    }
}
collect()
concurrently { r in
    r.section("headphones") { s, res in
        res.headphoneLoss = HeadphoneLoss.run(s, system: r.system, trials: hlTrials, settle: hlSettle)
    }
    // The systems with a simulated headset: its disconnects, side by side as well.
    if r.options.bluetooth {
        r.section("bluetooth") { s, res in
            res.bluetoothLoss = PeerPause.disconnects(s, system: r.system, trials: bluetoothTrials)
        }
    }
}
collect()

// Phase 1b, the daemon's CPU per event: each module system against the stock system of its
// generation, their rounds interleaved (module then stock, stock then module, ...), with
// nothing else running. The machine's load drifts over minutes by more than the module adds
// to an event; alternating puts both systems under the same drift, so the ratio compares
// the daemons rather than the minutes they ran in.
let costPairs: [(module: Runner, stock: Runner)] = runners.compactMap { m in
    guard m.module, let b = runners.first(where: { $0.system == "baseline" + m.system.dropFirst("module".count) }) else { return nil }
    return (m, b)
}
var costMeasured: Set<String> = []

/// How much the stock system's own figures of a cost section spread: their third quartile
/// over their first. The stock daemon runs the same work in every round, so a wide spread
/// says the machine was busy with something else (the hypervisor or another guest) during
/// the section; it says nothing about the module, whose figures play no part in it.
func stockSpread(_ figures: [Double]) -> Double? {
    let s = Stats(figures)
    guard s.n >= 4, let q1 = s.p25, let q3 = s.p75, q1 > 0 else { return nil }
    return q3 / q1
}

/// Runs a cost section (`attempt`, which measures both systems) again while the stock
/// system's figures spread more than `calmSpread`, at most `costAttempts` times; the attempt
/// whose stock figures spread least is kept, with how many ran and their spreads. Which
/// attempt is kept depends on the stock figures alone.
func calmest<T: RepeatedCostSection>(_ what: String, _ attempt: () -> (module: T, stock: T)) -> (module: T, stock: T) {
    var kept = attempt()
    var least = stockSpread(kept.stock.roundsMsPerThousand ?? []) ?? 1
    var spreads = [least]
    while let last = spreads.last, last > calmSpread, spreads.count < max(1, costAttempts) {
        progress("   \(what): the stock daemon's own figures spread \(String(format: "%.2f", last))x (third quartile over first; "
                 + "more than \(calmSpread)x): the machine was busy; the section runs again (attempt \(spreads.count + 1) of \(costAttempts))")
        let one = attempt()
        let spread = stockSpread(one.stock.roundsMsPerThousand ?? []) ?? 1
        spreads.append(spread)
        if spread < least {
            kept = one
            least = spread
        }
    }
    (kept.module.attempts, kept.module.stockSpreads) = (spreads.count, spreads)
    (kept.stock.attempts, kept.stock.stockSpreads) = (spreads.count, spreads)
    return kept
}

for (m, b) in costPairs {
    guard m.alive() != nil, b.alive() != nil else { continue }
    costOnOneCPU ? CPUPinning.onOneCPU { costSections(m, b) } : costSections(m, b)
}

/// The cost sections of one module system (`m`) and the stock system of its generation (`b`).
@MainActor func costSections(_ m: Runner, _ b: Runner) {
    costMeasured.formUnion([m.system, b.system])
    /// Runs `round` for both systems `rounds` times, alternating which goes first.
    func interleaved<T>(_ what: String, rounds: Int, _ round: (Sandbox, Int) -> T) -> (module: [T], stock: [T]) {
        var mine: [T] = [], theirs: [T] = []
        for i in 0..<max(1, rounds) {
            for r in (i % 2 == 0 ? [m, b] : [b, m]) {
                guard let s = r.alive() else { continue }
                let one = round(s, i)
                if r === m { mine.append(one) } else { theirs.append(one) }
            }
        }
        progress("   \(what): rounds of \(m.system) and \(b.system) done")
        return (mine, theirs)
    }
    if sections.contains("cpu") {
        progress("-- \(m.system) and \(b.system): cpu, \(burstRounds) rounds of \(burstsPerRound) bursts each, in turn, on new daemons each round")
        let pair = calmest("pause/resume") {
            var mine: [CPUResult] = [], theirs: [CPUResult] = []
            for i in 0..<max(1, burstRounds) {
                // Which system's burst comes first in the round alternates too.
                let first = i % 2 == 0
                let r = DaemonCost.cpuBurstRoundOnNewDaemons(first ? [m.options, b.options] : [b.options, m.options],
                                                             events: burstEvents, rate: toggleRate, bursts: burstsPerRound, round: i)
                mine.append(first ? r[0] : r[1])
                theirs.append(first ? r[1] : r[0])
                progress("   pause/resume round \(i + 1): " + zip([m.system, b.system], [mine.last, theirs.last]).map { name, one in
                    "\(name) " + (one?.cpuMsPerThousand.map { String(format: "%.1f", $0) } ?? one?.error ?? "?")
                }.joined(separator: ", ") + " ms per 1,000 (median of the bursts)")
                if !(mine.last?.ok ?? false) || !(theirs.last?.ok ?? false) { break }
            }
            return (module: DaemonCost.combineBursts(mine, events: burstEvents), stock: DaemonCost.combineBursts(theirs, events: burstEvents))
        }
        for (r, c) in [(m, pair.module), (b, pair.stock)] {
            r.result.update { $0.cpu = c }
            progress("   \(r.system) \(c.summary)")
        }
    }
    if sections.contains("churn") {
        // Side by side, each system on a CPU of its own when there are two: the bench's own
        // (where everything else of the cost sections runs) and another, swapped every round.
        let twoCPUs = costOnOneCPU ? CPUPinning.sideBySide() : nil
        let placement = twoCPUs.map { ", each on a CPU of its own (\($0[0]) and \($0[1])), swapped every round" } ?? ""
        progress("-- \(m.system) and \(b.system): churn CPU, \(churnCostRounds) rounds, each system's on a fresh daemon, side by side\(placement)")
        let pair = calmest("churn") {
            var mine: [CPUResult] = [], theirs: [CPUResult] = []
            var crashes: [String: [String]] = [:], failures: [String: [String]] = [:]
            for i in 0..<max(1, churnCostRounds) {
                let cpus = twoCPUs.map { i % 2 == 0 ? $0 : [$0[1], $0[0]] }
                func run() -> [CPUResult] {
                    DaemonCost.churnCPUPair(options: [m.options, b.options], cpus: cpus, seconds: churnCostSeconds, rate: churnCostRate,
                                            live: churnCostLive, round: i)
                }
                var both = run()
                if both.contains(where: { !$0.ok }) {
                    // A churn helper (an AudioSession client) died, or a sandbox did not start: a
                    // crash is kept for the report, and the pair runs once more, on new daemons.
                    for (r, one) in zip([m, b], both) where !one.ok && one.partnerFailed != true {
                        if let report = one.helperCrashReport {
                            crashes[r.system, default: []].append(report)
                        } else {
                            failures[r.system, default: []].append(one.error ?? "?")
                        }
                    }
                    progress("   churn round \(i + 1): \(both.compactMap(\.error).first ?? "?"); once more on new daemons")
                    both = run()
                }
                for (r, one) in zip([m, b], both) {
                    let cpu = cpus.map { r === m ? " (CPU \($0[0]))" : " (CPU \($0[1]))" } ?? ""
                    progress("   \(r.system) churn round \(i + 1)\(cpu): " + (one.cpuMsPerThousand.map { String(format: "%.1f ms per 1,000 stream events", $0) } ?? one.error ?? "?"))
                }
                mine.append(both[0])
                theirs.append(both[1])
            }
            /// Rounds differ in events (the streams made in the time): the median round's count.
            func combined(_ all: [CPUResult], _ r: Runner) -> CPUResult {
                var c = DaemonCost.combine(all, events: Stats(all.map { Double($0.events) }).median.map { Int($0) } ?? 0)
                c.helperCrashReports = crashes[r.system]
                c.roundFailures = failures[r.system]
                return c
            }
            return (module: combined(mine, m), stock: combined(theirs, b))
        }
        for (r, c) in [(m, pair.module), (b, pair.stock)] {
            r.result.update { $0.churnCost = c }
        }
    }
    if sections.contains("props") {
        progress("-- \(m.system) and \(b.system): props, \(floodRounds) rounds each, interleaved")
        for (mode, updates) in [("activation", floodActivationUpdates), ("silent", floodSilentUpdates)] {
            let pair = calmest("\(mode) updates") {
                let (mine, theirs) = interleaved("\(mode) updates", rounds: floodRounds) {
                    DaemonCost.propertyFloodRound($0, fixture: fixtureDirectory($0) + "/audio-session-prop-flood", mode: mode,
                                                  updates: updates, round: $1)
                }
                return (module: DaemonCost.combine(mine, mode: mode, updates: updates),
                        stock: DaemonCost.combine(theirs, mode: mode, updates: updates))
            }
            for (r, f) in [(m, pair.module), (b, pair.stock)] {
                r.result.update { $0.propertyFloods = ($0.propertyFloods ?? []) + [f] }
                progress("   \(r.system) \(f.summary)")
            }
        }
    }
}
collect()

// Phase 2, one system at a time (timings, CPU, memory after hostile clients): the other sandboxes are stopped.
for r in runners.dropFirst() { r.sandbox?.stop(); r.sandbox = nil }
for r in runners {
    if r.sandbox == nil && r.result.get.sandboxError == nil { r.start() }
    r.section("duck") { s, res in
        res.duck = DuckInterrupt.duck(s, system: r.system, trials: r.module ? duckTrials : baselineDuckTrials)
    }
    collect()
    r.section("interrupt") { s, res in
        res.interrupt = DuckInterrupt.interrupt(s, system: r.system, trials: r.module ? interruptTrials : baselineInterruptTrials)
    }
    collect()
    r.section("notify") { s, res in
        res.notify = DaemonCost.notify(s, trials: r.module ? notifyTrials : 1, module: r.module)
        if let n = res.notify {
            progress("   notification latency: " + (n.ok ? String(format: "p50 %.3f ms, p99 %.3f ms (%d events, %d failed)",
                                                           n.allMs.median ?? .nan, n.allMs.p99 ?? .nan, n.allMs.n, n.failed)
                                                   : "not measured: \(n.error ?? "")"))
        }
    }
    collect()
    // The systems of a pair measured in phase 1b are not measured again.
    if !costMeasured.contains(r.system) {
        r.section("cpu") { s, res in
            res.cpu = DaemonCost.cpu(s, events: toggleEvents, rate: toggleRate, rounds: costRounds)
            if let c = res.cpu {
                progress("   \(c.summary)")
            }
        }
        r.section("props") { s, res in
            let fixture = fixtureDirectory(s) + "/audio-session-prop-flood"
            res.propertyFloods = [
                DaemonCost.propertyFlood(s, fixture: fixture, mode: "activation", updates: floodActivationUpdates, rounds: floodRounds),
                DaemonCost.propertyFlood(s, fixture: fixture, mode: "silent", updates: floodSilentUpdates, rounds: floodRounds),
            ]
            for f in res.propertyFloods ?? [] {
                progress("   \(f.summary)")
            }
        }
    }
    r.section("churn") { s, res in
        res.churn = DaemonCost.churn(s, seconds: churnSeconds, rate: churnRate, live: churnLive,
                                     probe: fixtureDirectory(s) + "/audio-session-loop-probe")
        if let c = res.churn {
            progress("   churn: RSS \(c.rssBeforeKiB ?? 0) -> \(c.rssAfterKiB ?? 0) KiB, \(c.streamEventsPerSecond.map { String(format: "%.0f", $0) } ?? "?") stream events/s, xrun log lines \(c.xrunLogLines ?? -1)" + (c.error.map { " (\($0))" } ?? ""))
        }
    }
    if r.system == "module" {
        r.section("profile") { s, res in
            res.profile = Profile.run(s, propFlood: fixtureDirectory(s) + "/audio-session-prop-flood",
                                      toggleEvents: toggleEvents, toggleRate: toggleRate, floodUpdates: floodActivationUpdates,
                                      churnSeconds: min(churnSeconds, 20), churnRate: churnRate, churnLive: churnLive,
                                      probe: fixtureDirectory(s) + "/audio-session-loop-probe")
            for w in res.profile?.workloads ?? [] {
                progress("   profile of \(w.name): \(w.samples.map(String.init) ?? "?") samples, the module's share "
                         + String(format: "%.1f%%", w.objects.first { $0.object == Profile.moduleObject }?.percent ?? 0)
                         + (w.error.map { " (\($0))" } ?? ""))
            }
            if let e = res.profile?.error { progress("   profile: \(e)") }
        }
    }
    if r.system.hasSuffix("-pw1.6") {
        r.section("peer") { s, res in
            res.peerPause = PeerPause.run(s, system: r.system, module: r.module, trials: peerTrials, checkout: checkout)
        }
    }
    // Last: it stops the session manager and the pulse server. On a daemon started for it:
    // what each system's daemon keeps after the hostile clients is then compared under the
    // same load (started, then the same rounds), not after sections that differ between
    // systems (the module's many notification trials, its profile).
    // What one daemon keeps moves by several MiB from one daemon to the next, with or
    // without the module: the section runs on several, and their median is the figure.
    for daemon in 1...faultDaemons {
        if sections.contains("faults") && r.sandbox != nil {
            r.sandbox?.stop()
            r.sandbox = nil
            r.start()
        }
        r.section("faults") { s, res in
            let f = Faults.run(s, module: r.module, fixture: fixtureDirectory(s) + "/audio-session-stress-clients", rounds: faultRounds, perRound: faultClients)
            progress("   faults on daemon \(daemon) of \(faultDaemons): metadata destroyed \(f.metadataDestroyed), recreated \(f.metadataRecreated), crashes \(f.crashes), RssAnon \(f.rssAnonKiB)" + (f.error.map { " (\($0))" } ?? ""))
            res.faults = res.faults.map { Faults.adding(f, to: $0) } ?? f
        }
    }
    if let f = r.result.get.faults, f.daemons > 1 {
        progress("   faults: alone on \(f.daemons) daemons \(f.rssAnonAloneEachKiB) kB, median \(f.rssAnonAloneKiB ?? -1) kB")
    }
    r.stop()
    collect()
    progress(String(format: "== %@ done", r.system))
}

results.machine.loadAverageEnd = Proc.loadAverage()
results.totalSeconds = Date().timeIntervalSince(benchStart)
collect()
progress("wrote \(outDir)/results.json")
let notMeasured = runners.map(\.result.get).filter { $0.sandboxStartSeconds == nil }
for r in notMeasured {
    progress("\(r.system) was not measured: \(r.sandboxError ?? "its sandbox did not start")")
}
if !runners.isEmpty && notMeasured.count == runners.count {
    progress("no system could be measured: results.json holds only the reasons above")
    exit(1)
}

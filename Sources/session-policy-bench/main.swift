// The cost of one policy decision as the number of sessions grows.
//
// Usage: swift run -c release --scratch-path .build-policy session-policy-bench
//            [--json] [--workload NAME]... [--sessions N]... [--cold BYTES] [--rounds N]
//            [--module-core] [--entry-points] [--untimed]
//
// `--cold BYTES` writes through a buffer of BYTES before each decision, so that it runs
// with cold caches as in the daemon (e.g. --cold 8388608); without it decisions run back
// to back and find everything cached.
//
// `--module-core` decides through `ModuleCore.handle(_:)` instead: the module's Swift side as
// the daemon runs it (held property changes, the publishing interval, the metadata's JSON),
// with effect callbacks that do nothing. The graph is built on the policy and handed over.
// A declared client's change is only held there, as the module holds it until its loop's
// next turn. `--entry-points` makes the same decisions through the module core's C entry
// points (`as_core_*`), with the property sets the daemon hands them, and runs that turn
// after a client's change (`EntryPoints.swift`).
//
// `--untimed` runs the decisions without reading the clock around them and reports no time:
// for a cache simulator (scripts/footprint.py), which should count the decisions' own work.
// The module core then runs on a simulated clock, 5 ms a half round (`simulatedStep`).
//
// One decision = one `SessionPolicy.handle(_:)` call. Each round measures two decisions, a
// stream starting (`streamRunning(true)`) and the same stream stopping (`streamRunning(false)`),
// or, for `declared`, a declared session's `audio.session.active` going true then false
// (`clientChanged`), or, for `many-streams`, a stream added then removed. Both halves of every
// round are samples; 100 warm-up rounds are discarded.
//
// Workloads (N = sessions present besides the measured one):
//   idle:     N sessions (half declared clients with one stream, half legacy streams, all linked
//             to the speaker), 4 mixable ones playing. Decision: a legacy Music stream (non-mixable)
//             starts and stops; its start flips the R22 hint for those 4 active sessions.
//   mixing:   N legacy mixable streams, all playing (N programs mixing, e.g. a desktop). Decision:
//             one more mixable stream starts and stops. Nothing is interrupted, ducked or hinted:
//             the policy must decide without looking at the other N.
//   declared: N declared playback clients with a stream each, idle, 4 mixable sessions playing.
//             Decision: one declared client sets `audio.session.active` true, then false
//             (the property set is parsed again on each change, as the module delivers it).
//   fan-out:  N legacy mixable streams, all playing, then one non-mixable activation (a Music
//             stream starts) and its deactivation. R22 requires a `silenceSecondaryAudioHint`
//             notification to every active session when the hint flips, and each of them
//             republishes its state: the decision emits N notifications and N publications, so
//             its cost is O(active sessions) by specification. Reported as its own row, with the
//             cost per active session, rather than as the cost of a decision.
//   many-streams: one declared playback client owning N output streams (here N counts streams,
//             not sessions), all linked to the speaker and running, so its session is active.
//             Decision: one more stream of that client is added (`streamAdded`), then removed
//             (`streamRemoved`), as a program creating and destroying streams does. Each
//             republishes the session, whose published stream list has N + 1 entries, so the
//             decision's output is O(N) by specification; the rest should not be.
//   toggle:   N sessions as in idle, and a library program's undeclared stream that its owner
//             activates and that runs, then stops (the daemon's pause/resume benchmark).
//   churn:    one library program that declared nothing, with N streams (N counts streams),
//             all linked and running. Decision: one more stream is added, linked and runs,
//             then stops, is unlinked and removed (three events each half, the daemon's churn
//             benchmark). Each of its streams is its own session: nothing should grow with N.
import SessionPolicy
import PipeWireFacts
import AudioSessionCoreABI
import AudioSessionModuleCore
#if canImport(Glibc)
import Glibc
#endif

struct Row {
    var workload: String
    var sessions: Int
    var samples: Int
    var effectsPerDecision: Int
    var medianNanoseconds: Double
    var p99Nanoseconds: Double
}

func nanoseconds(_ d: Duration) -> Double {
    let c = d.components
    return Double(c.seconds) * 1e9 + Double(c.attoseconds) / 1e9
}

let speaker = NodeID(1)
let speakerProps: Properties = ["node.name": "speaker", "node.description": "Speaker", "device.form-factor": "internal", "device.api": "alsa"]

/// `count` legacy mixable streams (no media.role: desktop profile playback + mixWithOthers), all playing.
func addMixablePlaying(_ p: inout SessionPolicy, first: UInt32, count: Int) {
    for i in 0..<count {
        let id = first &+ UInt32(i)
        _ = p.handle(.clientAdded(ClientID(id), ["application.name": "mixer\(i)"]))
        _ = p.handle(.streamAdded(NodeID(id), client: ClientID(id), direction: .output, ["application.name": "mixer\(i)"]))
        _ = p.handle(.linkAdded(LinkID(id), output: NodeID(id), input: speaker))
        _ = p.handle(.streamRunning(NodeID(id), true))
    }
}

/// The policy as the module configures it (grace periods, fades, listening to outputs).
func baseGraph() -> SessionPolicy {
    var p = SessionPolicy(configuration: ModuleArguments.defaults)
    _ = p.handle(.endpointAdded(speaker, kind: .sink, speakerProps))
    return p
}

/// N sessions present, half declared clients, half legacy streams, 4 mixable playing.
func buildIdle(_ n: Int) -> SessionPolicy {
    var p = baseGraph()
    for i in 0..<n {
        let id = UInt32(100 + i)
        if i % 2 == 0 {
            _ = p.handle(.clientAdded(ClientID(id), ["audio.session.category": "playback", "application.name": "app\(i)"]))
        } else {
            _ = p.handle(.clientAdded(ClientID(id), ["application.name": "app\(i)"]))
        }
        _ = p.handle(.streamAdded(NodeID(id), client: ClientID(id), direction: .output, ["media.role": i % 3 == 0 ? "Music" : "Notification"]))
        _ = p.handle(.linkAdded(LinkID(id), output: NodeID(id), input: speaker))
    }
    addMixablePlaying(&p, first: 200_000, count: min(4, n))
    return p
}

func buildDeclared(_ n: Int) -> SessionPolicy {
    var p = baseGraph()
    for i in 0..<n {
        let id = UInt32(100 + i)
        _ = p.handle(.clientAdded(ClientID(id), ["audio.session.category": "playback", "application.name": "app\(i)"]))
        _ = p.handle(.streamAdded(NodeID(id), client: ClientID(id), direction: .output, ["media.role": "Music"]))
        _ = p.handle(.linkAdded(LinkID(id), output: NodeID(id), input: speaker))
    }
    addMixablePlaying(&p, first: 200_000, count: min(4, n))
    return p
}

func buildMixing(_ n: Int) -> SessionPolicy {
    var p = baseGraph()
    addMixablePlaying(&p, first: 100, count: n)
    return p
}

struct Decision {
    var on: [Report]
    var off: [Report]
}

/// One report of the daemon's, as the module makes it: an event, and for a stream added or a
/// client's change the property set it came with (`--entry-points` hands these over as C
/// property sets, the others through `handle`, which builds the same event from them).
enum Report {
    case event(Event)
    case streamAdded(NodeID, client: ClientID, direction: StreamDirection, Properties)
    case clientChanged(ClientID, Properties)

    static func streamRunning(_ n: NodeID, _ running: Bool) -> Report { .event(.streamRunning(n, running)) }
    static func streamActivatedByOwner(_ n: NodeID) -> Report { .event(.streamActivatedByOwner(n)) }
    static func streamRemoved(_ n: NodeID) -> Report { .event(.streamRemoved(n)) }
    static func linkAdded(_ l: LinkID, output: NodeID, input: NodeID) -> Report { .event(.linkAdded(l, output: output, input: input)) }
    static func linkRemoved(_ l: LinkID) -> Report { .event(.linkRemoved(l)) }

    /// The event the module core is handed for it.
    var event: Event {
        switch self {
        case .event(let e): return e
        case .streamAdded(let n, let c, let d, let props): return .streamAdded(n, client: c, direction: d, props)
        case .clientChanged(let c, let props): return .clientChanged(c, props)
        }
    }
}

/// Adds the measured session to the graph and returns its two decisions.
func measuredStream(_ p: inout SessionPolicy, _ props: Properties) -> Decision {
    let c = ClientID(900_000)
    let n = NodeID(900_000)
    _ = p.handle(.clientAdded(c, ["application.name": "measured"]))
    _ = p.handle(.streamAdded(n, client: c, direction: .output, props))
    _ = p.handle(.linkAdded(LinkID(900_000), output: n, input: speaker))
    return Decision(on: [.streamRunning(n, true)], off: [.streamRunning(n, false)])
}

func measuredDeclared(_ p: inout SessionPolicy) -> Decision {
    let c = ClientID(900_000)
    let n = NodeID(900_000)
    let props: Properties = ["audio.session.category": "playback", "application.name": "measured"]
    _ = p.handle(.clientAdded(c, props))
    _ = p.handle(.streamAdded(n, client: c, direction: .output, [:]))
    _ = p.handle(.linkAdded(LinkID(900_000), output: n, input: speaker))
    _ = p.handle(.streamRunning(n, true))
    var on = props
    on["audio.session.active"] = "true"
    var off = props
    off["audio.session.active"] = "false"
    return Decision(on: [.clientChanged(c, on)], off: [.clientChanged(c, off)])
}

/// Client 900000 with `n` output streams of `streamProps`, all linked to the speaker and running.
func oneClientPlaying(_ n: Int, _ clientProps: Properties, streams streamProps: Properties) -> SessionPolicy {
    var p = baseGraph()
    let c = ClientID(900_000)
    _ = p.handle(.clientAdded(c, clientProps))
    for i in 0..<n {
        let id = UInt32(100 + i)
        _ = p.handle(.streamAdded(NodeID(id), client: c, direction: .output, streamProps))
        _ = p.handle(.linkAdded(LinkID(id), output: NodeID(id), input: speaker))
        _ = p.handle(.streamRunning(NodeID(id), true))
    }
    return p
}

/// The properties of a stream an AudioSession library program makes without a role.
func libraryStreamProps(_ name: String) -> Properties {
    ["media.type": "Audio", "media.category": "Playback", "media.name": name, "application.name": name, "node.name": name]
}

/// One declared client with `n` output streams, all linked and running.
func buildManyStreams(_ n: Int) -> SessionPolicy {
    oneClientPlaying(n, ["audio.session.category": "playback", "application.name": "many"], streams: [:])
}

func measuredManyStreams(_ p: inout SessionPolicy) -> Decision {
    let n = NodeID(900_000)
    return Decision(on: [.streamAdded(n, client: ClientID(900_000), direction: .output, [:])], off: [.streamRemoved(n)])
}

/// A program on the AudioSession library that declared nothing, with one stream of silence
/// on the speaker that it pauses and resumes (`AudioOutput.pause()`/`resume()`), as the
/// daemon's pause/resume benchmark does: its owner activates the node and it runs, then
/// it stops.
func buildToggle(_ n: Int) -> SessionPolicy {
    var p = buildIdle(n)
    let c = ClientID(900_000)
    let s = NodeID(900_000)
    _ = p.handle(.clientAdded(c, ["audio.session.library": "1", "application.name": "bench-toggle"]))
    _ = p.handle(.streamAdded(s, client: c, direction: .output, libraryStreamProps("bench-toggle")))
    _ = p.handle(.linkAdded(LinkID(900_000), output: s, input: speaker))
    _ = p.handle(.streamRunning(s, true))
    return p
}

func measuredToggle(_ p: inout SessionPolicy) -> Decision {
    let s = NodeID(900_000)
    return Decision(on: [.streamActivatedByOwner(s), .streamRunning(s, true)], off: [.streamRunning(s, false)])
}

/// A program on the AudioSession library that declared nothing, with `n` streams of
/// silence on the speaker, as the daemon's churn benchmark makes them: one more stream is
/// made, linked and runs, then stops, is unlinked and goes.
func buildChurn(_ n: Int) -> SessionPolicy {
    oneClientPlaying(n, ["audio.session.library": "1", "application.name": "bench-churn"], streams: churnStreamProps)
}

let churnStreamProps = libraryStreamProps("bench-churn")

func measuredChurn(_ p: inout SessionPolicy) -> Decision {
    let n = NodeID(900_000)
    let l = LinkID(900_000)
    return Decision(
        on: [.streamAdded(n, client: ClientID(900_000), direction: .output, churnStreamProps),
             .linkAdded(l, output: n, input: speaker), .streamRunning(n, true)],
        off: [.streamRunning(n, false), .linkRemoved(l), .streamRemoved(n)])
}

struct Workload {
    var name: String
    var build: (Int) -> SessionPolicy
    var decision: (inout SessionPolicy) -> Decision
    /// Rounds per size: fewer when each decision is expected to be O(N).
    var rounds: (Int) -> Int
}

func defaultRounds(_ n: Int) -> Int { n >= 10_000 ? 2_000 : (n >= 1_000 ? 5_000 : 20_000) }

let workloads = [
    Workload(name: "idle", build: buildIdle, decision: { measuredStream(&$0, ["media.role": "Music"]) }, rounds: defaultRounds),
    Workload(name: "mixing", build: buildMixing, decision: { measuredStream(&$0, [:]) }, rounds: defaultRounds),
    Workload(name: "declared", build: buildDeclared, decision: measuredDeclared, rounds: defaultRounds),
    Workload(
        name: "fan-out", build: buildMixing, decision: { measuredStream(&$0, ["media.role": "Music"]) },
        rounds: { n in n >= 10_000 ? 200 : (n >= 1_000 ? 1_000 : 5_000) }),
    Workload(name: "many-streams", build: buildManyStreams, decision: measuredManyStreams, rounds: defaultRounds),
    Workload(name: "toggle", build: buildToggle, decision: measuredToggle, rounds: defaultRounds),
    Workload(name: "churn", build: buildChurn, decision: measuredChurn, rounds: defaultRounds),
]

func measure(_ w: Workload, _ n: Int) -> Row {
    var p = w.build(n)
    let d = w.decision(&p)
    let rounds = roundsOverride ?? w.rounds(n)
    let warmUp = min(100, rounds)
    let clock = ContinuousClock()
    var samples: [Double] = []
    samples.reserveCapacity(rounds * 2)
    var effects = 0
    // As the module does: one array for the effects, used again for each decision.
    var fx: [Effect] = []
    let core = throughModuleCore ? moduleCore(continuing: p) : nil
    // The events are made before the rounds, as the module's are before it hands them over.
    let onEvents = d.on.map(\.event), offEvents = d.off.map(\.event)
    let entries = throughEntryPoints ? core.map { (on: EntryPoints($0, d.on), off: EntryPoints($0, d.off)) } : nil
    func decide(_ events: [Event], _ calls: EntryPoints?) {
        if let calls {
            calls.run()
        } else if let core {
            for e in events { core.handle(e) }
        } else {
            for e in events { p.handle(e, into: &fx) }
        }
    }
    for i in 0..<(rounds + warmUp) {
        if untimed {
            // Decisions only, no clock read around them (a cache simulator's count).
            evictCaches()
            simulatedNanoseconds &+= simulatedStep
            decide(onEvents, entries?.on)
            evictCaches()
            simulatedNanoseconds &+= simulatedStep
            decide(offEvents, entries?.off)
            continue
        }
        evictCaches()
        let t0 = clock.now
        decide(onEvents, entries?.on)
        let t1 = clock.now
        let a = core == nil ? fx.count : 0
        evictCaches()
        let t2 = clock.now
        decide(offEvents, entries?.off)
        let t3 = clock.now
        let b = core == nil ? fx.count : 0
        if i >= warmUp {
            samples.append(nanoseconds(t1 - t0))
            samples.append(nanoseconds(t3 - t2))
            effects &+= a &+ b
        }
    }
    samples.sort()
    let median = samples.isEmpty ? 0 : samples[samples.count / 2]
    let p99 = samples.isEmpty ? 0 : samples[min(samples.count - 1, samples.count * 99 / 100)]
    return Row(
        workload: throughEntryPoints ? w.name + " (entry points)" : throughModuleCore ? w.name + " (module core)" : w.name, sessions: n, samples: samples.count, effectsPerDecision: samples.isEmpty ? 0 : effects / samples.count,
        medianNanoseconds: median, p99Nanoseconds: p99)
}

/// `--cold BYTES`: before each decision, one byte of every cache line of a buffer this
/// large is written, so that the decision finds the caches holding other work, as in the
/// daemon, where a client's messages and the graph run between two events. 0 (the
/// default) measures decisions back to back, with warm caches.
/// `--rounds N`: this many rounds per size instead of the workload's own count (a short run
/// under a profiler or a cache simulator).
let roundsOverride = values(of: "--rounds").last.flatMap { Int($0) }.map { max(1, $0) }
let coldBytes = max(0, values(of: "--cold").last.flatMap { Int($0) } ?? 0)
nonisolated(unsafe) let coldBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(64, coldBytes), alignment: 64)

/// `--entry-points` (implies `--module-core`): the reports reach the module core through its C
/// entry points, as the module makes them: a stream's or a client's properties as a C
/// property set carrying the keys the daemon and the stream's library add, a client's change
/// followed by the flush of the module's next loop turn.
let throughEntryPoints = CommandLine.arguments.contains("--entry-points")
let throughModuleCore = throughEntryPoints || CommandLine.arguments.contains("--module-core")
/// `--untimed`: the decisions run without the clock read around each (the rows report no
/// time): what a cache simulator counts is then only the decisions' own work.
let untimed = CommandLine.arguments.contains("--untimed")
/// The module core's clock under `--untimed`: 5 ms pass before each half of a round, as
/// between the daemon's pause/resume events (200 a second). The publishing interval then
/// holds and writes the same publications at the same decisions in every run; on the real
/// clock, which runs far slower under a cache simulator, which decisions write JSON would
/// depend on the machine's speed.
nonisolated(unsafe) var simulatedNanoseconds: UInt64 = 1_000_000_000
let simulatedStep: UInt64 = 5_000_000

/// A module core that continues from `policy`, its effects going nowhere (the effect count
/// is not reported for it).
func moduleCore(continuing policy: SessionPolicy) -> ModuleCore {
    var effects = as_core_effects()
    effects.version = UInt32(AS_CORE_EFFECTS_VERSION)
    effects.pause = { _, _ in }
    effects.resume = { _, _ in }
    effects.duck = { _, _, _, _ in }
    effects.silence = { _, _, _ in }
    effects.publish = { _, _, _, _, _ in }
    effects.log = { _, _, _ in }
    effects.schedule_flush = { _ in }
    effects.schedule_timer = { _, _, _ in }
    effects.fade = { _, _, _, _ in }
    effects.listen = { _, _, _ in }
    var clock: () -> UInt64 = ModuleCore.now
    if untimed { clock = { simulatedNanoseconds } }
    return ModuleCore(configuration: policy.configuration, effects: effects, data: nil, clock: clock, restoring: policy.snapshot())
}

func evictCaches() {
    guard coldBytes > 0 else { return }
    var i = 0
    while i < coldBytes {
        coldBuffer[i] &+= 1
        i &+= 64
    }
}

func values(of flag: String) -> [String] {
    let args = CommandLine.arguments
    var out: [String] = []
    var i = 1
    while i < args.count {
        if args[i] == flag, i + 1 < args.count {
            out.append(args[i + 1])
            i += 2
        } else {
            i += 1
        }
    }
    return out
}

let json = CommandLine.arguments.contains("--json")
let sizes = [10, 100, 1_000, 10_000]
let onlyWorkloads = Set(values(of: "--workload"))
let onlySizes = Set(values(of: "--sessions").compactMap { Int($0) })
let unknownWorkloads = onlyWorkloads.subtracting(workloads.map(\.name)).sorted()
let unknownSizes = values(of: "--sessions").filter { Int($0).map { !sizes.contains($0) } ?? true }
if !unknownWorkloads.isEmpty || !unknownSizes.isEmpty {
    var message = ""
    if !unknownWorkloads.isEmpty {
        message += "session-policy-bench: no workload named \(unknownWorkloads.joined(separator: ", ")); "
            + "the workloads are \(workloads.map(\.name).joined(separator: ", ")).\n"
    }
    if !unknownSizes.isEmpty {
        message += "session-policy-bench: --sessions takes one of \(sizes.map(String.init).joined(separator: ", ")), "
            + "not \(unknownSizes.joined(separator: ", ")).\n"
    }
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(2)
}
var rows: [Row] = []
for w in workloads where onlyWorkloads.isEmpty || onlyWorkloads.contains(w.name) {
    for n in sizes where onlySizes.isEmpty || onlySizes.contains(n) {
        rows.append(measure(w, n))
    }
}

func fmt(_ ns: Double) -> String {
    let us = Double(Int(ns / 10 + 0.5)) / 100
    return "\(us)"
}

if json {
    let items = rows.map {
        "{\"workload\":\"\($0.workload)\",\"sessions\":\($0.sessions),\"decisions\":\($0.samples),\"effects_per_decision\":\($0.effectsPerDecision),\"median_ns\":\(Int($0.medianNanoseconds)),\"p99_ns\":\(Int($0.p99Nanoseconds))}"
    }
    print("[" + items.joined(separator: ",") + "]")
} else {
    print("    workload  sessions  decisions  effects  median µs  p99 µs  median ns per session")
    for r in rows {
        let perSession = r.workload == "fan-out" ? String(Int(r.medianNanoseconds / Double(max(1, r.sessions)))) : "-"
        let cols = [r.workload, String(r.sessions), String(r.samples), String(r.effectsPerDecision), fmt(r.medianNanoseconds), fmt(r.p99Nanoseconds), perSession]
        let widths = [12, 8, 9, 7, 9, 7, 22]
        var line = ""
        for (c, w) in zip(cols, widths) { line += String(repeating: " ", count: max(0, w - c.count)) + c + "  " }
        print(line)
    }
}

import PropertyBased
import PipeWireFacts
@testable import SessionPolicy
import Testing

/// Random event sequences over a small graph: 3 clients, streams 10...15, headphones 50,
/// speaker 60, microphone 5. Each UInt32 decodes into one event, so shrinking works on numbers.
enum RandomGraph {
    static let clientVariants: [Properties] = [
        [:],
        ["audio.session.category": "playback"],
        ["audio.session.category": "ambient"],
        ["audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat"],
        ["audio.session.category": "playback", "audio.session.mode": "voicePrompt",
         "audio.session.options": "duckOthers,interruptSpokenAudioAndMixWithOthers"],
        ["audio.session.category": "record"],
        ["audio.session.category": "Playback"],
        ["audio.session.category": "playback", "audio.session.mode": "spokenAudio"],
        ["audio.session.category": "playback", "audio.session.prefers-no-interruptions-from-system-alerts": "true"],
        ["audio.session.category": "playback", "audio.session.prefers-interruption-on-route-disconnect": "true"],
        ["audio.session.category": "soloAmbient", "audio.session.active": "true"],
        ["audio.session.category": "playback", "audio.session.options": "duckOthers", "audio.session.active": "true"],
        ["audio.session.category": "\u{FFFD}\u{0}", "audio.session.options": "mixWithOthers,mixWithOthers"],
    ]
    static let streamVariants: [Properties] = [
        [:], ["media.role": "Music"], ["media.role": "Game"], ["media.role": "Notification"], ["media.role": "Alarm"],
        ["media.role": "Phone"], ["media.role": "Navigation"], ["media.role": "Accessibility"],
        ["media.role": "Production"], ["audio.session.category": "playback"], ["audio.session.mode": "bogus"],
        ["media.role": "Movie"],
    ]
    static let endpointIDs: [UInt32] = [50, 60, 5]

    /// Random sequences of 1...80 codes, each decoded by `event(_:)`.
    static let sequences = Gen.uint32(in: 0...UInt32(792 * 60)).array(of: 1...80)

    static func endpointEvent(_ i: Int) -> Event {
        switch i % 3 {
        case 0: return .endpointAdded(N(50), kind: .sink, headphonesProps)
        case 1: return .endpointAdded(N(60), kind: .sink, speakerProps)
        default: return .endpointAdded(N(5), kind: .source, micProps)
        }
    }

    static func event(_ code: UInt32) -> Event {
        let k = Int(code)
        let op = k % 22
        let a = (k / 22) % 6
        let b = (k / 132) % 6
        let x = k / 792
        let n = N(UInt32(10 + a))
        let c = C(UInt32(a % 3 + 1))
        switch op {
        case 0: return .clientAdded(c, clientVariants[x % clientVariants.count])
        case 1: return .clientChanged(c, clientVariants[x % clientVariants.count])
        case 2: return .clientRemoved(c)
        case 3: return .streamAdded(n, client: c, direction: a == 5 ? .input : .output, streamVariants[x % streamVariants.count])
        case 4: return .streamChanged(n, streamVariants[x % streamVariants.count])
        case 5, 6, 21: return .streamRunning(n, true)
        case 7: return .streamRunning(n, false)
        case 8: return .streamActivatedByOwner(n)
        case 9: return .streamRemoved(n)
        case 10: return endpointEvent(b)
        case 11: return .endpointRemoved(N(endpointIDs[b % 3]))
        case 12: return .headphonePortLost(N(50))
        case 13: return .headphonePortRestored(N(50))
        case 14: return .endpointMuteChanged(N(5), muted: x % 2 == 0)
        case 15:
            let l = L(UInt32(100 + a * 6 + b % 3))
            let e = N(endpointIDs[b % 3])
            return a == 5 || b % 3 == 2 ? .linkAdded(l, output: N(5), input: n) : .linkAdded(l, output: n, input: e)
        case 16: return .linkRemoved(L(UInt32(100 + a * 6 + b % 3)))
        case 17:
            // overrideOutputAudioPort: the headphones, the speaker, or none (R33).
            return .clientChanged(c, ["audio.session.category": "playback", "audio.session.output-override": ["headphones", "speaker", ""][b % 3]])
        case 18: return .switchesRequested(c, SwitchRequest(silentMode: x % 2 == 0))
        case 19:
            let on = x % 2 == 0
            return .switchesRequested(c, x % 4 < 2 ? SwitchRequest(screenLock: on) : SwitchRequest(silentMode: on, screenLock: on))
        default:
            var props = clientVariants[1 + x % 4]
            props["audio.session.active"] = x % 2 == 0 ? "true" : "false"
            if x % 4 < 2 { props["audio.session.deactivation"] = "notifyOthersOnDeactivation" }
            return .clientChanged(c, props)
        }
    }
}

/// Checks the invariants over every effect list the policy returns.
struct InvariantChecker {
    var policy: SessionPolicy
    var paused: Set<NodeID> = []
    /// Streams held by a fade to silence (R42) whose pause is still to come.
    var fading: Set<NodeID> = []
    var interrupted: Set<SessionID> = []
    var problems: [String] = []
    /// A node its owner re-activated in this event: the policy confirms with `.resume`.
    var ownerResumed: Set<NodeID> = []
    /// The output streams the module listens to (R43), as the effects started and stopped it.
    var listening: Set<NodeID> = []

    init(configuration: PolicyConfiguration = PolicyConfiguration()) {
        policy = SessionPolicy(configuration: configuration)
    }

    mutating func run(_ event: Event) {
        // The owner re-activating a node the policy paused undoes that pause (R16).
        switch event {
        case .streamActivatedByOwner(let n), .streamRunning(let n, true):
            if policy.snapshot().streams[n]?.pausedByPolicy == true {
                paused.remove(n)
                fading.remove(n)
                ownerResumed = [n]
            }
        default: break
        }
        defer { ownerResumed = [] }
        let effects = policy.handle(event)
        check(event, effects)
        for echo in moduleEchoes(of: effects) { check(echo, policy.handle(echo)) }
    }

    mutating func check(_ event: Event, _ effects: [Effect]) {
        let graph = policy.snapshot()
        let level = policy.configuration.duckLevel
        if case .streamRemoved(let n) = event {
            paused.remove(n)
            fading.remove(n)
        }
        if case .streamAdded(let n, _, _, _) = event {  // a re-announced node replaces the old one
            paused.remove(n)
            fading.remove(n)
            listening.remove(n)
        }
        if case .clientRemoved = event {
            paused = paused.filter { graph.streams[$0] != nil }
            fading = fading.filter { graph.streams[$0] != nil }
        }
        for e in effects {
            switch e {
            case .pause(let n):
                if graph.streams[n] == nil { problems.append("\(event): pause names unknown \(n)") }
                let wasFading = fading.remove(n) != nil
                if !paused.insert(n).inserted && !wasFading { problems.append("\(event): \(n) paused twice") }
            case .resume(let n):
                if graph.streams[n] == nil { problems.append("\(event): resume names unknown \(n)") }
                let wasFading = fading.remove(n) != nil
                if paused.remove(n) == nil && !wasFading && !ownerResumed.contains(n) { problems.append("\(event): \(n) resumed but not paused") }
            case .fade(let n, 0, _) where !paused.contains(n):
                fading.insert(n)
            case .duck(let n, let gain, _):
                if graph.streams[n] == nil { problems.append("\(event): duck names unknown \(n)") }
                if !(gain >= level && gain <= 1) { problems.append("\(event): duck gain \(gain) outside [\(level), 1]") }
            case .silence(let n, _):
                if graph.streams[n] == nil { problems.append("\(event): silence names unknown \(n)") }
            case .fade(let n, let gain, _):
                if graph.streams[n] == nil { problems.append("\(event): fade names unknown \(n)") }
                if !(gain >= 0 && gain <= 1) { problems.append("\(event): fade gain \(gain) outside [0, 1]") }
            case .notify(let s, .interruptionBegan):
                if !interrupted.insert(s).inserted { problems.append("\(event): \(s) began twice") }
                // R11, R42: told once its output stopped: none of its streams still fades out.
                for n in policy.sessions[s]?.streams ?? [] where graph.streams[n]?.fade == .fadingOut {
                    problems.append("\(event): \(s) told began while \(n) still fades out")
                }
            case .listen(let n, let on):
                if on ? !listening.insert(n).inserted : listening.remove(n) == nil {
                    problems.append("\(event): listen(\(n), \(on)) twice")
                }
                if on, graph.streams[n]?.direction != .output { problems.append("\(event): listens to \(n), not an output") }
            case .notify(let s, .interruptionEnded):
                if interrupted.remove(s) == nil { problems.append("\(event): \(s) ended without began") }
            default: break
            }
        }
        let sessions = policy.sessions
        interrupted = interrupted.filter { sessions[$0] != nil }
        paused = paused.filter { graph.streams[$0] != nil }
        // R42: no stream plays held silent by a fade.
        for (n, st) in graph.streams where st.running && !st.pausedByPolicy && st.fade != .none {
            problems.append("\(event): \(n) runs with the fade \(st.fade)")
        }
        // R43: the module listens to exactly the streams the policy counts as listened, none
        // already heard, within the bound; a removed stream's listening goes with it.
        listening = listening.filter { graph.streams[$0] != nil }
        let listened = Set(graph.streams.filter { $0.value.listened }.map(\.key))
        if listened != listening { problems.append("\(event): listened \(listened.sorted()) != effects' \(listening.sorted())") }
        if graph.streams.contains(where: { $0.value.listened && $0.value.heard }) { problems.append("\(event): listens to a stream heard") }
        if listening.count > policy.configuration.listenedStreamsInAll { problems.append("\(event): \(listening.count) listened") }
        // Nothing is listened to or remembered heard for a program that captures nothing.
        for (n, st) in graph.streams where (st.listened || st.heard) && !policy.state.captures(policy.reader.program(of: st)) {
            problems.append("\(event): \(n) listened or heard while its program captures nothing")
        }
        if policy.configuration.listensToOutputs, !policy.indexIsConsistent() {
            problems.append("\(event): the index differs from a rebuild: \(policy.indexDifferences())")
        }
        let policyPaused = Set(graph.streams.filter { $0.value.pausedByPolicy }.map(\.key))
        if policyPaused != paused.union(fading) { problems.append("\(event): paused by effects \(paused.sorted()) != policy's \(policyPaused.sorted())") }
    }
}

/// The module's echo of the policy's own pauses and resumes: the node's running state it
/// reports after carrying each out, in order.
func moduleEchoes(of effects: [Effect]) -> [Event] {
    effects.compactMap {
        switch $0 {
        case .pause(let n): return .streamRunning(n, false)
        case .resume(let n): return .streamRunning(n, true)
        default: return nil
        }
    }
}

/// The streams `policy` knows that are not running, in id order: a property test starts
/// them (`StopAndRemovalTests.heardDecidingApart`) so that most streams of a random graph play.
func idleStreams(_ policy: SessionPolicy) -> [NodeID] {
    let streams = policy.snapshot().streams
    return streams.keys.sorted().filter { streams[$0]?.running == false }
}

/// Runs an event sequence through `InvariantChecker`, then removes every stream; returns
/// the problems found, and the pauses still outstanding at the end.
func invariantProblems(_ events: [Event], configuration: PolicyConfiguration = PolicyConfiguration()) -> [String] {
    var checker = InvariantChecker(configuration: configuration)
    for event in events { checker.run(event) }
    // The module finishes the fades still running.
    for (n, st) in checker.policy.snapshot().streams.sorted(by: { $0.key < $1.key }) where st.fade == .fadingOut {
        checker.run(.streamFadedOut(n))
    }
    for n in checker.policy.snapshot().streams.keys.sorted() { checker.run(.streamRemoved(n)) }
    var problems = checker.problems
    if !checker.paused.isEmpty { problems.append("still paused: \(checker.paused.sorted())") }
    return problems
}

/// Runs an event sequence, restores a policy from its model (the index rebuilt), and tells
/// whether the incremental index equals the rebuilt one, and whether the published state
/// and then the decisions for `more` events are the same.
func rebuildDiffers(_ events: [Event], more: [Event] = []) -> [String] {
    var original = SessionPolicy()
    for event in events { _ = original.handle(event) }
    var rebuilt = SessionPolicy(restoring: original.snapshot())
    var out: [String] = []
    if !original.indexIsConsistent() { out.append("the index differs from one rebuilt from the model") }
    if rebuilt.sessions != original.sessions { out.append("sessions differ") }
    for event in more {
        let a = decisions(original.handle(event))
        let b = decisions(rebuilt.handle(event))
        if a != b { return out + ["\(event): \(a) vs \(b)"] }
    }
    return out
}

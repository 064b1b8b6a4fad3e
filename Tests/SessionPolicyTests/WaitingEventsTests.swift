import PropertyBased
import PipeWireFacts
@testable import SessionPolicy
import Synchronization
import Testing

/// In a quiet graph, a stream's start and a stream's removal may wait for what follows
/// (`startMayWaitInPlace`, `removalMayWaitInPlace`): the module hands the policy the start,
/// the removal (after its stop), the next new stream and that stream's first link in one
/// step (`handleInOneStep`).
@Suite struct WaitingEventsTests {
    /// How many waiting starts and removals the property tests found (they must find some).
    static let waited = Atomic<Int>(0)

    @Test("A waiting start and removal, the next stream and its first link decided together leave the policy as decided one after the other")
    func waitingEventsTheNextStreamAndItsLinkDecidedTogetherLeaveThePolicyAsDecidedApart() async {
        let before = Self.waited.load(ordering: .relaxed)
        await propertyCheck(count: 400, input: RandomGraph.sequences) { codes in
            var apart = SessionPolicy(), together = SessionPolicy()
            for (i, code) in codes.enumerated() {
                let event = RandomGraph.event(code)
                if case .streamAdded(let n, _, let direction, _) = event, apart.snapshot().streams[n] == nil,
                   apart.snapshot().relays[n] == nil {
                    // As the module finds them: both asked before either is decided.
                    let streams = apart.snapshot().streams.keys.sorted()
                    let start = code % 5 == 0 ? nil : streams.first(where: { apart.startMayWait($0) })
                    let old = code % 7 == 0 ? nil : streams.last(where: { apart.removalMayWait($0) })
                    if start != nil || old != nil { Self.waited.add(1, ordering: .relaxed) }
                    let e = NodeID([50, 60, 5][Int(code) % 3])
                    let l = LinkID(UInt32(200 + i))
                    let link: Event = direction == .input || e == NodeID(5)
                        ? .linkAdded(l, output: e, input: n) : .linkAdded(l, output: n, input: e)
                    var steps: [Event] = []
                    if let start { steps.append(.streamRunning(start, true)) }
                    if let old {
                        if apart.snapshot().streams[old]?.running == true || old == start { steps.append(.streamRunning(old, false)) }
                        steps.append(.streamRemoved(old))
                    }
                    steps.append(event)
                    if code % 2 == 0 { steps.append(.streamActivatedByOwner(n)) }
                    steps.append(link)
                    let heardApart = StopAndRemovalTests.heardDecidingApart(steps, &apart)
                    var fx: [Effect] = []
                    together.handleInOneStep(steps, into: &fx)
                    let heardTogether = StopAndRemovalTests.heardWithEchoes(fx, &together)
                    #expect(heardTogether == heardApart, "\(steps)")
                    #expect(together.snapshot() == apart.snapshot(), "\(steps)")
                    guard heardTogether == heardApart && together.snapshot() == apart.snapshot() else { return }
                    continue
                }
                for echo in moduleEchoes(of: apart.handle(event)) { _ = apart.handle(echo) }
                for echo in moduleEchoes(of: together.handle(event)) { _ = together.handle(echo) }
                // Most streams play: a removal then meets streams running, and a start others.
                if case .linkAdded = event {
                    for n in idleStreams(apart) where n != apart.snapshot().streams.keys.max() {
                        _ = StopAndRemovalTests.heardDecidingApart([.streamRunning(n, true)], &apart)
                        _ = StopAndRemovalTests.heardDecidingApart([.streamRunning(n, true)], &together)
                    }
                }
            }
        }
        #expect(Self.waited.load(ordering: .relaxed) > before)
    }

    /// Runs random graphs (with `streamsPlay`, every stream starts once linked) and, wherever
    /// `mayWait` says an event may wait, decides what it stands for (`standsFor`) on a copy:
    /// no program may hear it, and no stream that stays changes its gain. Returns how many
    /// such events it found.
    static func waitingEventsHeardByNoProgram(streamsPlay: Bool, mayWait: @escaping @Sendable (SessionPolicy, Event) -> Bool,
                                              standsFor: @escaping @Sendable (SessionPolicy, Event) -> [Event]) async -> Int {
        let found = Atomic<Int>(0)
        await propertyCheck(count: 400, input: RandomGraph.sequences) { codes in
            var policy = SessionPolicy()
            for code in codes {
                let event = RandomGraph.event(code)
                if mayWait(policy, event) {
                    found.add(1, ordering: .relaxed)
                    var probe = policy
                    let heard = StopAndRemovalTests.heardDecidingApart(standsFor(policy, event), &probe)
                    #expect(heard.isEmpty, "\(event): \(heard)")
                    // Nor is another stream ducked or silenced (a gain is heard too).
                    let before = policy.snapshot().streams, after = probe.snapshot().streams
                    let regained = before.keys.sorted().filter { m in
                        guard let b = before[m], let a = after[m] else { return false }
                        return b.duckGain != a.duckGain || b.silenced != a.silenced
                    }
                    #expect(regained.isEmpty, "\(event): gains of \(regained)")
                    guard heard.isEmpty && regained.isEmpty else { return }
                }
                _ = StopAndRemovalTests.heardDecidingApart([event], &policy)
                if streamsPlay, case .linkAdded = event {
                    for n in idleStreams(policy) { _ = StopAndRemovalTests.heardDecidingApart([.streamRunning(n, true)], &policy) }
                }
            }
        }
        return found.load(ordering: .relaxed)
    }

    /// What the predicate promises: a start it lets wait is heard by no program. Deciding it
    /// notifies, pauses, resumes, fades and listens to nothing; only what is published changes.
    @Test("A start that may wait is heard by no program")
    func aStartThatMayWaitIsHeardByNoProgram() async {
        let found = await Self.waitingEventsHeardByNoProgram(
            streamsPlay: false,
            mayWait: { policy, event in
                if case .streamRunning(let n, true) = event { return policy.startMayWait(n) }
                return false
            },
            standsFor: { _, event in [event] })
        #expect(found > 0)
    }

    /// What the predicate promises: a removal it lets wait is heard by no program. Deciding
    /// it (with its stop) notifies, pauses, resumes, fades and listens to nothing; only what
    /// is published changes.
    @Test("A removal that may wait is heard by no program")
    func aRemovalThatMayWaitIsHeardByNoProgram() async {
        let found = await Self.waitingEventsHeardByNoProgram(
            streamsPlay: true,
            mayWait: { policy, event in
                if case .streamRemoved(let n) = event { return policy.removalMayWait(n) }
                return false
            },
            standsFor: { policy, event in
                guard case .streamRemoved(let n) = event, policy.snapshot().streams[n]?.running == true else { return [event] }
                return [.streamRunning(n, false), event]
            })
        #expect(found > 0)
    }

    /// A call ends, a paused stream leaves, a stream starts during a call: none of these may wait.
    @Test func nothingMayWaitWhileACallPlaysOrEndsOrAStreamIsPaused() {
        var policy = SessionPolicy()
        let setup: [Event] = [
            .endpointAdded(N(50), kind: .sink, headphonesProps),
            .clientAdded(C(2), ["audio.session.category": "playback", "audio.session.options": "mixWithOthers"]),
            .streamAdded(N(11), client: C(2), direction: .output, [:]),
            .linkAdded(L(100), output: N(11), input: N(50)),
            .streamRunning(N(11), true),
            .streamAdded(N(12), client: C(2), direction: .output, [:]),
            .linkAdded(L(101), output: N(12), input: N(50)),
            .streamRunning(N(12), true),
            .streamAdded(N(13), client: C(2), direction: .output, [:]),
            .linkAdded(L(103), output: N(13), input: N(50)),
        ]
        for e in setup { for echo in moduleEchoes(of: policy.handle(e)) { _ = policy.handle(echo) } }
        #expect(policy.removalMayWait(N(11)))
        #expect(policy.startMayWait(N(13)))
        #expect(!policy.startMayWait(N(12)), "a stream that runs already")
        #expect(!policy.removalMayWait(N(99)), "a stream the policy does not know")
        // A call starts: the music is interrupted; nothing may wait now.
        let call: [Event] = [
            .clientAdded(C(1), ["audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat",
                                "audio.session.active": "true"]),
            .streamAdded(N(10), client: C(1), direction: .output, [:]),
            .linkAdded(L(102), output: N(10), input: N(50)),
            .streamRunning(N(10), true),
        ]
        for e in call { for echo in moduleEchoes(of: policy.handle(e)) { _ = policy.handle(echo) } }
        #expect(!policy.removalMayWait(N(10)), "the call's own stream")
        #expect(!policy.removalMayWait(N(11)), "a stream the call paused")
        #expect(!policy.startMayWait(N(13)), "a start while a call plays")
        // The call ends: its end is held for the grace period, and still nothing waits.
        for e in [Event.streamRunning(N(10), false), .streamRemoved(N(10))] {
            for echo in moduleEchoes(of: policy.handle(e)) { _ = policy.handle(echo) }
        }
        #expect(!policy.removalMayWait(N(12)))
    }
}

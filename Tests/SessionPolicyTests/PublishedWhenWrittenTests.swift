import PropertyBased
import PipeWireFacts
@testable import SessionPolicy
import Testing

/// `PolicyConfiguration.makesPublishedStateWhenWritten`: a decision only says which
/// sessions it touched (`Effect.sessionChanged`), and a session's state is made when the
/// module writes it (`SessionPolicy.settledSnapshot(_:)`). The module holds its writes for
/// an interval, so a stream started and stopped many times in one interval has its state
/// made once. Everything else the policy decides is the same, and what is written is what
/// the policy that makes every state at once would have published.
@Suite("Published state made when written")
struct PublishedWhenWrittenTests {
    static var whenWritten: PolicyConfiguration {
        var c = PolicyConfiguration()
        c.makesPublishedStateWhenWritten = true
        return c
    }

    /// The effects other than publishing a session's state (the global state, published the
    /// same way in both modes, is compared too: `decisions(_:)` of TestSupport leaves it out).
    static func decisions(_ effects: [Effect]) -> [Effect] {
        effects.filter {
            switch $0 {
            case .publishSession, .sessionChanged: return false
            default: return true
            }
        }
    }

    /// The sessions whose state the effects publish, change or remove.
    static func announced(_ effects: [Effect]) -> Set<SessionID> {
        var out: Set<SessionID> = []
        for e in effects {
            switch e {
            case .publishSession(let s, _), .sessionChanged(let s): out.insert(s)
            default: break
            }
        }
        return out
    }

    /// Runs one event (and the echoes of its pauses and resumes) through both policies;
    /// returns what differed. `settle`: the sessions announced so far are made now.
    static func step(_ event: Event, eager: inout SessionPolicy, late: inout SessionPolicy,
                     announced pending: inout Set<SessionID>, settle: Bool) -> [String] {
        var problems: [String] = []
        var queue = [event]
        while !queue.isEmpty {
            let e = queue.removeFirst()
            let a = eager.handle(e)
            let b = late.handle(e)
            if decisions(a) != decisions(b) { problems.append("\(e): \(decisions(a)) vs \(decisions(b))") }
            for case .publishSession(let s, _?) in b { problems.append("\(e): \(s)'s state was made with the decision") }
            let missed = announced(a).subtracting(announced(b))
            if !missed.isEmpty { problems.append("\(e): \(missed.sorted()) changed and were not announced") }
            pending.formUnion(announced(b))
            queue += moduleEchoes(of: a)
        }
        guard settle else { return problems }
        for s in pending.sorted() {
            let made = late.settledSnapshot(s)
            if made != eager.publishedSnapshot(s) {
                problems.append("\(event): \(s) is written as \(String(describing: made)), published as \(String(describing: eager.publishedSnapshot(s)))")
            }
        }
        pending = []
        if late.unsettledSessionCount != 0 { problems.append("\(event): \(late.unsettledSessionCount) sessions left unsettled") }
        return problems
    }

    /// Runs the events through an eager policy and one that makes its states when written,
    /// the announced states made after every `settleEvery`-th event and after the last;
    /// checks every step, and the later policy's index at the end.
    static func compareWithEager(_ codes: [UInt32], settleEvery: Int) {
        var eager = SessionPolicy()
        var late = SessionPolicy(configuration: whenWritten)
        var pending: Set<SessionID> = []
        for (i, code) in codes.enumerated() {
            let settle = (i + 1) % settleEvery == 0 || i == codes.count - 1
            let problems = step(RandomGraph.event(code), eager: &eager, late: &late, announced: &pending, settle: settle)
            #expect(problems.isEmpty, "\(problems)")
            if !problems.isEmpty { return }
        }
        #expect(late.indexIsConsistent())
    }

    @Test("Any sequence of events: the same decisions, every change announced, and each state written as it would have been published")
    func anySequenceDecidesTheSameAndWritesWhatWouldHaveBeenPublished() async {
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            Self.compareWithEager(codes, settleEvery: 1)
        }
    }

    @Test("States made only every few events are those the policy would have published by then")
    func statesMadeEveryFewEventsAreThoseTheEagerPolicyPublishedByThen() async {
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            Self.compareWithEager(codes, settleEvery: 5)
        }
    }

    @Test("A stream started and stopped within one interval has its session's state made once")
    func aStreamStartedAndStoppedManyTimesHasItsStateMadeOnce() {
        var w = World { $0.makesPublishedStateWhenWritten = true }
        w.legacy(10, client: 2, role: "Music")
        _ = w.policy.publishedState()
        for _ in 0..<10 {
            #expect(w.when(.streamRunning(N(10), true)).contains(.sessionChanged(legacyS(10))))
            #expect(w.when(.streamRunning(N(10), false)).contains(.sessionChanged(legacyS(10))))
        }
        #expect(w.policy.unsettledSessionCount == 1)
        #expect(w.policy.publishedSnapshot(legacyS(10))?.isPlaying == false)
        _ = w.decide(.streamRunning(N(10), true))
        #expect(w.policy.publishedSnapshot(legacyS(10))?.isPlaying == false, "not made before it is written")
        #expect(w.policy.settledSnapshot(legacyS(10))?.isPlaying == true)
        #expect(w.policy.publishedSnapshot(legacyS(10))?.isPlaying == true)
        #expect(w.policy.unsettledSessionCount == 0)
    }

    @Test("A session that goes away is no longer to be made, and its removal is announced even if it was never made")
    func aSessionThatGoesIsForgottenAndItsRemovalAnnounced() {
        var w = World { $0.makesPublishedStateWhenWritten = true }
        w.legacy(10, client: 2, role: "Music")
        #expect(w.policy.unsettledSessionCount == 1)
        #expect(w.policy.publishedSnapshot(legacyS(10)) == nil)
        #expect(w.when(.streamRemoved(N(10))).contains(.publishSession(legacyS(10), nil)))
        #expect(w.policy.unsettledSessionCount == 0)
        #expect(w.policy.settledSnapshot(legacyS(10)) == nil)
    }

    @Test("The whole published state, for a metadata object made anew, includes the states not made yet")
    func theWholePublishedStateMakesTheStatesNotMadeYet() {
        var w = World { $0.makesPublishedStateWhenWritten = true }
        w.legacy(10, client: 2, role: "Music")
        _ = w.decide(.streamRunning(N(10), true))
        let whole = w.policy.publishedState()
        #expect(whole.contains { if case .publishSession(legacyS(10), let s?) = $0 { return s.isPlaying } else { return false } }, "\(whole)")
        #expect(w.policy.unsettledSessionCount == 0)
    }
}

extension PublishedWhenWrittenTests {
    @Test("After every event, every session's published state is its state now")
    func everyPublishedStateIsTheSessionsStateNow() async {
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            var policy = SessionPolicy()
            var queue: [Event] = []
            for code in codes {
                queue.append(RandomGraph.event(code))
                while !queue.isEmpty {
                    let e = queue.removeFirst()
                    queue += moduleEchoes(of: policy.handle(e))
                    let now = policy.sessions
                    var stale: [String] = []
                    for s in Set(now.keys).union(policy.model.published.keys).sorted() where now[s] != policy.publishedSnapshot(s) {
                        stale.append("\(s): published \(String(describing: policy.publishedSnapshot(s))), now \(String(describing: now[s]))")
                    }
                    #expect(stale.isEmpty, "after \(e): \(stale)")
                    if !stale.isEmpty { return }
                }
            }
        }
    }
}

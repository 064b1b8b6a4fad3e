import Testing
@testable import SessionPolicy

/// Runs a random-graph sequence through `InvariantChecker`, then removes every stream.
func invariantProblems(_ codes: [UInt32]) -> [String] {
    var checker = InvariantChecker()
    for code in codes { checker.run(RandomGraph.event(code)) }
    for n in checker.policy.snapshot().streams.keys.sorted() { checker.run(.streamRemoved(n)) }
    var problems = checker.problems
    if !checker.paused.isEmpty { problems.append("still paused: \(checker.paused.sorted())") }
    return problems
}

/// Runs a random-graph sequence, rebuilds a policy from its snapshot, and tells whether the
/// rebuilt state and then the decisions for `more` events are the same.
func rebuildDiffers(_ codes: [UInt32], more: [UInt32] = []) -> [String] {
    var original = SessionPolicy()
    for code in codes { _ = original.handle(RandomGraph.event(code)) }
    var rebuilt = SessionPolicy()
    _ = rebuilt.handle(.snapshot(original.snapshot()))
    var out: [String] = []
    if rebuilt.snapshot() != original.snapshot() { out.append("snapshot: \(original.streams) rebuilt as \(rebuilt.streams)") }
    if rebuilt.sessions != original.sessions { out.append("sessions differ") }
    for code in more {
        let event = RandomGraph.event(code)
        let a = decisions(original.handle(event))
        let b = decisions(rebuilt.handle(event))
        if a != b { return out + ["\(event): \(a) vs \(b)"] }
    }
    return out
}

@Suite("Sessions that become unmanaged (found by the property tests)")
struct UnmanagedTransitionTests {
    @Test("R41 a legacy stream whose role becomes unmanaged has the policy's silence undone (rebuild restores it exactly)")
    func silenceUndoneWhenUnmanaged() {
        // screen locked; Game stream 12 plays (soloAmbient: silenced, R20); its role becomes Production.
        let codes: [UInt32] = [21337, 39911, 11813, 44928]
        #expect(rebuildDiffers(codes) == [])
        var policy = SessionPolicy()
        for code in codes { _ = policy.handle(RandomGraph.event(code)) }
        #expect(policy.snapshot().streams[N(12)]?.silenced == false)
    }

    @Test("R13 a session that became unmanaged while interrupted is gone: it is not told ended when it comes back")
    func interruptedSessionForgottenWhenUnmanaged() {
        // Game stream 10 is held back by a call (began); its role becomes Production (the session
        // goes away), then Game again; the call's client turns soloAmbient and stream 10 plays.
        #expect(invariantProblems([20991, 21316, 22461, 35116, 1588, 39446, 9261]) == [])
        // The same with the node re-announced as Game instead of changed back.
        #expect(invariantProblems([20991, 21316, 22461, 35116, 20859, 39446, 9261]) == [])
    }
}

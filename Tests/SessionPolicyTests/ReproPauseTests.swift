import Testing
@testable import SessionPolicy

@Suite("Pauses of streams that become unmanaged")
struct UnmanagedPauseTests {
    @Test("R16 a policy-paused stream whose session became unmanaged is released when its owner re-activates it")
    func releasedWhenUnmanaged() {
        var checker = InvariantChecker()
        // Found by the property test: a Production stream of a client that declared
        // playback, was paused by the policy, and then withdrew its declaration.
        let codes: [UInt32] = [37843, 23788, 11591, 35911, 44222, 35840, 42642, 31457, 1668, 17366, 20332, 36926, 27203, 41103, 1640, 27101, 7537, 44795, 25340, 2563, 37405, 7060, 44712, 10737, 20468, 25991, 12801, 17077]
        for code in codes { checker.run(RandomGraph.event(code)) }
        #expect(checker.problems == [])
        for n in checker.policy.snapshot().streams.keys.sorted() { checker.run(.streamRemoved(n)) }
        #expect(checker.paused.isEmpty)
        #expect(checker.problems == [])
    }
}

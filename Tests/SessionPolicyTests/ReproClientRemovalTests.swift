import Testing
@testable import SessionPolicy

@Suite("Client removal (found by the property tests)")
struct ClientRemovalTests {
    @Test("R3 removing a client that declares through one of its streams sends no gain change for its other, removed streams")
    func noGainResetForRemovedStreams() {
        // Client 2: Phone stream 14 and stream 11 declaring (bogus mode); 11 plays; client 1
        // ducks both; client 2 goes away. No duck may name node 14, gone at the end of the event.
        #expect(invariantProblems([42199, 46621, 37120, 39996, 44178]) == [])
    }
}

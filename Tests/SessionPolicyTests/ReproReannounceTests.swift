import Testing
@testable import SessionPolicy

@Suite("Re-announced nodes (found by the property tests)")
struct ReannounceTests {
    @Test("R13 a re-announced legacy node keeps its session's interruption: no second began")
    func legacyNodeKeepsInterruption() {
        // A call is active; legacy stream 14 is held back (began); node 14 is re-announced
        // (role Game) and plays: still held back, but no second began.
        #expect(invariantProblems([24506, 19759, 18048, 1807, 12897]) == [])
        // The same with a Navigation stream re-announced as Movie.
        #expect(invariantProblems([33531, 46440, 40004, 37887, 46866]) == [])
    }

    @Test("R13 a re-announced declaring stream keeps its client session's interruption: no second began")
    func declaringStreamKeepsInterruption() {
        // Client 1 declares through stream 10 and is interrupted by client 2 (playback); node 10
        // is re-announced with another declaration; client 2 becomes a call; stream 10 plays.
        #expect(invariantProblems([27591, 5813, 35022, 45411, 24330, 19277]) == [])
    }
}

import Testing
import PipeWireFacts
@testable import SessionPolicy

/// Nodes announced again under the same id while their session is interrupted (sequences
/// first found by the property tests, written out event by event).
@Suite("Re-announced nodes")
struct ReannouncedNodeTests {
    @Test("R13 a re-announced legacy node keeps its session's interruption: no second began")
    func r13AReannouncedLegacyNodeKeepsItsSessionsInterruption() {
        // A call is active; legacy stream 14 is held back (began); node 14 is re-announced
        // (role Game) and plays: still held back, but no second began.
        #expect(invariantProblems([
            .clientChanged(C(1), ["audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat", "audio.session.active": "true"]),
            .streamAdded(N(14), client: C(2), direction: .output, [:]),
            .streamActivatedByOwner(N(14)),
            .streamAdded(N(14), client: C(2), direction: .output, ["media.role": "Game"]),
            .streamRunning(N(14), true),
        ]) == [])
        // The same with a Navigation stream re-announced as Movie.
        #expect(invariantProblems([
            .streamAdded(N(10), client: C(1), direction: .output, ["media.role": "Navigation"]),
            .clientChanged(C(2), ["audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat", "audio.session.active": "true"]),
            .streamActivatedByOwner(N(10)),
            .streamAdded(N(10), client: C(1), direction: .output, ["media.role": "Movie"]),
            .streamRunning(N(10), true),
        ]) == [])
    }

    @Test("R13 a re-announced declaring stream keeps its client session's interruption: no second began")
    func r13AReannouncedDeclaringStreamKeepsItsClientSessionsInterruption() {
        // Client 1 declares through stream 10 and is interrupted by client 2 (playback); node 10
        // is re-announced with another declaration; client 2 becomes a call; stream 10 plays.
        #expect(invariantProblems([
            .streamAdded(N(10), client: C(1), direction: .output, ["audio.session.mode": "bogus"]),
            .streamRunning(N(10), true),
            .clientChanged(C(2), ["audio.session.category": "playback", "audio.session.active": "true", "audio.session.deactivation": "notifyOthersOnDeactivation"]),
            .streamAdded(N(10), client: C(1), direction: .output, ["audio.session.category": "playback"]),
            .clientChanged(C(2), ["audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat", "audio.session.active": "true"]),
            .streamRunning(N(10), true),
        ]) == [])
    }
}

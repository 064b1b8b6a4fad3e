import Testing
import PipeWireFacts
@testable import SessionPolicy

/// Removing a client whose streams are gone with it (a sequence first found by the
/// property tests, written out event by event).
@Suite("Client removal")
struct ClientRemovalTests {
    @Test("R3 removing a client that declares through one of its streams sends no gain change for its other, removed streams")
    func r3RemovingAClientSendsNoGainChangeForItsRemovedStreams() {
        // Client 2: Phone stream 14 and stream 11 declaring (bogus mode); 11 plays; client 1
        // ducks both; client 2 goes away. No duck may name node 14, gone at the end of the event.
        #expect(invariantProblems([
            .streamAdded(N(14), client: C(2), direction: .output, ["media.role": "Phone"]),
            .streamAdded(N(11), client: C(2), direction: .output, ["audio.session.mode": "bogus"]),
            .streamRunning(N(11), true),
            .clientAdded(C(1), ["audio.session.category": "playback", "audio.session.options": "duckOthers", "audio.session.active": "true"]),
            .clientRemoved(C(2)),
        ]) == [])
    }
}

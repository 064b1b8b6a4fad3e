import Testing
import PipeWireFacts
@testable import SessionPolicy

/// Pauses of streams whose session becomes unmanaged (a sequence first found by the
/// property tests, written out event by event).
@Suite("Pauses of streams that become unmanaged")
struct UnmanagedPauseTests {
    @Test("R16 a policy-paused stream whose session became unmanaged is released when its owner re-activates it")
    func r16APausedStreamWhoseSessionBecameUnmanagedIsReleasedWhenItsOwnerReactivatesIt() {
        var checker = InvariantChecker()
        // A Production stream of a client that declared playback, was paused by the policy,
        // and then withdrew its declaration.
        let events: [Event] = [
            .streamAdded(N(14), client: C(2), direction: .output, ["media.role": "Movie"]),
            .streamRunning(N(11), true),
            locked(true),
            .streamRunning(N(10), false),
            .clientRemoved(C(1)),
            .clientRemoved(C(1)),
            .streamRunning(N(10), true),
            locked(false),
            silent(true),
            .streamActivatedByOwner(N(13)),
            .streamChanged(N(10), ["media.role": "Music"]),
            .endpointAdded(N(50), kind: .sink, headphonesProps),
            .headphonePortRead(N(50)),
            .endpointRemoved(N(5)),
            .streamRunning(N(12), false),
            .headphonePortLost(N(50)),
            locked(true),
            .headphonePortRestored(N(50)),
            // Client 3's Production stream 12 comes and plays.
            .streamAdded(N(12), client: C(3), direction: .output, ["media.role": "Production"]),
            silent(false),
            .endpointRemoved(N(60)),
            .streamRunning(N(12), true),
            // Client 3 declares playback, then withdraws its declaration.
            .clientChanged(C(3), ["audio.session.category": "playback", "audio.session.active": "true", "audio.session.deactivation": "notifyOthersOnDeactivation"]),
            .streamActivatedByOwner(N(14)),
            .clientChanged(C(3), [:]),
            .streamActivatedByOwner(N(10)),
            .streamRemoved(N(15)),
            locked(true),
            // Its owner re-activates stream 12.
            .streamRunning(N(12), true),
        ]
        for event in events { checker.run(event) }
        #expect(checker.problems == [])
        for n in checker.policy.snapshot().streams.keys.sorted() { checker.run(.streamRemoved(n)) }
        #expect(checker.paused.isEmpty)
        #expect(checker.problems == [])
    }
}

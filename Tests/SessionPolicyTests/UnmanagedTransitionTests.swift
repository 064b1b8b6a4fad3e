import Testing
import PipeWireFacts
@testable import SessionPolicy

/// Sessions whose role or declaration makes them unmanaged (sequences first found by the
/// property tests, written out event by event).
@Suite("Sessions that become unmanaged")
struct UnmanagedTransitionTests {
    @Test("R41 a legacy stream whose role becomes unmanaged has the policy's silence undone (rebuild restores it exactly)")
    func r41ALegacyStreamWhoseRoleBecomesUnmanagedHasThePolicysSilenceUndone() {
        // screen locked; Game stream 12 plays (soloAmbient: silenced, R20); its role becomes Production.
        let events: [Event] = [
            locked(true),
            .streamAdded(N(12), client: C(3), direction: .output, ["media.role": "Game"]),
            .streamRunning(N(12), true),
            .streamChanged(N(12), ["media.role": "Production"]),
        ]
        #expect(rebuildDiffers(events) == [])
        var policy = SessionPolicy()
        for event in events { _ = policy.handle(event) }
        #expect(policy.snapshot().streams[N(12)]?.silenced == false)
    }

    @Test("R13 a session that became unmanaged while interrupted is gone: it is not told ended when it comes back")
    func r13ASessionThatBecameUnmanagedWhileInterruptedIsNotToldEndedWhenItComesBack() {
        // Game stream 10 is held back by a call (began); its role becomes Production (the session
        // goes away), then Game again; the call's client turns soloAmbient and stream 10 plays.
        #expect(invariantProblems([
            .streamAdded(N(10), client: C(1), direction: .output, ["media.role": "Game"]),
            .clientChanged(C(3), ["audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat", "audio.session.active": "true"]),
            .streamRunning(N(10), true),
            .streamChanged(N(10), ["media.role": "Production"]),
            .streamChanged(N(10), ["media.role": "Game"]),
            .clientAdded(C(3), ["audio.session.category": "soloAmbient", "audio.session.active": "true"]),
            .streamRunning(N(10), true),
        ]) == [])
        // The same with the node re-announced as Game instead of changed back.
        #expect(invariantProblems([
            .streamAdded(N(10), client: C(1), direction: .output, ["media.role": "Game"]),
            .clientChanged(C(3), ["audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat", "audio.session.active": "true"]),
            .streamRunning(N(10), true),
            .streamChanged(N(10), ["media.role": "Production"]),
            .streamAdded(N(10), client: C(1), direction: .output, ["media.role": "Game"]),
            .clientAdded(C(3), ["audio.session.category": "soloAmbient", "audio.session.active": "true"]),
            .streamRunning(N(10), true),
        ]) == [])
    }
}

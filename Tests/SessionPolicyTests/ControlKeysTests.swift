import Testing
import PipeWireFacts
@testable import SessionPolicy

@Suite("Control keys are not declarations")
struct ControlKeysTests {
    @Test("a client that only sets audio.session.control.* is not a declared session")
    func aClientThatOnlySetsControlKeysIsNotADeclaredSession() {
        var policy = SessionPolicy(configuration: PolicyConfiguration())
        _ = policy.handle(.clientAdded(ClientID(40), ["application.name": "pw-session", "audio.session.control.silent-mode": "true"]))
        #expect(policy.sessions.isEmpty)
        _ = policy.handle(.clientChanged(ClientID(40), ["application.name": "pw-session", "audio.session.category": "playback"]))
        #expect(policy.sessions.count == 1)
    }
}

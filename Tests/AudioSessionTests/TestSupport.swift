import AudioSession
import Foundation

/// A session that reaches no PipeWire: every refusal the tests get from it is made before
/// anything is sent.
func offlineSession() -> AudioSession {
    setenv("PIPEWIRE_REMOTE", "/nonexistent/audio-session-test-socket", 1)
    return AudioSession(configuration: .init(activationTimeout: .milliseconds(300)))
}

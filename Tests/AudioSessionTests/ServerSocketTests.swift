@testable import AudioSession
import Testing

/// The library calls `pw_context_connect` only when a socket it would try exists:
/// libpipewire 0.3.65's failed connect can close a descriptor twice, closing one that
/// another thread of the program had opened meanwhile. It must look where libpipewire
/// looks, the system's directory included, also when no runtime directory is set.
@Suite struct ServerSocketTests {
    @Test func withNoRuntimeDirectoryTheSystemsSocketIsTheOneTried() {
        #expect(PipeWireConnection.serverSocketPaths(environment: [:]) == ["/run/pipewire/pipewire-0"])
    }

    @Test func aNameIsTriedInTheRuntimeDirectoryThenInTheSystemsOne() {
        let env = ["XDG_RUNTIME_DIR": "/run/user/1000", "PIPEWIRE_REMOTE": "other"]
        #expect(PipeWireConnection.serverSocketPaths(environment: env) == ["/run/user/1000/other", "/run/pipewire/other"])
        // PIPEWIRE_RUNTIME_DIR comes before XDG_RUNTIME_DIR.
        let both = ["XDG_RUNTIME_DIR": "/run/user/1000", "PIPEWIRE_RUNTIME_DIR": "/tmp/pw"]
        #expect(PipeWireConnection.serverSocketPaths(environment: both) == ["/tmp/pw/pipewire-0", "/run/pipewire/pipewire-0"])
    }

    @Test func anAbsoluteRemoteIsTriedAlone() {
        let env = ["XDG_RUNTIME_DIR": "/run/user/1000", "PIPEWIRE_REMOTE": "/tmp/sandbox/pipewire-0"]
        #expect(PipeWireConnection.serverSocketPaths(environment: env) == ["/tmp/sandbox/pipewire-0"])
    }
}

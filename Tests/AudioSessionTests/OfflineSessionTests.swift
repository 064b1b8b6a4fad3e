import AudioSession
import Foundation
import Testing

@Suite struct OfflineSessionTests {
    /// Without PipeWire the library keeps trying to connect. libpipewire 0.3.65's
    /// failed connect could close a descriptor twice, closing whatever another thread
    /// had opened meanwhile (it ended this test process early, with status 0).
    @Test func anAudioSessionWithoutPipeWireLeavesTheProcessDescriptorsAlone() async throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let s = offlineSession()
        try s.setCategory(.playback)
        // Long enough for several reconnect attempts (reconnectInterval).
        try await Task.sleep(for: .seconds(3))
        #expect(fcntl(fds[0], F_GETFD) != -1)
        #expect(fcntl(fds[1], F_GETFD) != -1)
        #expect(s.category == .playback)
    }
}

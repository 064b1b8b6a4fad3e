import Testing
@testable import SessionPolicy

@Suite("Duckers whose declaration changes (found by the property tests)")
struct DuckerChangeTests {
    @Test("R3 an active ducker whose priority drops (voicePrompt to playback) stops ducking a prompt at once")
    func duckerPriorityDropRefreshesOthers() {
        // Client 2 (voicePrompt, duckOthers) and client 1 (voicePrompt, duckOthers) duck each
        // other; client 2 re-declares playback + duckOthers: a prompt is not ducked by normal
        // priority, so client 1's stream 10 must go back to 1 (a rebuild computes 1).
        let codes: [UInt32] = [15398, 39295, 14015, 25215, 9600, 43301, 8867]
        #expect(rebuildDiffers(codes) == [])
        var policy = SessionPolicy()
        for code in codes { _ = policy.handle(RandomGraph.event(code)) }
        #expect(policy.snapshot().streams[N(10)]?.duckGain == 1)
    }
}

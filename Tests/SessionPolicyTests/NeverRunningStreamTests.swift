import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Streams that never run")
struct NeverRunningStreamTests {
    @Test("R1 R3 a stream that is created but never runs (GStreamer pulsesink's probe) interrupts and ducks nobody")
    func r1R3AStreamThatIsCreatedButNeverRunsInterruptsAndDucksNobody() {
        var w = World()
        w.legacy(10, client: 2, role: "Music")
        w.play(10)
        // A wrapped prompt's probe stream, and a legacy navigation stream, neither running.
        let probe = w.decide(.streamAdded(N(20), client: C(3), direction: .output,
                                          ["audio.session.category": "playback", "audio.session.mode": "voicePrompt",
                                           "audio.session.options": "duckOthers,interruptSpokenAudioAndMixWithOthers"]))
        #expect(probe.isEmpty, "\(probe)")
        w.legacy(30, client: 4, role: "Phone")
        #expect(w.policy.sessions[legacyS(10)]?.interrupted == false)
        #expect(w.decide(.streamRemoved(N(20)), .streamRemoved(N(30))).isEmpty)
    }
}

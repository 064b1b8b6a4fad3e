import Testing
import PipeWireFacts
@testable import SessionPolicy

/// Duckers whose declaration changes while they duck (a sequence first found by the
/// property tests, written out event by event).
@Suite("Duckers whose declaration changes")
struct DuckerChangeTests {
    @Test("R3 an active ducker whose priority drops (voicePrompt to playback) stops ducking a prompt at once")
    func r3ADuckerWhosePriorityDropsStopsDuckingAPromptAtOnce() {
        // Client 2 (voicePrompt, duckOthers) and client 1 (voicePrompt, duckOthers) duck each
        // other; client 2 re-declares playback + duckOthers: a prompt is not ducked by normal
        // priority, so client 1's stream 10 must go back to 1 (a rebuild computes 1).
        let events: [Event] = [
            .clientChanged(C(1), ["audio.session.category": "playback", "audio.session.mode": "voicePrompt", "audio.session.options": "duckOthers,interruptSpokenAudioAndMixWithOthers", "audio.session.active": "false"]),
            .streamAdded(N(14), client: C(2), direction: .output, ["media.role": "Music"]),
            .clientChanged(C(2), ["audio.session.category": "playback", "audio.session.mode": "voicePrompt", "audio.session.options": "duckOthers,interruptSpokenAudioAndMixWithOthers"]),
            .streamAdded(N(10), client: C(1), direction: .output, ["media.role": "Accessibility"]),
            .streamActivatedByOwner(N(14)),
            .streamRunning(N(10), true),
            .clientChanged(C(2), ["audio.session.category": "playback", "audio.session.options": "duckOthers", "audio.session.active": "true"]),
        ]
        #expect(rebuildDiffers(events) == [])
        var policy = SessionPolicy()
        for event in events { _ = policy.handle(event) }
        #expect(policy.snapshot().streams[N(10)]?.duckGain == 1)
    }
}

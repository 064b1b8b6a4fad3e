import SessionPolicy
import PipeWireFacts
import Testing

/// Wrapped programs, whose declaration reaches the policy on their stream or their client
/// (PULSE_PROP), and clients of the AudioSession library (first found by the module's
/// integration tests on the live graph).
@Suite struct WrappedProgramTests {
    @Test("R7 S2 a wrapped program's stream-carried notifyOthersOnDeactivation resumes the music when its stream goes")
    func r7S2AWrappedProgramsStreamCarriedNotifyOthersResumesTheMusicWhenItsStreamGoes() {
        var w = World()
        w.legacy(10, client: 2, role: "Music")
        w.play(10)
        w.stream(30, client: 3, .output, [
            "audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat",
            "audio.session.deactivation": "notifyOthersOnDeactivation",
        ])
        #expect(w.decide(.streamRunning(N(30), true)).contains(.pause(N(10))))
        let out = w.decide(.streamRemoved(N(30)))
        #expect(out.contains(ended(legacyS(10), resume: true)), "\(out)")
        #expect(out.contains(.resume(N(10))), "\(out)")
    }

    @Test("R15 S4 a wrapped spokenAudio program (declaration on its stream) is resumed by the policy after the prompt")
    func r15S4AWrappedSpokenAudioProgramIsResumedByThePolicyAfterThePrompt() {
        var w = World()
        w.stream(10, client: 2, .output, ["audio.session.category": "playback", "audio.session.mode": "spokenAudio"])
        w.play(10)
        w.legacy(20, client: 3, role: "Navigation")
        #expect(w.decide(.streamRunning(N(20), true)).contains(.pause(N(10))))
        let out = w.decide(.streamRemoved(N(20)))
        #expect(out.contains(ended(clientS(2), resume: true)), "\(out)")
        #expect(out.contains(.resume(N(10))), "\(out)")
    }

    @Test("R15 S4 a PulseAudio program wrapped with PULSE_PROP (declaration on its client and its stream) is resumed by the policy")
    func r15S4APulseAudioProgramWrappedWithPulsePropIsResumedByThePolicy() {
        var w = World()
        let podcast: Properties = ["audio.session.category": "playback", "audio.session.mode": "spokenAudio"]
        w.declared(2, "playback", mode: "spokenAudio", library: false)
        w.stream(10, client: 2, .output, podcast)
        w.play(10)
        w.legacy(20, client: 3, role: "Phone")
        #expect(w.decide(.streamRunning(N(20), true)).contains(.pause(N(10))))
        let out = w.decide(.streamRemoved(N(20)))
        #expect(out.contains(ended(clientS(2), resume: true)), "\(out)")
        #expect(out.contains(.resume(N(10))), "\(out)")
    }

    @Test("R15 a client of the AudioSession library resumes itself: the policy only tells it")
    func r15AClientOfTheAudioSessionLibraryResumesItself() {
        var w = World()
        w.declared(2, "playback", mode: "spokenAudio")
        w.stream(10, client: 2)
        w.play(10)
        w.legacy(20, client: 3, role: "Phone")
        #expect(w.decide(.streamRunning(N(20), true)).contains(.pause(N(10))))
        let out = w.decide(.streamRemoved(N(20)))
        #expect(out.contains(ended(clientS(2), resume: true)), "\(out)")
        #expect(!out.contains(.resume(N(10))), "\(out)")
    }
}

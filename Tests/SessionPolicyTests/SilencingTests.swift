import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Silencing (§7)")
struct SilencingTests {
    @Test("R20 silent mode and screen lock silence ambient and soloAmbient output, not playback")
    func r20SilentModeAndScreenLockSilenceAmbientAndSoloAmbientOutputNotPlayback() {
        var w = World()
        w.declared(1, "ambient")
        w.stream(10, client: 1)
        w.declared(2, "playback")
        w.stream(20, client: 2)
        w.play(10)
        w.play(20)
        #expect(w.decide(silent(true)) == [.silence(N(10), true)])
        #expect(w.decide(locked(true)) == [])
        #expect(w.decide(silent(false)) == [])
        #expect(w.decide(locked(false)) == [.silence(N(10), false)])

        var v = World()
        v.declared(1, "soloAmbient")
        v.stream(10, client: 1)
        v.play(10)
        #expect(v.decide(locked(true)) == [.silence(N(10), true)])
    }

    @Test("R21 an active record session silences alerts and ambient output")
    func r21AnActiveRecordSessionSilencesAlertsAndAmbientOutput() {
        var w = World()
        w.legacy(10, client: 1, role: "Notification")
        w.declared(3, "ambient")
        w.stream(30, client: 3)
        w.play(10)
        w.play(30)
        w.declared(2, "record")
        #expect(w.activate(2) == [activated(clientS(2)), .silence(N(30), true), .silence(N(10), true)])
        #expect(w.deactivate(2, notifyOthers: false) == [activated(clientS(2)), .silence(N(30), false), .silence(N(10), false)])
    }

    @Test("R22 silenceSecondaryAudioHint flips with other primary audio; isOtherAudioPlaying counts ambient")
    func r22SilenceSecondaryAudioHintFlipsWithOtherPrimaryAudio() {
        var w = World()
        w.declared(1, "ambient")
        w.stream(10, client: 1)
        w.play(10)
        #expect(w.policy.global.isOtherAudioPlaying == true)
        #expect(w.policy.global.secondaryAudioShouldBeSilencedHint == false)
        w.legacy(20, client: 2, role: "Music")
        #expect(w.decide(.streamRunning(N(20), true)) == [.notify(clientS(1), .silenceSecondaryAudioHint(begin: true))])
        #expect(w.policy.global.secondaryAudioShouldBeSilencedHint == true)
        #expect(w.session(clientS(1))?.secondaryAudioShouldBeSilencedHint == true)
        #expect(w.decide(.streamRunning(N(20), false)) == [.notify(clientS(1), .silenceSecondaryAudioHint(begin: false))])
    }
}

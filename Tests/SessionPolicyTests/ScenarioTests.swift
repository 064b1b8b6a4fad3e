import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Scenarios (§11)")
struct ScenarioTests {
    @Test("S1 language app: playback plays with the screen locked and in silent mode; other audio is interrupted")
    func s1ALanguageAppPlaysWithTheScreenLockedAndInSilentModeAndInterruptsOtherAudio() {
        var w = World()
        w.legacy(20, client: 2, role: "Music")
        w.play(20)
        w.declared(1, "playback")
        w.stream(10, client: 1)
        #expect(w.activate(1) == [.pause(N(20)), began(legacyS(20)), activated(clientS(1))])
        #expect(w.decide(.streamRunning(N(10), true)) == [])
        #expect(w.decide(locked(true), silent(true)) == [])
        #expect(w.session(clientS(1))?.silenced == false)
    }

    @Test("S2 VoIP call interrupts music, which resumes after the call; a ringtone during the call is held back")
    func s2AVoIPCallInterruptsMusicWhichResumesAfterItAndHoldsBackARingtone() {
        var w = World()
        w.legacy(10, client: 2, role: "Music")
        w.play(10)
        w.declared(1, "playAndRecord", mode: "voiceChat")
        #expect(w.activate(1) == [.pause(N(10)), began(legacyS(10)), activated(clientS(1))])
        w.legacy(20, client: 3, role: "Notification")
        #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(20)), began(legacyS(20))])
        #expect(w.deactivate(1, notifyOthers: true) == [
            activated(clientS(1)), ended(legacyS(10), resume: true), .resume(N(10)),
            ended(legacyS(20), resume: true), .resume(N(20)),
        ])
    }

    @Test("S3 game: ambient when other audio plays at launch, soloAmbient otherwise; silenced by silent mode")
    func s3AGameIsAmbientWhenOtherAudioPlaysAtLaunchSoloAmbientOtherwise() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Game")
        w.play(10)
        #expect(w.decide(.streamRunning(N(20), true)) == [])
        #expect(w.session(legacyS(20))?.category == .ambient)
        #expect(w.decide(silent(true)) == [.silence(N(20), true)])

        var v = World()
        v.legacy(20, client: 2, role: "Game")
        v.play(20)
        #expect(v.session(legacyS(20))?.category == .soloAmbient)
        #expect(v.decide(silent(true)) == [.silence(N(20), true)])
    }

    @Test("S3 game: a stream whose role stops being Game has its new role's category, not the one its game activation chose")
    func s3AStreamThatStopsBeingAGameHasItsNewRolesCategory() {
        var w = World()
        w.legacy(20, client: 2, role: "Game")
        w.play(20)
        #expect(w.session(legacyS(20))?.category == .soloAmbient)
        _ = w.decide(.streamChanged(N(20), ["media.role": "Music"]))
        #expect(w.session(legacyS(20))?.category == .playback)
        // Back to Game: the category chosen at its activation applies again.
        _ = w.decide(.streamChanged(N(20), ["media.role": "Game"]))
        #expect(w.session(legacyS(20))?.category == .soloAmbient)
    }

    @Test("S4 navigation prompt ducks music to the duck level and back; a podcast pauses and resumes")
    func s4ANavigationPromptDucksMusicAndPausesAPodcastWhichBothComeBack() {
        let nav: (inout World) -> Void = { w in
            w.declared(1, "playback", mode: "voicePrompt", options: "duckOthers,interruptSpokenAudioAndMixWithOthers")
        }
        var w = World()
        w.legacy(10, client: 2, role: "Music")
        w.play(10)
        nav(&w)
        #expect(w.activate(1) == [activated(clientS(1)), .duck(N(10), gain: 0.2, rampMilliseconds: 250)])
        #expect(w.deactivate(1, notifyOthers: true) == [activated(clientS(1)), .duck(N(10), gain: 1, rampMilliseconds: 500)])

        var v = World()
        v.declared(3, "playback", mode: "spokenAudio")
        v.stream(30, client: 3)
        v.play(30)
        nav(&v)
        #expect(v.activate(1) == [.pause(N(30)), began(clientS(3)), activated(clientS(1))])
        #expect(v.deactivate(1, notifyOthers: true) == [activated(clientS(1)), ended(clientS(3), resume: true)])
        #expect(v.decide(.streamActivatedByOwner(N(30))) == [.resume(N(30))])
    }

    @Test("S5 blog app: UI sounds as alerts never interrupt anything")
    func s5UISoundsAsAlertsNeverInterruptAnything() {
        var w = World()
        w.legacy(10, client: 2, role: "Music")
        w.play(10)
        w.declared(1, "ambient")
        w.stream(11, client: 1)
        w.legacy(12, client: 1, role: "Event")
        #expect(w.decide(.streamRunning(N(11), true)) == [])
        #expect(w.decide(.streamRunning(N(11), false), .streamRunning(N(11), true)) == [])
        #expect(w.session(legacyS(10))?.active == true)
    }

    @Test("S6 music app A interrupted by music app B does not resume when B ends")
    func s6MusicAppAInterruptedByMusicAppBDoesNotResumeWhenBEnds() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Music")
        w.play(10)
        w.play(20)
        #expect(w.decide(.streamRunning(N(20), false)) == [ended(legacyS(10), resume: false)])
        #expect(w.decide(.streamRemoved(N(20))) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.pausedByPolicy == true)
    }

    @Test("S7 headphones unplugged: music pauses, nothing reaches the speakers, plugging back does not restart it")
    func s7UnpluggedHeadphonesPauseTheMusicAndNothingReachesTheSpeakers() {
        var w = World()
        w.sink(50, headphonesProps)
        w.when(.headphonePortRead(N(50)))
        w.sink(60, speakerProps)
        w.legacy(10, client: 1, role: "Music")
        w.link(1, 10, 50)
        w.play(10)
        #expect(w.decide(.headphonePortLost(N(50))) == [
            .pause(N(10)),
            .notify(legacyS(10), .routeChange(reason: .oldDeviceUnavailable, previous: Route(outputs: [headphonesPort]), current: Route())),
        ])
        #expect(w.decide(.linkRemoved(L(1)), .linkAdded(L(2), output: N(10), input: N(60))) == [])
        #expect(w.decide(.headphonePortRestored(N(50))) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.pausedByPolicy == true)
    }

    @Test("S8 podcast interrupted by a call resumes when the call is declined, or when it ends later")
    func s8APodcastInterruptedByACallResumesWhenTheCallIsDeclinedOrEnds() {
        for accepted in [false, true] {
            var w = World()
            w.legacy(10, client: 1, role: "Music")
            w.legacy(20, client: 2, role: "Phone")
            w.play(10)
            #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(10)), began(legacyS(10))])
            let end: Event = accepted ? .streamRemoved(N(20)) : .streamRunning(N(20), false)
            #expect(w.decide(end) == [ended(legacyS(10), resume: true), .resume(N(10))])
        }
    }
}

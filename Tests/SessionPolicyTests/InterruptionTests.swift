import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Interruptions (§6)")
struct InterruptionTests {
    @Test("R11 interruption began is delivered after every stream of the session is paused")
    func r11BeganIsDeliveredAfterEveryStreamOfTheSessionIsPaused() {
        var w = World()
        w.declared(1, "playback")
        w.stream(10, client: 1)
        w.stream(11, client: 1)
        w.play(10)
        w.play(11)
        w.legacy(20, client: 2, role: "Music")
        #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(10)), .pause(N(11)), began(clientS(1))])
    }

    @Test("R12 began carries the reason: default, builtInMicMuted, routeDisconnected")
    func r12BeganCarriesTheReason() {
        var w = World()
        w.source(5, micProps)
        w.sink(50, headphonesProps)
        w.declared(1, "playAndRecord", extra: ["audio.session.prefers-interruption-on-route-disconnect": "true"])
        w.stream(10, client: 1, .input)
        w.link(1, 5, 10)
        w.play(10)
        #expect(w.decide(.endpointMuteChanged(N(5), muted: true)) == [.pause(N(10)), began(clientS(1), .builtInMicMuted)])

        var v = World()
        v.sink(50, headphonesProps)
        v.declared(1, "playback", extra: ["audio.session.prefers-interruption-on-route-disconnect": "true"])
        v.stream(10, client: 1)
        v.link(1, 10, 50)
        v.play(10)
        let fx = v.decide(.endpointRemoved(N(50)))
        #expect(fx.last == began(clientS(1), .routeDisconnected))

        var u = World()
        u.legacy(10, client: 1, role: "Music")
        u.legacy(20, client: 2, role: "Music")
        u.play(10)
        #expect(u.decide(.streamRunning(N(20), true)).last == began(legacyS(10), .default))
    }

    @Test("R13 a session interrupted again gets no second began")
    func r13ASessionInterruptedAgainGetsNoSecondBegan() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Music")
        w.legacy(30, client: 3, role: "Phone")
        w.play(10)
        w.play(20)
        #expect(w.decide(.streamRunning(N(30), true)) == [.pause(N(20)), began(legacyS(20))])
        // The call ends: 20 resumes; 10 stays interrupted by 20 and hears nothing.
        #expect(w.decide(.streamRunning(N(30), false)) == [ended(legacyS(20), resume: true), .resume(N(20))])
        #expect(w.session(legacyS(10))?.interrupted == true)
    }

    @Test("R13 R10 when an interrupter that held a call and the music ends, the call resumes first and the music stays interrupted, paused once")
    func r13TheHigherVictimResumesFirst() {
        var w = World()
        w.legacy(30, client: 3, role: "Phone")
        w.legacy(40, client: 4, role: "Phone")
        w.legacy(10, client: 1, role: "Music")
        w.play(30)
        #expect(w.decide(.streamRunning(N(40), true)) == [.pause(N(30)), began(legacyS(30))])
        // The music starts while the second call holds the audio: interrupted by that call.
        #expect(w.decide(.streamRunning(N(10), true)) == [.pause(N(10)), began(legacyS(10))])
        // The second call ends: the first resumes; the music, held back by it, neither plays
        // for an instant nor hears anything (R13).
        #expect(w.decide(.streamRunning(N(40), false)) == [ended(legacyS(30), resume: true), .resume(N(30))])
        #expect(w.session(legacyS(10))?.interrupted == true)
        #expect(w.policy.holdsPaused(N(10)))
    }

    @Test("R14 shouldResume only when the interrupter notified others and the session was playing")
    func r14ShouldResumeOnlyWhenTheInterrupterNotifiedOthersAndTheSessionWasPlaying() {
        var w = World()
        w.declared(1, "playback")
        _ = w.activate(1)  // active but not playing
        w.declared(2, "playback")
        #expect(w.activate(2) == [began(clientS(1)), activated(clientS(2))])
        #expect(w.deactivate(2, notifyOthers: true) == [activated(clientS(2)), ended(clientS(1), resume: false)])
    }

    @Test("R15 legacy streams are resumed by the policy on ended with shouldResume and stay paused otherwise")
    func r15LegacyStreamsAreResumedByThePolicyOnEndedWithShouldResumeAndStayPausedOtherwise() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Alarm")
        w.play(10)
        #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(10)), began(legacyS(10))])
        #expect(w.decide(.streamRunning(N(20), false)) == [ended(legacyS(10), resume: true), .resume(N(10))])

        var v = World()
        v.legacy(10, client: 1, role: "Music")
        v.legacy(20, client: 2, role: "Music")
        v.play(10)
        v.play(20)
        #expect(v.decide(.streamRunning(N(20), false)) == [ended(legacyS(10), resume: false)])
        #expect(v.policy.snapshot().streams[N(10)]?.pausedByPolicy == true)
    }

    @Test("R16 a session that reactivates on its own goes through arbitration again")
    func r16ASessionThatReactivatesOnItsOwnGoesThroughArbitrationAgain() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Music")
        w.play(10)
        w.play(20)
        #expect(w.decide(.streamActivatedByOwner(N(10))) == [
            .pause(N(20)), began(legacyS(20)), ended(legacyS(10), resume: false), .resume(N(10)),
        ])
        w.legacy(30, client: 3, role: "Phone")
        w.play(30)
        // During a call the user presses play on 20: refused, paused again, no second began.
        #expect(w.decide(.streamActivatedByOwner(N(20))) == [.pause(N(20))])
    }

    @Test("R17 alerts neither interrupt nor duck a session that prefers no interruptions from system alerts")
    func r17AlertsNeitherInterruptNorDuckASessionThatPrefersNoInterruptionsFromSystemAlerts() {
        var w = World()
        w.declared(1, "playback", extra: ["audio.session.prefers-no-interruptions-from-system-alerts": "true"])
        w.stream(10, client: 1)
        w.play(10)
        w.legacy(20, client: 2, role: "Alarm")
        #expect(w.decide(.streamRunning(N(20), true)) == [.notify(clientS(1), .silenceSecondaryAudioHint(begin: true))])
        #expect(w.session(clientS(1))?.active == true)

        var v = World { $0.alertsDuringPreferNoInterruptions = .holdBack }
        v.declared(1, "playback", extra: ["audio.session.prefers-no-interruptions-from-system-alerts": "true"])
        v.stream(10, client: 1)
        v.play(10)
        v.legacy(20, client: 2, role: "Notification")
        #expect(v.decide(.streamRunning(N(20), true)) == [.pause(N(20)), began(legacyS(20))])
    }

    @Test("R18 a program that pauses itself while interrupted is not resumed")
    func r18AProgramThatPausesItselfWhileInterruptedIsNotResumed() {
        var w = World()
        w.declared(1, "playback")
        w.stream(10, client: 1)
        w.play(10)
        w.declared(2, "playback")
        #expect(w.activate(2) == [.pause(N(10)), began(clientS(1)), activated(clientS(2))])
        #expect(w.deactivate(1, notifyOthers: false) == [activated(clientS(1))])
        #expect(w.deactivate(2, notifyOthers: true) == [activated(clientS(2)), ended(clientS(1), resume: false)])
    }

    @Test("R19 a muted input interrupts with builtInMicMuted and ends on unmute; override keeps it running")
    func r19AMutedInputInterruptsWithBuiltInMicMutedAndEndsOnUnmute() {
        var w = World()
        w.source(5, micProps)
        w.declared(1, "playAndRecord")
        w.stream(10, client: 1, .input)
        w.link(1, 5, 10)
        w.play(10)
        #expect(w.decide(.endpointMuteChanged(N(5), muted: true)) == [.pause(N(10)), began(clientS(1), .builtInMicMuted)])
        #expect(w.decide(.endpointMuteChanged(N(5), muted: false)) == [ended(clientS(1), resume: true)])

        var v = World()
        v.source(5, micProps)
        v.declared(1, "playAndRecord", options: "overrideMutedMicrophoneInterruption")
        v.stream(10, client: 1, .input)
        v.link(1, 5, 10)
        v.play(10)
        #expect(v.decide(.endpointMuteChanged(N(5), muted: true)) == [])
    }
}

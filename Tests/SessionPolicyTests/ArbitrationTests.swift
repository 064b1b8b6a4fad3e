import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Activation and arbitration (§5)")
struct ArbitrationTests {
    @Test("R1 activating a non-mixable session interrupts the active non-mixable one: last in wins")
    func r1ActivatingANonMixableSessionInterruptsTheActiveNonMixableOne() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Music")
        w.play(10)
        #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(10)), began(legacyS(10))])
        #expect(w.session(legacyS(20))?.active == true)
        #expect(w.session(legacyS(10))?.interrupted == true)
    }

    @Test("R2 a mixable session neither interrupts nor is interrupted by a non-mixable one")
    func r2AMixableSessionNeitherInterruptsNorIsInterruptedByANonMixableOne() {
        var w = World()
        w.legacy(10, client: 1, role: nil)  // desktop profile: playback + mixWithOthers
        w.legacy(20, client: 2, role: "Music")
        w.play(10)
        #expect(w.decide(.streamRunning(N(20), true)) == [.notify(legacyS(10), .silenceSecondaryAudioHint(begin: true))])
        w.declared(3, "ambient")
        #expect(w.activate(3) == [activated(clientS(3))])
        #expect(w.session(legacyS(10))?.active == true)
        #expect(w.session(legacyS(20))?.active == true)
    }

    @Test("R3 duckOthers ducks other output from activation to deactivation, never stacking below the level")
    func r3DuckOthersDucksOtherOutputFromActivationToDeactivationNeverStackingBelowTheLevel() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Navigation")
        w.play(10)
        #expect(w.decide(.streamRunning(N(20), true)) == [.duck(N(10), gain: 0.2, rampMilliseconds: 250)])
        w.declared(3, "playback", options: "duckOthers")
        #expect(w.activate(3) == [activated(clientS(3))])
        #expect(w.decide(.streamRunning(N(20), false)) == [])
        #expect(w.session(legacyS(10))?.duckGain == 0.2)
        #expect(w.deactivate(3, notifyOthers: false) == [activated(clientS(3)), .duck(N(10), gain: 1, rampMilliseconds: 500)])
    }

    @Test("R4 interruptSpokenAudioAndMixWithOthers interrupts spokenAudio sessions only")
    func r4InterruptSpokenAudioAndMixWithOthersInterruptsSpokenAudioSessionsOnly() {
        var w = World()
        w.declared(1, "playback", mode: "spokenAudio")
        w.stream(10, client: 1)
        w.legacy(30, client: 3, role: "Accessibility")
        w.legacy(20, client: 2, role: "Navigation")
        w.play(10)
        w.play(30)
        #expect(w.decide(.streamRunning(N(20), true)) == [
            .pause(N(10)), began(clientS(1)), .duck(N(30), gain: 0.2, rampMilliseconds: 250),
            .notify(legacyS(30), .silenceSecondaryAudioHint(begin: false)),
        ])
        #expect(w.session(legacyS(30))?.interrupted == false)
        #expect(w.decide(.streamRunning(N(20), false)) == [ended(clientS(1), resume: true), .duck(N(30), gain: 1, rampMilliseconds: 500)])
    }

    @Test("R5 a category change applies at once to an active session, at next activation to an inactive one")
    func r5ACategoryChangeAppliesAtOnceToAnActiveSessionAtNextActivationToAnInactiveOne() {
        var w = World()
        w.legacy(20, client: 2, role: "Music")
        w.play(20)
        w.declared(1, "ambient")
        w.stream(10, client: 1)
        w.play(10)
        #expect(w.set(1, ["audio.session.category": "playback"]) == [
            .pause(N(20)), began(legacyS(20)), .notify(clientS(1), .silenceSecondaryAudioHint(begin: false)),
        ])
        #expect(w.session(clientS(1))?.category == .playback)
        var v = World()
        v.legacy(20, client: 2, role: "Music")
        v.play(20)
        v.declared(3, "ambient")
        #expect(v.set(3, ["audio.session.category": "playback"]) == [])
        #expect(v.activate(3) == [.pause(N(20)), began(legacyS(20)), activated(clientS(3))])
    }

    @Test("R6 activation fails with insufficientPriority during a call and cannotInterruptOthers when forbidden")
    func r6ActivationFailsWithInsufficientPriorityDuringACallAndCannotInterruptOthersWhenForbidden() {
        var w = World()
        w.declared(1, "playAndRecord", mode: "voiceChat")
        _ = w.activate(1)
        w.declared(3, "playback")
        let result = w.activate(3)
        #expect(result.count == 1)
        #expect(result.first.map(refused(clientS(3), .insufficientPriority)) == true)
        if case .notify(_, .activationResult(.failure(let e))) = result.first {
            #expect(e.message.hasSuffix("[R6]"))
        }
        w.legacy(20, client: 2, role: "Music")
        #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(20)), began(legacyS(20))])

        var v = World { $0.cannotInterruptApplications = ["quiet"] }
        v.legacy(30, client: 5, role: "Music")
        v.play(30)
        v.declared(4, "playback", extra: ["application.name": "quiet"])
        let r = v.activate(4)
        #expect(r.count == 1)
        #expect(r.first.map(refused(clientS(4), .cannotInterruptOthers)) == true)
        #expect(v.session(legacyS(30))?.active == true)
    }

    @Test("R7 deactivating with notifyOthersOnDeactivation ends interruptions with shouldResume; without it, without")
    func r7DeactivatingWithNotifyOthersOnDeactivationEndsInterruptionsWithShouldResume() {
        for notifyOthers in [true, false] {
            var w = World()
            w.legacy(10, client: 1, role: "Music")
            w.play(10)
            w.declared(2, "playback")
            #expect(w.activate(2) == [.pause(N(10)), began(legacyS(10)), activated(clientS(2))])
            let expected: [Effect] =
                notifyOthers
                ? [activated(clientS(2)), ended(legacyS(10), resume: true), .resume(N(10))]
                : [activated(clientS(2)), ended(legacyS(10), resume: false)]
            #expect(w.deactivate(2, notifyOthers: notifyOthers) == expected)
        }
    }

    @Test("R8 deactivation with running streams succeeds with an isBusy warning")
    func r8DeactivationWithRunningStreamsSucceedsWithAnIsBusyWarning() {
        var w = World()
        w.declared(1, "playback")
        w.stream(10, client: 1)
        w.play(10)
        #expect(w.deactivate(1, notifyOthers: false) == [activated(clientS(1), .isBusy)])
        #expect(w.session(clientS(1))?.active == false)
    }

    @Test("R10 the phone always wins: a call interrupts mixable sessions too, except accessibility")
    func r10ThePhoneAlwaysWinsACallInterruptsMixableSessionsTooExceptAccessibility() {
        var w = World()
        w.legacy(10, client: 1, role: nil)
        w.legacy(30, client: 3, role: "Accessibility")
        w.legacy(20, client: 2, role: "Phone")
        w.play(10)
        w.play(30)
        #expect(w.decide(.streamRunning(N(20), true)) == [
            .pause(N(10)), began(legacyS(10)), .notify(legacyS(30), .silenceSecondaryAudioHint(begin: true)),
        ])
        #expect(w.session(legacyS(20))?.priority == .call)

        var v = World { $0.callPriorityApplications = ["phone-app"] }
        v.legacy(10, client: 1, role: "Music")
        v.legacy(20, client: 2, role: "Phone")  // application.name app2: may not claim call priority
        #expect(v.session(legacyS(20))?.priority == .normal)
    }
}

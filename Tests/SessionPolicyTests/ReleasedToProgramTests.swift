import SessionPolicy
import PipeWireFacts
import Testing

/// A legacy stream whose program paused itself after the policy paused it (its MPRIS
/// player, told by the bridge): the policy lets go of its pause (docs/mpris.md).
@Suite("Streams released to their program (MPRIS bridge)")
struct ReleasedToProgramTests {
    @Test("R15 a released stream is not resumed by the policy on ended with shouldResume: its program resumes it")
    func r15AReleasedStreamIsNotResumedByThePolicyItsProgramResumesIt() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Phone")
        w.play(10)
        #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(10)), began(legacyS(10))])
        #expect(w.decide(.streamReleasedToProgram(N(10))) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.pausedByPolicy == false)
        // The call ends: the session hears ended with shouldResume, and no graph resume comes.
        #expect(w.decide(.streamRunning(N(20), false)) == [ended(legacyS(10), resume: true)])
        #expect(w.session(legacyS(10))?.active == false)
        // The player's own Play (its node re-activated) is an activation like any other.
        #expect(w.decide(.streamActivatedByOwner(N(10))) == [])
        #expect(w.session(legacyS(10))?.active == true)
    }

    @Test("R15 R18 a stream released before the module confirms the policy's pause did not pause itself: it resumes after the call")
    func r15R18AReleaseAheadOfThePausesConfirmationIsNotASelfPause() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Phone")
        w.play(10)
        #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(10)), began(legacyS(10))])
        // The player reports Paused (the bridge's Pause) before the node's stop reaches the
        // policy: the stop that follows is the module's pause taking effect.
        _ = w.decide(.streamReleasedToProgram(N(10)))
        #expect(w.decide(.streamRunning(N(10), false)) == [])
        #expect(w.decide(.streamRunning(N(20), false)) == [ended(legacyS(10), resume: true)])
    }

    @Test("R15 R18 R42 in whatever order the player's reports and the node's events arrive, a governed player faded out for a call fades back in after it")
    func r15R18R42EveryOrderOfReportsAndNodeEventsEndsWithTheMusicBack() {
        let player = "org.mpris.MediaPlayer2.firefox.instance_1_5"
        let paused = Event.playerReportChanged(C(70), PlayerReport(governed: [N(10): player], released: [N(10)]))
        let playing = Event.playerReportChanged(C(70), PlayerReport(governed: [N(10): player], released: []))
        let fadedOut = Event.streamFadedOut(N(10)), stopped = Event.streamRunning(N(10), false)
        let activated = Event.streamActivatedByOwner(N(10)), running = Event.streamRunning(N(10), true)
        // During the call: the module's fade reaches silence; the node stops (the module's
        // pause, or the program's own, or never, as Chromium keeps writing silence); the
        // player reports Paused.
        let during: [[Event]] = [
            [fadedOut, stopped, paused], [fadedOut, paused, stopped], [stopped, fadedOut, paused],
            [stopped, paused, fadedOut], [paused, fadedOut, stopped], [paused, stopped, fadedOut],
            [fadedOut, paused], [paused, fadedOut],
        ]
        // After it: the player reports Playing; its node starts (the policy's resume, or the
        // program's own activation first).
        let after: [[Event]] = [[playing], [playing, running], [activated, running, playing],
                                [activated, playing, running], [running, playing]]
        for d in during {
            for a in after {
                var w = World {
                    $0 = .moduleFades
                    $0.daemonUserID = 1000
                }
                w.legacy(10, client: 1, role: "Music")
                w.play(10)
                w.legacy(30, client: 3, role: "Phone")
                w.when(.clientAdded(C(70), [:], identity: ClientIdentity(uid: 1000)))
                var fx = w.decide(.streamRunning(N(30), true))
                for e in d { fx += w.decide(e) }
                let end = w.decide(.streamRunning(N(30), false))
                #expect(end.first == ended(legacyS(10), resume: true), "\(d): \(end)")
                fx += end
                for e in a { fx += w.decide(e) }
                let st = w.policy.snapshot().streams[N(10)]
                let fades = fx.filter { if case .fade(N(10), _, _) = $0 { return true } else { return false } }
                #expect(st?.pausedByPolicy == false && st?.pauseReleased == false, "\(d) then \(a)")
                #expect(st?.fade == StreamFade.none && fades.last == .fade(N(10), gain: 1, milliseconds: 500),
                        "\(d) then \(a): \(fx)")
            }
        }
    }

    @Test("R16 a released stream that its program starts during the call is refused and paused again")
    func r16AReleasedStreamThatItsProgramStartsDuringTheCallIsRefused() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Phone")
        w.play(10)
        _ = w.decide(.streamRunning(N(20), true))
        _ = w.decide(.streamReleasedToProgram(N(10)))
        #expect(w.decide(.streamActivatedByOwner(N(10))) == [.pause(N(10))])
        #expect(w.policy.snapshot().streams[N(10)]?.pausedByPolicy == true)
    }

    @Test("A release of a stream the policy does not hold changes nothing")
    func aReleaseOfAStreamThePolicyDoesNotHoldChangesNothing() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.play(10)
        #expect(w.decide(.streamReleasedToProgram(N(10))) == [])
        #expect(w.decide(.streamReleasedToProgram(N(99))) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.running == true)
        #expect(w.session(legacyS(10))?.active == true)
    }
}

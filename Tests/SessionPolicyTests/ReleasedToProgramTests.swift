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

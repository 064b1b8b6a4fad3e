import SessionPolicy
import PipeWireFacts
import Testing

/// A pause or resume is the policy's decision; whether a node runs is the module's report.
/// The report of a decided pause or resume confirms it: it changes the fact and decides
/// nothing new.
@Suite("Decisions confirmed by the module's reports")
struct ConfirmedEffectsTests {
    /// Music 10 plays; a call (Phone 20) starts and pauses it.
    func interrupted() -> World {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Phone")
        w.play(10)
        #expect(w.decide(.streamRunning(N(20), true)) == [.pause(N(10)), began(legacyS(10))])
        return w
    }

    @Test("R11 a pause is a decision: the node counts as running until the module reports it stopped, which decides nothing")
    func r11APauseIsADecisionTheModulesReportConfirmsIt() {
        var w = interrupted()
        let paused = w.policy.snapshot().streams[N(10)]
        #expect(paused?.pausedByPolicy == true)
        #expect(paused?.running == true)
        #expect(paused?.runs == false)
        #expect(w.session(legacyS(10))?.isPlaying == false)
        #expect(w.decide(.streamRunning(N(10), false)) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.running == false)
        #expect(w.policy.snapshot().streams[N(10)]?.pausedByPolicy == true)
    }

    @Test("R15 a resume waits for the module's report; the session plays meanwhile and the report decides nothing")
    func r15AResumeWaitsForTheModulesReport() {
        var w = interrupted()
        _ = w.decide(.streamRunning(N(10), false))
        #expect(w.decide(.streamRunning(N(20), false)) == [.notify(legacyS(10), .interruptionEnded(shouldResume: true)), .resume(N(10))])
        let resumed = w.policy.snapshot().streams[N(10)]
        #expect(resumed?.running == false)
        #expect(resumed?.resumedByPolicy == true)
        #expect(resumed?.runs == true)
        #expect(w.session(legacyS(10))?.isPlaying == true)
        #expect(w.decide(.streamRunning(N(10), true)) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.running == true)
        #expect(w.policy.snapshot().streams[N(10)]?.resumedByPolicy == false)
        #expect(w.session(legacyS(10))?.active == true)
    }

    @Test("§1 a resumed legacy stream that its program stops before it ran deactivates: that report is the program's, not a confirmation")
    func aResumedLegacyStreamStoppedBeforeItRanDeactivates() {
        var w = interrupted()
        _ = w.decide(.streamRunning(N(10), false))
        _ = w.decide(.streamRunning(N(20), false))
        _ = w.decide(.streamRunning(N(10), false))
        #expect(w.policy.snapshot().streams[N(10)]?.runs == false)
        #expect(w.session(legacyS(10))?.active == false)
    }
}

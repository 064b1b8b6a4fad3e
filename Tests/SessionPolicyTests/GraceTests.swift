import SessionPolicy
import PipeWireFacts
import Testing

/// The grace period after an interrupter or a ducker goes (R7, R14, R3): a prompt whose
/// program re-creates its stream for each phrase neither gives the podcast back nor
/// un-ducks the music in the gaps.
@Suite("Grace period after a session that interrupted or ducked others")
struct GraceTests {
    static func world() -> World { World { $0.resumeGraceMilliseconds = 300 } }

    static func timers(_ fx: [Effect]) -> [UInt64] {
        fx.compactMap { if case .scheduleTimer(let t, let ms) = $0, ms == 300 { return t } else { return nil } }
    }

    /// A podcast (wrapped, spokenAudio) and a navigation prompt from client 3.
    static func podcastInterruptedByAPrompt() -> World {
        var w = world()
        w.stream(10, client: 2, .output, ["audio.session.category": "playback", "audio.session.mode": "spokenAudio"])
        w.play(10)
        w.legacy(20, client: 3, role: "Navigation")
        #expect(w.decide(.streamRunning(N(20), true)).contains(.pause(N(10))))
        return w
    }

    @Test("R7 R15 the prompt's end is held for the grace period, then the podcast resumes")
    func r7R15ThePromptsEndIsHeldForTheGracePeriodThenThePodcastResumes() {
        var w = Self.podcastInterruptedByAPrompt()
        let gone = w.decide(.streamRemoved(N(20)))
        #expect(!gone.contains(.resume(N(10))), "\(gone)")
        #expect(!gone.contains(ended(clientS(2), resume: true)), "\(gone)")
        let tokens = Self.timers(gone)
        #expect(tokens.count == 1, "\(gone)")
        let fired = w.decide(.timerFired(tokens[0]))
        #expect(fired.contains(ended(clientS(2), resume: true)), "\(fired)")
        #expect(fired.contains(.resume(N(10))), "\(fired)")
    }

    @Test("R7 a prompt whose client has gone gives the podcast back at once: no follow-up can come from it")
    func r7APromptWhoseClientHasGoneEndsAtOnce() {
        // Its stream goes first (held), then its client.
        var w = Self.podcastInterruptedByAPrompt()
        let token = Self.timers(w.decide(.streamRemoved(N(20))))
        #expect(token.count == 1)
        let gone = w.decide(.clientRemoved(C(3)))
        #expect(gone.contains(ended(clientS(2), resume: true)), "\(gone)")
        #expect(gone.contains(.resume(N(10))), "\(gone)")
        #expect(w.decide(.timerFired(token[0])) == [])

        // Its client goes with the stream still there: the end is not held at all.
        var v = Self.podcastInterruptedByAPrompt()
        let removed = v.decide(.clientRemoved(C(3)))
        #expect(removed.contains(.resume(N(10))), "\(removed)")
        #expect(Self.timers(removed).isEmpty, "\(removed)")
    }

    @Test("R13 the program's next phrase within the grace period takes the interruption over: no ended, no second began")
    func r13TheProgramsNextPhraseWithinTheGracePeriodTakesTheInterruptionOver() {
        var w = Self.podcastInterruptedByAPrompt()
        let tokens = Self.timers(w.decide(.streamRemoved(N(20))))
        // The synthesizer's next stream, 18 ms later.
        w.legacy(21, client: 3, role: "Navigation")
        let next = w.decide(.streamRunning(N(21), true))
        #expect(!next.contains(.resume(N(10))), "\(next)")
        #expect(!next.contains { if case .notify(clientS(2), _) = $0 { return true } else { return false } }, "\(next)")
        // The first phrase's timer runs out: nothing happens, the new phrase holds the podcast.
        #expect(w.decide(.timerFired(tokens[0])) == [])
        #expect(w.policy.sessions[clientS(2)]?.interrupted == true)
        // The last phrase ends: after its own grace period the podcast resumes, once.
        let last = Self.timers(w.decide(.streamRemoved(N(21))))
        #expect(last.count == 1)
        let fired = w.decide(.timerFired(last[0]))
        #expect(fired.filter { $0 == .resume(N(10)) }.count == 1, "\(fired)")
        #expect(fired.contains(ended(clientS(2), resume: true)), "\(fired)")
    }

    @Test("R3 a ducker that goes keeps the music ducked through the grace period, then it comes back up")
    func r3ADuckerThatGoesKeepsTheMusicDuckedThroughTheGracePeriod() {
        var w = Self.world()
        w.legacy(10, client: 2, role: "Music")
        w.play(10)
        w.legacy(20, client: 3, role: "Navigation")
        let duck = w.decide(.streamRunning(N(20), true))
        #expect(duck.contains(.duck(N(10), gain: 0.2, rampMilliseconds: 250)), "\(duck)")
        let gone = w.decide(.streamRemoved(N(20)))
        #expect(!gone.contains { if case .duck(N(10), _, _) = $0 { return true } else { return false } }, "\(gone)")
        // The next phrase: still ducked, no change at all.
        w.legacy(21, client: 3, role: "Navigation")
        let next = w.decide(.streamRunning(N(21), true))
        #expect(!next.contains { if case .duck(N(10), _, _) = $0 { return true } else { return false } }, "\(next)")
        let last = Self.timers(w.decide(.streamRemoved(N(21))))
        let fired = w.decide(.timerFired(last[0]))
        #expect(fired.contains(.duck(N(10), gain: 1, rampMilliseconds: 500)), "\(fired)")
    }

    @Test("R14 another program's session does not take over a held end")
    func r14AnotherProgramsSessionDoesNotTakeOverAHeldEnd() {
        var w = Self.podcastInterruptedByAPrompt()
        let tokens = Self.timers(w.decide(.streamRemoved(N(20))))
        w.legacy(30, client: 4, role: "Music")
        w.play(30)
        let fired = w.decide(.timerFired(tokens[0]))
        #expect(fired.contains(ended(clientS(2), resume: true)) || fired.contains { if case .notify(clientS(2), _) = $0 { return true } else { return false } },
                "\(fired)")
    }

    @Test("R7 an explicit setActive(false, notifyOthersOnDeactivation) ends the interruption at once, grace or not")
    func r7AnExplicitDeactivationWithNotifyOthersEndsTheInterruptionAtOnce() {
        var w = Self.world()
        w.stream(10, client: 2, .output, ["audio.session.category": "playback", "audio.session.mode": "spokenAudio"])
        w.play(10)
        w.declared(3, "playback")
        #expect(w.activate(3).contains(.pause(N(10))))
        let off = w.deactivate(3, notifyOthers: true)
        #expect(Self.timers(off).isEmpty, "\(off)")
        #expect(off.contains(ended(clientS(2), resume: true)), "\(off)")
        #expect(off.contains(.resume(N(10))), "\(off)")
    }

    @Test("without a grace period (the core's default) the end is immediate")
    func withoutAGracePeriodTheEndIsImmediate() {
        var w = World()
        w.stream(10, client: 2, .output, ["audio.session.category": "playback", "audio.session.mode": "spokenAudio"])
        w.play(10)
        w.legacy(20, client: 3, role: "Navigation")
        _ = w.decide(.streamRunning(N(20), true))
        let gone = w.decide(.streamRemoved(N(20)))
        #expect(gone.contains(.resume(N(10))), "\(gone)")
        #expect(Self.timers(gone).isEmpty)
    }
}

import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Media services (§10)")
struct MediaServicesTests {
    @Test("R40 a rebuild tells declared sessions mediaServicesWereLost then mediaServicesWereReset")
    func r40ARebuildTellsDeclaredSessionsMediaServicesWereLostThenReset() {
        var w = World()
        w.declared(1, "playback")
        w.legacy(10, client: 2, role: "Music")
        w.play(10)
        let graph = w.policy.snapshot()
        #expect(w.decide(.snapshot(graph)) == [
            .notify(clientS(1), .mediaServicesWereLost), .notify(clientS(1), .mediaServicesWereReset),
        ])
        #expect(w.policy.snapshot() == graph)

        // A restarted daemon hands a fresh graph (no policy marks): the same decisions are reached.
        var fresh = graph
        fresh.policy = nil
        var v = World()
        #expect(v.decide(.snapshot(fresh)) == [
            .notify(clientS(1), .mediaServicesWereLost), .notify(clientS(1), .mediaServicesWereReset),
        ])
        #expect(v.session(legacyS(10))?.active == true)
        v.legacy(20, client: 3, role: "Music")
        #expect(v.decide(.streamRunning(N(20), true)) == [.pause(N(10)), began(legacyS(10))])
    }

    @Test("R41 the policy owns only what it adds: a restart undoes its own gains and touches nothing else")
    func r41ARestartUndoesThePolicysOwnGainsAndTouchesNothingElse() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(20, client: 2, role: "Navigation")
        w.declared(3, "ambient")
        w.stream(30, client: 3)
        w.play(10)
        w.play(20)
        w.play(30)
        _ = w.decide(silent(true))
        var graph = w.policy.snapshot()
        #expect(graph.streams[N(10)]?.duckGain == 0.2)
        #expect(graph.streams[N(30)]?.silenced == true)
        // The daemon comes back without the navigation prompt and with silent mode off.
        graph.streams[N(20)] = nil
        graph.silentMode = false
        graph.policy = nil
        var v = World()
        let fx = v.decide(.snapshot(graph))
        #expect(fx == [
            .notify(clientS(3), .mediaServicesWereLost), .notify(clientS(3), .mediaServicesWereReset),
            .duck(N(30), gain: 1, rampMilliseconds: 500), .silence(N(30), false),
            .duck(N(10), gain: 1, rampMilliseconds: 500),
        ])
    }
}

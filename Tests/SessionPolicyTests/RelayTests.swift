import SessionPolicy
import PipeWireFacts
import Testing

/// Virtual sinks and their output streams (loopbacks; WirePlumber 0.5's role loopbacks):
/// the output stream, sharing the sink's `node.link-group`, is a relay, not a session.
@Suite("Relays (loopbacks)")
struct RelayTests {
    static func loopbackSink(_ name: String, group: String) -> Properties {
        ["node.name": "input." + name, "node.description": name, "media.class": "Audio/Sink",
         "node.virtual": "true", "node.link-group": group, "policy.role-based.target": "true"]
    }

    static func loopbackStream(_ name: String, group: String) -> Properties {
        ["node.name": "output." + name, "media.class": "Stream/Output/Audio", "media.role": "Loopback",
         "node.virtual": "true", "node.passive": "true", "node.link-group": group]
    }

    /// Headphones 50, speaker 60; the Multimedia loopback (stream 30 first, as WirePlumber
    /// 0.5.8 creates them, then sink 31) plays on the headphones; music 10 plays into it.
    func world() -> World {
        var w = World()
        w.sink(50, headphonesProps)
        w.sink(60, speakerProps)
        w.when(.streamAdded(N(30), client: C(9), direction: .output, Self.loopbackStream("multimedia", group: "lb-1")))
        w.sink(31, Self.loopbackSink("multimedia", group: "lb-1"))
        w.link(1, 30, 50)
        w.play(30)
        w.legacy(10, client: 1, role: "Music")
        w.link(2, 10, 31)
        w.play(10)
        return w
    }

    @Test("a loopback's output stream is no session; the music's route is where the loopback plays")
    func aLoopbacksOutputStreamIsNoSessionAndTheMusicsRouteIsWhereTheLoopbackPlays() {
        var w = world()
        #expect(w.session(legacyS(30)) == nil)
        #expect(w.session(legacyS(10))?.route == Route(outputs: [headphonesPort]))
        // WirePlumber moves the loopback to the speaker: the music's route follows.
        _ = w.decide(.linkRemoved(L(1)), .linkAdded(L(3), output: N(30), input: N(60)))
        #expect(w.session(legacyS(10))?.route == Route(outputs: [speakerPort]))
    }

    @Test("the sink may come first: its output stream is a relay from the start")
    func theSinkMayComeFirstItsOutputStreamIsARelayFromTheStart() {
        var w = World()
        w.sink(50, headphonesProps)
        w.sink(31, Self.loopbackSink("multimedia", group: "lb-1"))
        w.when(.streamAdded(N(30), client: C(9), direction: .output, Self.loopbackStream("multimedia", group: "lb-1")))
        w.link(1, 30, 50)
        w.play(30)
        w.legacy(10, client: 1, role: "Music")
        w.link(2, 10, 31)
        w.play(10)
        #expect(w.session(legacyS(30)) == nil)
        #expect(w.session(legacyS(10))?.route == Route(outputs: [headphonesPort]))
    }

    @Test("R30 behind a loopback: the music is paused, the shared loopback is not, and it stays so (R31)")
    func r30R31BehindALoopbackTheMusicIsPausedAndTheSharedLoopbackIsNot() {
        var w = world()
        w.legacy(11, client: 2, role: "Music")
        w.link(4, 11, 31)  // linked but not playing
        let lost = Route(outputs: [headphonesPort])
        #expect(w.decide(.endpointRemoved(N(50))) == [
            .pause(N(10)),
            .notify(legacyS(10), .routeChange(reason: .oldDeviceUnavailable, previous: lost, current: Route())),
        ])
        // WirePlumber relinks the loopback to the speaker, then the headphones return: nothing resumes.
        #expect(w.decide(.linkAdded(L(5), output: N(30), input: N(60))) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.pausedByPolicy == true)
        #expect(w.decide(.endpointAdded(N(50), kind: .sink, headphonesProps)) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.pausedByPolicy == true)
        #expect(w.session(legacyS(10))?.isPlaying == false)
    }

    @Test("R33 a session that chose the loopback as its output is paused when the output behind it goes")
    func r33ASessionThatChoseTheLoopbackIsPausedWhenTheOutputBehindItGoes() {
        var w = world()
        _ = w.set(1, ["audio.session.category": "playback", "audio.session.output-override": "input.multimedia"])
        #expect(w.decide(.endpointRemoved(N(50))).first == .pause(N(10)))
    }

    @Test("a loss of an output the loopback does not play on pauses nothing")
    func aLossOfAnOutputTheLoopbackDoesNotPlayOnPausesNothing() {
        var w = world()
        #expect(w.decide(.linkRemoved(L(1)), .linkAdded(L(3), output: N(30), input: N(60))) == [])
        var h = headphonesProps
        h["node.name"] = "headphones2"
        w.sink(70, h)
        #expect(w.decide(.endpointRemoved(N(70))) == [])
    }

    @Test("R3 a prompt through another loopback ducks the music, never a loopback")
    func r3APromptThroughAnotherLoopbackDucksTheMusicNeverALoopback() {
        var w = world()
        w.when(.streamAdded(N(40), client: C(9), direction: .output, Self.loopbackStream("navigation", group: "lb-2")))
        w.sink(41, Self.loopbackSink("navigation", group: "lb-2"))
        w.link(6, 40, 50)
        w.play(40)
        w.legacy(20, client: 3, role: "Navigation")
        w.link(7, 20, 41)
        let effects = w.decide(.streamRunning(N(20), true))
        let ducked = effects.compactMap { e -> NodeID? in
            if case .duck(let n, let gain, _) = e, gain < 1 { return n }
            return nil
        }
        #expect(ducked == [N(10)], "\(effects)")
    }

    @Test("a stream the policy held becomes a relay when its sink appears: what the policy did is undone")
    func aStreamThePolicyHeldBecomesARelayWhenItsSinkAppearsAndThePolicyIsUndone() {
        var w = World()
        w.sink(50, headphonesProps)
        w.legacy(20, client: 3, role: "Navigation")
        w.link(7, 20, 50)
        w.play(20)
        w.when(.streamAdded(N(30), client: C(9), direction: .output, Self.loopbackStream("multimedia", group: "lb-1")))
        w.link(1, 30, 50)
        w.play(30)
        #expect(w.policy.snapshot().streams[N(30)]?.duckGain ?? 1 < 1)
        let effects = w.decide(.endpointAdded(N(31), kind: .sink, Self.loopbackSink("multimedia", group: "lb-1")))
        #expect(effects.contains(.duck(N(30), gain: 1, rampMilliseconds: 0)), "\(effects)")
        #expect(w.session(legacyS(30)) == nil)
        #expect(w.policy.snapshot().relays[N(30)] != nil)
        #expect(w.policy.snapshot().links[L(1)] == LinkInfo(output: N(30), input: N(50)))
    }

    @Test("a policy restored from the model keeps the relays and the routes through them")
    func aPolicyRestoredFromTheModelKeepsTheRelays() {
        let w = world()
        let restored = SessionPolicy(restoring: w.policy.snapshot())
        #expect(restored.sessions == w.policy.sessions)
        #expect(restored.snapshot().relays[N(30)] != nil)
        #expect(restored.sessions[legacyS(30)] == nil)
        #expect(restored.sessions[legacyS(10)]?.route == Route(outputs: [headphonesPort]))
    }
}

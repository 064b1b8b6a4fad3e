import Testing
import PipeWireFacts
@testable import SessionPolicy

/// A headphone jack: the sink node stays, its port changes (the card switches its route). The module
/// reports the port's loss, then the port the card switched to, then its return.
@Suite struct JackRouteTests {
    /// An ALSA card's sink as the module describes it: node and device properties...
    static let card: Properties = [
        "node.name": "alsa_output.card", "node.description": "Built-in Audio", "device.api": "alsa", "media.class": "Audio/Sink",
    ]

    /// ...and its device's active route.
    static func route(_ port: String) -> ActiveRoute {
        ActiveRoute(name: "analog-output-\(port)", portType: port)
    }

    static func outputs(_ w: World, _ s: SessionID) -> [PortType] {
        (w.policy.sessions[s]?.route.outputs ?? []).map(\.type)
    }

    @Test("R30 jack out: the stream on the headphone port is paused, the port's switch to the speaker resumes nothing, and the route follows the port")
    func r30JackOutPausesTheStreamOnTheHeadphonePortAndTheRouteFollowsThePort() {
        var w = World()
        w.when(.endpointAdded(N(50), kind: .sink, Self.card, route: Self.route("headphones")))
        w.legacy(20, client: 2, role: "Music")
        w.link(2, 20, 50)
        w.play(20)
        let s = legacyS(20)
        #expect(Self.outputs(w, s) == [.headphones])

        let lost = w.decide(.endpointPortLost(N(50)))
        #expect(lost.first == .pause(N(20)), "\(lost)")
        #expect(lost.contains { if case .notify(s, .routeChange(reason: .oldDeviceUnavailable, _, _)) = $0 { true } else { false } })

        // The card switches the same node to its speaker port: no resume, no new loss.
        #expect(w.decide(.endpointChanged(N(50), Self.card, route: Self.route("speaker"))) == [])
        #expect(Self.outputs(w, s) == [.builtInSpeaker])
        #expect(w.policy.sessions[s]?.isPlaying == false)

        // Jack back in: the port is restored, the stream stays paused (R31) and its route is the headphones again.
        let restored = w.when(.endpointPortRestored(N(50), Self.card, route: Self.route("headphones")))
        #expect(decisions(restored) == [])
        #expect(Self.outputs(w, s) == [.headphones])
        // ...and that is what its session's published state says.
        let published = restored.compactMap { e -> [PortType]? in
            if case .publishSession(s, let snap?) = e { return snap.route.outputs.map(\.type) } else { return nil }
        }
        #expect(published == [[.headphones]], "\(restored)")
        #expect(w.policy.sessions[s]?.isPlaying == false)
    }

    @Test("R33 the user choosing the speaker port on the card is not a loss: nothing is paused")
    func r33TheUserChoosingTheSpeakerPortIsNotALoss() {
        var w = World()
        w.when(.endpointAdded(N(50), kind: .sink, Self.card, route: Self.route("headphones")))
        w.legacy(20, client: 2, role: "Music")
        w.link(2, 20, 50)
        w.play(20)
        #expect(w.decide(.endpointChanged(N(50), Self.card, route: Self.route("speaker"))) == [])
        #expect(w.policy.sessions[legacyS(20)]?.isPlaying == true)
        #expect(Self.outputs(w, legacyS(20)) == [.builtInSpeaker])
    }
}

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

    /// ...and its device's routes as the module reads them: the active one, and the ones
    /// known to be unavailable.
    static func read(_ port: String, unavailable: [String] = []) -> Event {
        .endpointRoutesRead(N(50), RouteReading(
            name: "analog-output-\(port)", portType: port, availability: .yes, unavailable: unavailable.map { "analog-output-\($0)" }))
    }

    static func outputs(_ w: World, _ s: SessionID) -> [PortType] {
        (w.policy.sessions[s]?.route.outputs ?? []).map(\.type)
    }

    @Test("R30 jack out: the stream on the headphone port is paused, the port's switch to the speaker resumes nothing, and the route follows the port")
    func r30JackOutPausesTheStreamOnTheHeadphonePortAndTheRouteFollowsThePort() {
        var w = World()
        // Read before the node existed: the node's port from the start.
        w.when(Self.read("headphones"), .endpointAdded(N(50), kind: .sink, Self.card))
        w.legacy(20, client: 2, role: "Music")
        w.link(2, 20, 50)
        w.play(20)
        let s = legacyS(20)
        #expect(Self.outputs(w, s) == [.headphones])

        // The headphone port unavailable, the card already on its speaker port: a loss.
        let lost = w.decide(Self.read("speaker", unavailable: ["headphones"]))
        #expect(lost.first == .pause(N(20)), "\(lost)")
        #expect(lost.contains { if case .notify(s, .routeChange(reason: .oldDeviceUnavailable, _, _)) = $0 { true } else { false } })
        #expect(Self.outputs(w, s) == [.builtInSpeaker])

        // Read again on the speaker port: no resume, no new loss.
        #expect(w.decide(Self.read("speaker", unavailable: ["headphones"])) == [])
        #expect(w.policy.sessions[s]?.isPlaying == false)

        // Jack back in: the port is restored, the stream stays paused (R31) and its route is the headphones again.
        let restored = w.when(Self.read("headphones"))
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
        // Read before the node existed: the node's port from the start.
        w.when(Self.read("headphones"), .endpointAdded(N(50), kind: .sink, Self.card))
        w.legacy(20, client: 2, role: "Music")
        w.link(2, 20, 50)
        w.play(20)
        #expect(w.decide(Self.read("speaker")) == [])
        #expect(w.policy.sessions[legacyS(20)]?.isPlaying == true)
        #expect(Self.outputs(w, legacyS(20)) == [.builtInSpeaker])
    }
}

import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// A sound card's sink whose headphone jack can be pulled (like the fake-jack fixture):
/// the module reports the card's routes as facts (`as_core_endpoint_routes`, translated
/// into `Event.endpointRoutesRead`), the policy decides what changed (`PolicyStep+Ports`).
@Suite struct EndpointRoutesTests {
    let sink = RecordingEffectSink()
    let core: ModuleCore
    static let card: UInt32 = 60
    static let musicClient: UInt32 = 61, musicStream: UInt32 = 62

    static let cardSink: Properties = Recorded.nullSink(
        name: "card", description: "Card", formFactor: "internal", priority: 3000, id: card, serial: 70)
    static let headphones = "analog-output-headphones", speaker = "analog-output-speaker"

    static func read(_ active: String, _ availability: RouteReading.Availability = .yes,
                     unavailable: [String] = []) -> RouteReading {
        RouteReading(name: active, portType: active == headphones ? "headphones" : "speaker",
                     availability: availability, unavailable: unavailable)
    }

    func routesRead(_ n: NodeID, _ reading: RouteReading) { core.handle(.endpointRoutesRead(n, reading)) }

    /// The card's routes are read before its sink appears (headphones active), then music
    /// plays on it.
    init() {
        core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
        for e in Recorded.idleGraph { core.handle(e) }
        routesRead(NodeID(Self.card), Self.read(Self.headphones))
        core.handle(.endpointAdded(NodeID(Self.card), kind: .sink, Self.cardSink))
        let music = Recorded.play(
            client: Self.musicClient, Recorded.pwCatClient(id: Self.musicClient, pid: 101, serial: 71),
            stream: Self.musicStream,
            Recorded.pwPlayStream(id: Self.musicStream, client: Self.musicClient, role: "Music", serial: 72),
            links: [63, 64], sink: Self.card)
        for e in music { core.handle(e) }
        _ = sink.take()
    }

    var cardEndpoint: EndpointInfo? { core.policy.snapshot().endpoints[NodeID(Self.card)] }
    var musicPaused: Bool { core.policy.snapshot().streams[NodeID(Self.musicStream)]?.pausedByPolicy == true }

    func routeChanges(_ calls: [EffectCall]) -> [String] {
        calls.events.filter { $0.string("type") == "routeChange" }.compactMap { $0.string("reason") }
    }

    /// Routes read before the endpoint existed: its `endpointAdded` carries the port; the
    /// music plays on headphones (a private output).
    @Test func routesReadBeforeTheEndpointGiveItsPortWhenAdded() {
        #expect(cardEndpoint?.port.type == .headphones)
        #expect(cardEndpoint?.route?.sinkPortType == .headphones)
        #expect(cardEndpoint?.route?.name == Self.headphones)
        #expect(!musicPaused)
    }

    /// R30 the port type comes from the route the module read, typed, never from a
    /// `port.type` in the endpoint's properties: properties a node was created with say
    /// nothing of a card's jack.
    @Test func r30ThePortTypeComesFromTheRouteReadNeverFromAPortTypeProperty() {
        let other = NodeID(80)
        var props = Recorded.nullSink(name: "usb", description: "USB", formFactor: "internal", priority: 10, id: 80, serial: 81)
        props["port.type"] = "headphones"
        props["device.route.name"] = "analog-output-headphones"
        core.handle(.endpointAdded(other, kind: .sink, props))
        #expect(core.policy.snapshot().endpoints[other]?.port.type == .builtInSpeaker)
        routesRead(other, RouteReading(name: "analog-output-lineout", portType: "line", availability: .yes, unavailable: []))
        #expect(core.policy.snapshot().endpoints[other]?.port.type == .lineOut)
        routesRead(other, RouteReading(name: "hdmi-output-0", portType: "hdmi", availability: .yes, unavailable: []))
        #expect(core.policy.snapshot().endpoints[other]?.port.type == .HDMI)
    }

    /// The first read of an endpoint already added: an endpoint change with its port.
    @Test func theFirstReadOfAnAddedEndpointGivesItsPort() {
        let other = NodeID(80)
        core.handle(.endpointAdded(other, kind: .sink, Recorded.nullSink(
            name: "usb", description: "USB", formFactor: "internal", priority: 10, id: 80, serial: 81)))
        #expect(core.policy.snapshot().endpoints[other]?.port.type != .headphones)
        routesRead(other, Self.read(Self.headphones))
        #expect(core.policy.snapshot().endpoints[other]?.port.type == .headphones)
        #expect(core.policy.snapshot().endpoints[other]?.portLost == false)
        // The same read again changes nothing.
        _ = sink.take()
        routesRead(other, Self.read(Self.headphones))
        #expect(sink.take().streamEffects.isEmpty)
    }

    /// Jack out: the headphone route is unavailable and the card has already switched to
    /// its speaker. A loss (R30): the music is paused before the speaker port plays it,
    /// then the endpoint is on the speaker port.
    @Test func jackOutWhileTheCardAlreadySwitchedIsALoss() {
        routesRead(NodeID(Self.card), Self.read(Self.speaker, unavailable: [Self.headphones]))
        let calls = sink.take()
        #expect(calls.pausedNodes == [Self.musicStream])
        #expect(calls.streamEffects.first == .pause(Self.musicStream))
        #expect(routeChanges(calls).contains("oldDeviceUnavailable"))
        #expect(musicPaused)
        #expect(cardEndpoint?.portLost == true)
        #expect(cardEndpoint?.port.type != .headphones)
        #expect(cardEndpoint?.route?.name == Self.speaker)
    }

    /// Jack out before the card switches: the loss at once, the speaker port when it comes.
    @Test func jackOutThenTheSwitchIsOneLoss() {
        routesRead(NodeID(Self.card), Self.read(Self.headphones, .no, unavailable: [Self.headphones]))
        #expect(sink.take().pausedNodes == [Self.musicStream])
        #expect(cardEndpoint?.portLost == true)
        routesRead(NodeID(Self.card), Self.read(Self.speaker, unavailable: [Self.headphones]))
        #expect(sink.take().streamEffects.isEmpty)
        #expect(cardEndpoint?.route?.name == Self.speaker)
    }

    /// R33: the user chooses the speaker port while the headphones are still plugged in:
    /// not a loss, the music goes on (on the speaker port).
    @Test func anotherPortChosenWhileTheOldIsAvailableIsTheUsersChoice() {
        routesRead(NodeID(Self.card), Self.read(Self.speaker))
        let calls = sink.take()
        #expect(calls.streamEffects.isEmpty)
        #expect(!routeChanges(calls).contains("oldDeviceUnavailable"))
        #expect(!musicPaused)
        #expect(cardEndpoint?.portLost == false)
        #expect(cardEndpoint?.route?.name == Self.speaker)
        #expect(cardEndpoint?.port.type != .headphones)
    }

    /// Jack back in: the lost port is active and available again. Restored (the port no
    /// longer counts as lost, only a restoration does that), and the music stays paused (R31).
    @Test func theLostPortsReturnIsARestoration() {
        routesRead(NodeID(Self.card), Self.read(Self.speaker, unavailable: [Self.headphones]))
        _ = sink.take()
        // The card still lists the headphones as unavailable while switching back: no return yet.
        routesRead(NodeID(Self.card), Self.read(Self.headphones, .no, unavailable: [Self.headphones]))
        #expect(cardEndpoint?.portLost == true)
        routesRead(NodeID(Self.card), Self.read(Self.headphones))
        let calls = sink.take()
        #expect(cardEndpoint?.portLost == false)
        #expect(cardEndpoint?.port.type == .headphones)
        #expect(calls.resumedNodes.isEmpty)
        #expect(musicPaused)
    }

    /// The node's own property changes keep the port the routes gave it.
    @Test func theEndpointsPropertyChangesKeepItsPort() {
        var props = Self.cardSink
        props["node.description"] = "Card (renamed)"
        core.handle(.endpointChanged(NodeID(Self.card), props))
        #expect(cardEndpoint?.port.type == .headphones)
        #expect(cardEndpoint?.port.name == "Card (renamed)")
    }

    /// Nothing is kept for an endpoint once it is gone.
    @Test func aRemovedEndpointLeavesNoRecord() {
        for e: Event in [.clientRemoved(ClientID(Self.musicClient)), .streamRemoved(NodeID(Self.musicStream)),
                         .linkRemoved(LinkID(63)), .linkRemoved(LinkID(64)), .endpointRemoved(NodeID(Self.card)),
                         .endpointRemoved(NodeID(Recorded.speakerID)), .endpointRemoved(NodeID(Recorded.headphonesID)),
                         .clientRemoved(ClientID(32)), .clientRemoved(ClientID(34))] {
            core.handle(e)
        }
        // A change of an endpoint that was never added keeps nothing either.
        core.handle(.endpointChanged(NodeID(99), Self.cardSink))
        #expect(core.recordCount == 0)
    }
}

/// A sink's monitor recorder (`pw-record -P stream.capture.sink=true`, pavucontrol's
/// meters) is reported by the module like every stream; the policy makes it no session.
@Suite struct MonitorStreamTests {
    let core = ModuleCore(configuration: PolicyConfiguration(), effects: RecordingEffectSink())

    static func recorder(_ extra: Properties) -> Properties {
        ["media.class": "Stream/Input/Audio", "application.name": "pw-cat", "node.name": "recorder"]
            .merging(extra) { $1 }
    }

    @Test(arguments: [["stream.capture.sink": "true"], ["stream.monitor": "true"], ["stream.capture.sink": "1"]])
    func aMonitorRecorderIsNoSession(_ extra: Properties) {
        let n = NodeID(20)
        core.clientAdded(ClientID(10), ["application.name": "pw-cat"], identity: ClientIdentity())
        core.handle(.streamAdded(n, client: ClientID(10), direction: .input, Self.recorder(extra)))
        core.handle(.streamRunning(n, true))
        core.handle(.streamChanged(n, Self.recorder(extra)))
        core.handle(.streamActivatedByOwner(n))
        #expect(!core.policy.hasStream(n))
        #expect(core.policy.sessions.isEmpty)
        core.handle(.streamRemoved(n))
        core.handle(.clientRemoved(ClientID(10)))
        #expect(core.recordCount == 0)
    }

    @Test(arguments: [
        (StreamDirection.input, ["stream.capture.sink": "false"]),
        (StreamDirection.input, [:]),
        // Only a capture stream can record a monitor.
        (StreamDirection.output, ["stream.capture.sink": "true"]),
    ] as [(StreamDirection, Properties)])
    func otherStreamsAreSessions(_ direction: StreamDirection, _ extra: Properties) {
        let n = NodeID(20)
        core.clientAdded(ClientID(10), ["application.name": "pw-cat"], identity: ClientIdentity())
        core.handle(.streamAdded(n, client: ClientID(10), direction: direction, Self.recorder(extra)))
        core.handle(.streamRunning(n, true))
        #expect(core.policy.hasStream(n))
        #expect(!core.policy.sessions.isEmpty)
    }

    /// A node id used again by an ordinary stream is a session.
    @Test func aReusedIdIsDecidedAgain() {
        let n = NodeID(20)
        core.handle(.streamAdded(n, client: ClientID(10), direction: .input, Self.recorder(["stream.monitor": "true"])))
        core.handle(.streamAdded(n, client: ClientID(10), direction: .input, Self.recorder([:])))
        #expect(core.policy.hasStream(n))
    }
}

/// The module reports that a stream's node was activated by someone else than itself;
/// the core decides whether that is an activation request (R16).
@Suite struct StreamActivatedTests {
    /// Music plays, a phone call interrupts it: the policy holds the music paused.
    static func interrupted() -> (ModuleCore, RecordingEffectSink) {
        let sink = RecordingEffectSink()
        var configuration = PolicyConfiguration()
        configuration.daemonUserID = 1000
        let core = ModuleCore(configuration: configuration, effects: sink)
        for e in Recorded.idleGraph + Recorded.musicPlays + Recorded.phonePlays { core.handle(e) }
        #expect(core.policy.snapshot().streams[NodeID(Recorded.musicStreamID)]?.pausedByPolicy == true)
        _ = sink.take()
        return (core, sink)
    }

    /// Its owner re-activates the paused music: the same decision as an activation request.
    @Test func activatingAStreamThePolicyHoldsPausedIsAnActivationRequest() {
        let (core, sink) = Self.interrupted()
        let (reference, referenceSink) = Self.interrupted()
        core.handle(.streamActivatedByOwner(NodeID(Recorded.musicStreamID)))
        // The owner's start as the policy's own rule reads it: as if it ran again (R16).
        reference.handle(.streamRunning(NodeID(Recorded.musicStreamID), true))
        let calls = sink.take().filter { if case .log = $0 { return false } else { return true } }
        #expect(!calls.isEmpty)
        #expect(calls == referenceSink.take().filter { if case .log = $0 { return false } else { return true } })
    }

    /// A stream the policy does not hold (the phone call, a stream it never paused): nothing.
    @Test func activatingAnyOtherStreamIsNoRequest() {
        let (core, sink) = Self.interrupted()
        let before = core.policy.snapshot()
        core.handle(.streamActivatedByOwner(NodeID(Recorded.phoneStreamID)))
        core.handle(.streamActivatedByOwner(NodeID(999)))
        #expect(sink.take().isEmpty)
        #expect(core.policy.snapshot() == before)
    }

    /// The MPRIS bridge reports that the music's player paused itself: the policy lets go
    /// of the stream, the module's pause still holds its node. The player's own start is
    /// still an activation request, arbitrated before it plays (refused: the call goes on).
    @Test func activatingAStreamReleasedToItsProgramIsStillARequest() {
        let (core, sink) = Self.interrupted()
        let music = NodeID(Recorded.musicStreamID)
        core.clientAdded(ClientID(70), ["application.name": "pw-session", DeclarationKey.mprisReleased: "\(music.raw)"],
                         identity: ClientIdentity(executable: "/usr/bin/pw-session", uid: 1000))
        #expect(core.policy.snapshot().streams[music]?.pausedByPolicy == false)
        _ = sink.take()
        core.handle(.streamActivatedByOwner(music))
        #expect(sink.take().pausedNodes == [music.raw])
        #expect(core.policy.snapshot().streams[music]?.pausedByPolicy == true)
        // Once is enough: the policy holds it again, and nothing is left to remember.
        core.handle(.clientRemoved(ClientID(70)))
        core.unload()
        #expect(sink.take().resumedNodes == [music.raw])
    }

    /// The module goes away: exactly the streams the policy holds paused are resumed (R41).
    @Test func r41UnloadingResumesWhatThePolicyHoldsPaused() {
        let (core, sink) = Self.interrupted()
        core.unload()
        #expect(sink.take() == [.resume(Recorded.musicStreamID)])
    }
}

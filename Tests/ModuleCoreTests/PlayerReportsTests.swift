import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// The MPRIS bridge's reports (docs/mpris.md) through the module core: read by the
/// translation (`PlayerReport(pipeWire:)`), decided by the policy (`PolicyStep+Players`).
@Suite struct PlayerReportsTests {
    let sink = RecordingEffectSink()
    let core: ModuleCore
    static let musicClient: UInt32 = 42, musicStream: UInt32 = 43
    static let callClient: UInt32 = 44, callStream: UInt32 = 45
    static let bridge: UInt32 = 70

    /// A Music stream plays on the speaker; a Phone stream interrupts it.
    init() {
        var configuration = PolicyConfiguration()
        configuration.daemonUserID = 1000
        core = ModuleCore(configuration: configuration, effects: sink)
        let events: [Event] = Recorded.idleGraph
            + Recorded.pwPlay(client: Self.musicClient, pid: 101, clientSerial: 49, stream: Self.musicStream, role: "Music",
                              streamSerial: 51, links: [46, 47], sink: Recorded.speakerID)
            + Recorded.pwPlay(client: Self.callClient, pid: 102, clientSerial: 52, stream: Self.callStream, role: "Phone",
                              streamSerial: 53, links: [48, 49], sink: Recorded.speakerID)
        for e in events { core.handle(e) }
        _ = sink.take()
    }

    /// The bridge connects with the identity the module establishes for it (`uid`,
    /// `sandboxed`) and its reports in its properties.
    func connectBridge(uid: UInt32? = 1000, sandboxed: Bool = false, _ reports: Properties) {
        var p = Recorded.pwCatClient(id: Self.bridge, pid: 200, serial: 90)
        p["application.name"] = "pw-session"
        core.clientAdded(ClientID(Self.bridge), p.merging(reports) { $1 },
                         identity: ClientIdentity(executable: "/usr/bin/pw-session", uid: uid, inFlatpak: sandboxed))
    }

    var musicHeld: Bool { core.policy.snapshot().streams[NodeID(Self.musicStream)]?.pausedByPolicy == true }

    @Test func aTrustedBridgeGetsItsPlayerPublishedAndItsReleaseApplied() {
        #expect(musicHeld)
        connectBridge([
            DeclarationKey.mprisGoverned: "\(Self.musicStream)=org.mpris.MediaPlayer2.mpv", DeclarationKey.mprisReleased: "",
        ])
        #expect(sink.take().contains(.publish(subject: Self.musicStream, key: MetadataFormat.mprisKey, type: MetadataFormat.jsonType,
                                              value: #"{"player":"org.mpris.MediaPlayer2.mpv"}"#)))
        #expect(musicHeld)
        core.ownPropertiesWritten(ClientID(Self.bridge), [
            DeclarationKey.mprisGoverned: "\(Self.musicStream)=org.mpris.MediaPlayer2.mpv", DeclarationKey.mprisReleased: "\(Self.musicStream)",
        ])
        let calls = sink.take()
        #expect(!musicHeld)
        // Releasing never makes anything play.
        #expect(!calls.contains(.resume(Self.musicStream)))
        // The bridge goes: its key goes with it.
        core.handle(.clientRemoved(ClientID(Self.bridge)))
        #expect(sink.take().contains(.publish(subject: Self.musicStream, key: MetadataFormat.mprisKey, type: MetadataFormat.jsonType, value: nil)))
    }

    /// Trust comes from the identity the module established, never from the properties:
    /// a sandboxed client, another user, or a client without an established identity
    /// (whatever `pipewire.sec.uid` it claims) is refused.
    @Test(arguments: [(UInt32?(1000), true), (UInt32?(1001), false), (UInt32?.none, false)])
    func anUntrustedClientsReportsAreIgnored(uid: UInt32?, sandboxed: Bool) {
        connectBridge(uid: uid, sandboxed: sandboxed, [
            "pipewire.sec.uid": "1000", "pipewire.access": "unrestricted",
            DeclarationKey.mprisGoverned: "\(Self.musicStream)=org.mpris.MediaPlayer2.mpv", DeclarationKey.mprisReleased: "\(Self.musicStream)",
        ])
        core.ownPropertiesWritten(ClientID(Self.bridge), [DeclarationKey.mprisReleased: "\(Self.musicStream)"])
        let calls = sink.take()
        #expect(musicHeld)
        #expect(!calls.contains { if case .publish(_, MetadataFormat.mprisKey, _, _) = $0 { return true } else { return false } })
        #expect(calls.contains { if case .log(.warn, _) = $0 { return true } else { return false } })
    }

    @Test func aReportReadsAtMostMaxEntries() {
        let many = (0..<100_000).map { String($0) }.joined(separator: " ")
        let r = PlayerReport(pipeWire: [DeclarationKey.mprisReleased: many])
        #expect(r?.released.count == PlayerReport.maximumEntries)
    }

    @Test func malformedReportsAreSkipped() {
        let r = PlayerReport(pipeWire: [
            DeclarationKey.mprisGoverned: "43=org.mpris.MediaPlayer2.mpv x=org.mpris.MediaPlayer2.a 44=com.example.Player 45=org.mpris.MediaPlayer2.\"} 46 =",
            DeclarationKey.mprisReleased: "43 -1 abc 99999999999 44",
        ])
        #expect(r?.governed == [NodeID(43): "org.mpris.MediaPlayer2.mpv"])
        #expect(r?.released == [NodeID(43), NodeID(44)])
    }

    @Test func aStreamThatGoesTakesItsPublishedPlayerAlong() {
        connectBridge([
            DeclarationKey.mprisGoverned: "\(Self.musicStream)=org.mpris.MediaPlayer2.mpv",
        ])
        _ = sink.take()
        core.handle(.streamRemoved(NodeID(Self.musicStream)))
        #expect(sink.take().contains(.publish(subject: Self.musicStream, key: MetadataFormat.mprisKey, type: MetadataFormat.jsonType, value: nil)))
        #expect(core.policy.snapshot().publishedPlayers.isEmpty)
    }
}

import AudioSessionModuleCore
import SessionPolicy
import Testing

/// The MPRIS bridge's reports (PlayerReports.swift, docs/mpris.md) through the module core.
@Suite struct PlayerReportsTests {
    let sink = RecordingEffectSink()
    let core: ModuleCore
    static let musicClient: UInt32 = 42, musicStream: UInt32 = 43
    static let callClient: UInt32 = 44, callStream: UInt32 = 45
    static let bridge: UInt32 = 70

    /// A Music stream plays on the speaker; a Phone stream interrupts it.
    init() {
        core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
        core.daemonUserID = 1000
        let events: [Event] = Recorded.idleGraph
            + Recorded.play(client: Self.musicClient, Recorded.pwCatClient(id: Self.musicClient, pid: 101, serial: 49),
                            stream: Self.musicStream,
                            Recorded.pwPlayStream(id: Self.musicStream, client: Self.musicClient, role: "Music", serial: 51),
                            links: [46, 47], sink: Recorded.speakerID)
            + Recorded.play(client: Self.callClient, Recorded.pwCatClient(id: Self.callClient, pid: 102, serial: 52),
                            stream: Self.callStream,
                            Recorded.pwPlayStream(id: Self.callStream, client: Self.callClient, role: "Phone", serial: 53),
                            links: [48, 49], sink: Recorded.speakerID)
        for e in events { core.handle(e) }
        _ = sink.take()
    }

    func bridgeProps(uid: String = "1000", access: String = "unrestricted", _ extra: Properties) -> Properties {
        var p = Recorded.pwCatClient(id: Self.bridge, pid: 200, serial: 90)
        p["application.name"] = "pw-session"
        p["pipewire.access"] = access
        p["pipewire.sec.uid"] = uid
        return p.merging(extra) { $1 }
    }

    var musicHeld: Bool { core.policy.snapshot().streams[NodeID(Self.musicStream)]?.pausedByPolicy == true }

    @Test func aTrustedBridgeGetsItsPlayerPublishedAndItsReleaseApplied() {
        #expect(musicHeld)
        core.handle(.clientAdded(ClientID(Self.bridge), bridgeProps([
            PlayerReports.governedKey: "\(Self.musicStream)=org.mpris.MediaPlayer2.mpv", PlayerReports.releasedKey: "",
        ])))
        #expect(sink.take().contains(.publish(subject: Self.musicStream, key: MetadataFormat.mprisKey, type: MetadataFormat.jsonType,
                                              value: #"{"player":"org.mpris.MediaPlayer2.mpv"}"#)))
        #expect(musicHeld)
        core.handle(.clientChanged(ClientID(Self.bridge), bridgeProps([
            PlayerReports.governedKey: "\(Self.musicStream)=org.mpris.MediaPlayer2.mpv", PlayerReports.releasedKey: "\(Self.musicStream)",
        ])))
        let calls = sink.take()
        #expect(!musicHeld)
        // Releasing never makes anything play.
        #expect(!calls.contains(.resume(Self.musicStream)))
        // The bridge goes: its key goes with it.
        core.handle(.clientRemoved(ClientID(Self.bridge)))
        #expect(sink.take().contains(.publish(subject: Self.musicStream, key: MetadataFormat.mprisKey, type: MetadataFormat.jsonType, value: nil)))
    }

    @Test(arguments: [("1000", "flatpak"), ("1000", "restricted"), ("1001", "unrestricted"), ("", "unrestricted")])
    func anUntrustedClientsReportsAreIgnored(uid: String, access: String) {
        var props = bridgeProps(uid: uid, access: access, [
            PlayerReports.governedKey: "\(Self.musicStream)=org.mpris.MediaPlayer2.mpv", PlayerReports.releasedKey: "\(Self.musicStream)",
        ])
        if uid.isEmpty { props["pipewire.sec.uid"] = nil }
        core.handle(.clientAdded(ClientID(Self.bridge), props))
        let calls = sink.take()
        #expect(musicHeld)
        #expect(!calls.contains { if case .publish(_, MetadataFormat.mprisKey, _, _) = $0 { return true } else { return false } })
        #expect(calls.contains { if case .log(.warn, _) = $0 { return true } else { return false } })
    }

    @Test func malformedReportsAreSkipped() {
        let r = PlayerReports([
            PlayerReports.governedKey: "43=org.mpris.MediaPlayer2.mpv x=org.mpris.MediaPlayer2.a 44=com.example.Player 45=org.mpris.MediaPlayer2.\"} 46 =",
            PlayerReports.releasedKey: "43 -1 abc 99999999999 44",
        ])
        #expect(r.governed == [NodeID(43): "org.mpris.MediaPlayer2.mpv"])
        #expect(r.released == [NodeID(43), NodeID(44)])
    }

    @Test func aStreamThatGoesTakesItsPublishedPlayerAlong() {
        core.handle(.clientAdded(ClientID(Self.bridge), bridgeProps([
            PlayerReports.governedKey: "\(Self.musicStream)=org.mpris.MediaPlayer2.mpv",
        ])))
        _ = sink.take()
        core.handle(.streamRemoved(NodeID(Self.musicStream)))
        #expect(sink.take().contains(.publish(subject: Self.musicStream, key: MetadataFormat.mprisKey, type: MetadataFormat.jsonType, value: nil)))
        #expect(core.publishedPlayers.isEmpty)
    }
}

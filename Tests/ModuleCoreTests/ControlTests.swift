import AudioSessionModuleCore
import SessionPolicy
import Testing

/// Silent mode and screen lock from a client's own properties (SPEC R20, Control.swift).
@Suite struct ControlTests {
    let sink = RecordingEffectSink()
    let core: ModuleCore
    static let ambientClient: UInt32 = 40, ambientStream: UInt32 = 41
    static let musicClient: UInt32 = 42, musicStream: UInt32 = 43
    static let controller: UInt32 = 70

    /// An ambient stream (pw-play with `PIPEWIRE_PROPS='{ audio.session.category = ambient }'`)
    /// and a Music stream play on the speaker.
    init() {
        core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
        var ambient = Recorded.pwPlayStream(id: Self.ambientStream, client: Self.ambientClient, role: "Music", serial: 50)
        ambient["media.role"] = nil
        ambient["audio.session.category"] = "ambient"
        let events: [Event] = Recorded.idleGraph
            + Recorded.play(client: Self.ambientClient, Recorded.pwCatClient(id: Self.ambientClient, pid: 100, serial: 48),
                            stream: Self.ambientStream, ambient, links: [44, 45], sink: Recorded.speakerID)
            + Recorded.play(client: Self.musicClient, Recorded.pwCatClient(id: Self.musicClient, pid: 101, serial: 49),
                            stream: Self.musicStream,
                            Recorded.pwPlayStream(id: Self.musicStream, client: Self.musicClient, role: "Music", serial: 51),
                            links: [46, 47], sink: Recorded.speakerID)
        for e in events { core.handle(e) }
        _ = sink.take()
    }

    /// pw-session's client: it connects, then sets `key` with pw_core_update_properties.
    func controllerProps(access: String, _ extra: Properties = [:]) -> Properties {
        var p = Recorded.pwCatClient(id: Self.controller, pid: 200, serial: 90)
        p["application.name"] = "pw-session"
        p["pipewire.access"] = access
        return p.merging(extra) { $1 }
    }

    func change(_ props: Properties) -> [EffectCall] {
        core.handle(.clientChanged(ClientID(Self.controller), props))
        return sink.take()
    }

    @Test func r20PermittedClientTurningSilentModeOnSilencesOnlyTheAmbientStream() {
        core.handle(.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted")))
        #expect(sink.take().streamEffects.isEmpty)
        let calls = change(controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": "true"]))
        #expect(calls.streamEffects == [.silence(Self.ambientStream, true)])
        #expect(calls.logs.contains { $0.0 == .info && $0.1.contains("audio.session.control.silent-mode") })
        let global = calls.metadataWrites.last { $0.key == "audio-session.global" }?.value
        #expect(global?.bool("silentMode") == true)

        let off = change(controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": "false"]))
        #expect(off.streamEffects == [.silence(Self.ambientStream, false)])
    }

    @Test func r20ScreenLockFromAClientAlreadySetAtConnectSilencesTheAmbientStream() {
        core.handle(.clientAdded(ClientID(Self.controller),
                                 controllerProps(access: "unrestricted", ["audio.session.control.screen-lock": "true"])))
        #expect(sink.take().streamEffects == [.silence(Self.ambientStream, true)])
    }

    @Test func flatpakClientIsRefusedWithAWarningAndNoEffect() {
        core.handle(.clientAdded(ClientID(Self.controller), controllerProps(access: "flatpak")))
        _ = sink.take()
        let calls = change(controllerProps(access: "flatpak", ["audio.session.control.silent-mode": "true"]))
        #expect(calls.streamEffects.isEmpty)
        #expect(calls.metadataWrites.isEmpty)
        let warnings = calls.logs.filter { $0.0 == .warn }
        #expect(warnings.count == 1)
        #expect(warnings.first?.1.contains("audio.session.control.silent-mode") == true)
        #expect(core.policy.snapshot().silentMode == false)
    }

    @Test func restrictedClientIsRefusedToo() {
        let calls = { () -> [EffectCall] in
            core.handle(.clientAdded(ClientID(Self.controller),
                                     controllerProps(access: "restricted", ["audio.session.control.screen-lock": "true"])))
            return sink.take()
        }()
        #expect(calls.streamEffects.isEmpty)
        #expect(calls.logs.contains { $0.0 == .warn })
    }

    @Test func aRepeatedIdenticalValueIsNotReapplied() {
        core.handle(.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted")))
        let props = controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": "true"])
        #expect(change(props).streamEffects == [.silence(Self.ambientStream, true)])
        // The client's properties change again (another key), the switch does not.
        var again = props
        again["application.icon-name"] = "x"
        let repeated = change(again)
        #expect(repeated.streamEffects.isEmpty)
        #expect(repeated.logs.isEmpty)
        #expect(repeated.metadataWrites.isEmpty)
    }

    @Test func aSwitchStaysAsSetAfterTheClientLeaves() {
        core.handle(.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted")))
        _ = change(controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": "true"]))
        core.handle(.clientRemoved(ClientID(Self.controller)))
        #expect(sink.take().streamEffects.isEmpty)
        #expect(core.policy.snapshot().silentMode == true)
    }

    @Test func valuesOtherThanTrueOrFalseAreIgnored() {
        core.handle(.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted")))
        for value in ["1", "yes", "TRUE", "", "true "] {
            let calls = change(controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": value]))
            #expect(calls.streamEffects.isEmpty, "\(value)")
        }
        #expect(core.policy.snapshot().silentMode == false)
    }
}

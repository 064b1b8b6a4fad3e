import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// Silent mode and screen lock from a client's own properties (R20): the module core reads
/// the request (`SwitchRequest(pipeWire:)`), the policy decides (`PolicyStep+Switches`).
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
            + Recorded.pwPlay(client: Self.musicClient, pid: 101, clientSerial: 49, stream: Self.musicStream, role: "Music",
                              streamSerial: 51, links: [46, 47], sink: Recorded.speakerID)
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

    /// The client updates its own properties: the daemon reports the new set (`info_changed`),
    /// the module the update itself (its own client resource).
    func change(_ props: Properties) -> [EffectCall] {
        core.handle(.clientChanged(ClientID(Self.controller), props))
        core.ownPropertiesWritten(ClientID(Self.controller), props)
        return sink.take()
    }

    @Test func r20PermittedClientTurningSilentModeOnSilencesOnlyTheAmbientStream() {
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted"), identity: ClientIdentity())
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
        core.clientAdded(ClientID(Self.controller),
                                 controllerProps(access: "unrestricted", ["audio.session.control.screen-lock": "true"]), identity: ClientIdentity())
        #expect(sink.take().streamEffects == [.silence(Self.ambientStream, true)])
    }

    @Test func flatpakClientIsRefusedWithAWarningAndNoEffect() {
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "flatpak"), identity: ClientIdentity())
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
            core.clientAdded(ClientID(Self.controller),
                                     controllerProps(access: "restricted", ["audio.session.control.screen-lock": "true"]), identity: ClientIdentity())
            return sink.take()
        }()
        #expect(calls.streamEffects.isEmpty)
        #expect(calls.logs.contains { $0.0 == .warn })
    }

    @Test func aRepeatedIdenticalValueIsNotReapplied() {
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted"), identity: ClientIdentity())
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
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted"), identity: ClientIdentity())
        _ = change(controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": "true"]))
        core.handle(.clientRemoved(ClientID(Self.controller)))
        #expect(sink.take().streamEffects.isEmpty)
        #expect(core.policy.snapshot().silentMode == true)
    }

    @Test func valuesOtherThanTrueOrFalseAreIgnored() {
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted"), identity: ClientIdentity())
        for value in ["1", "yes", "TRUE", "", "true "] {
            let calls = change(controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": value]))
            #expect(calls.streamEffects.isEmpty, "\(value)")
        }
        #expect(core.policy.snapshot().silentMode == false)
    }

    // MARK: one request, one decision

    @Test func r20BothSwitchesInOneOwnUpdateAreOneRequestPublishedOnce() {
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted"), identity: ClientIdentity())
        _ = sink.take()
        let calls = change(controllerProps(access: "unrestricted", [
            "audio.session.control.silent-mode": "true", "audio.session.control.screen-lock": "true",
        ]))
        #expect(calls.streamEffects == [.silence(Self.ambientStream, true)])
        let globals = calls.metadataWrites.filter { $0.key == "audio-session.global" }
        #expect(globals.count == 1)
        #expect(globals.first?.value?.bool("silentMode") == true)
        #expect(globals.first?.value?.bool("screenLocked") == true)
        #expect(calls.logs.filter { $0.0 == .info && $0.1.contains("audio.session.control.") }.map(\.1) == [
            "client 70 sets audio.session.control.silent-mode on", "client 70 sets audio.session.control.screen-lock on",
        ])
    }

    @Test func r20TheModuleLogsThePolicysRefusalOfEachSwitch() {
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "flatpak"), identity: ClientIdentity())
        _ = sink.take()
        let calls = change(controllerProps(access: "flatpak", [
            "audio.session.control.silent-mode": "true", "audio.session.control.screen-lock": "true",
        ]))
        #expect(calls.logs.filter { $0.0 == .warn }.map(\.1) == [
            "client 70 may not set audio.session.control.silent-mode: sandboxed client",
            "client 70 may not set audio.session.control.screen-lock: sandboxed client",
        ])
        #expect(calls.metadataWrites.isEmpty)
        // Asked again unchanged: not asked of the policy again, nothing logged.
        #expect(change(controllerProps(access: "flatpak", ["audio.session.control.silent-mode": "true"])).logs.isEmpty)
    }

    @Test func r20ARestrictedAccessInTheClientsOwnUpdateRefusesItsRequest() {
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted"), identity: ClientIdentity())
        _ = sink.take()
        let update: Properties = ["pipewire.access": "restricted", "audio.session.control.silent-mode": "true"]
        core.ownPropertiesWritten(ClientID(Self.controller), update)
        let calls = sink.take()
        #expect(calls.streamEffects.isEmpty)
        #expect(calls.logs.contains { $0.0 == .warn && $0.1.hasSuffix("sandboxed client") })
        #expect(core.policy.snapshot().silentMode == false)
        // It costs the client this request only: its identity in the policy is unchanged.
        #expect(core.policy.snapshot().clients[ClientID(Self.controller)]?.facts.identity.sandboxed == false)
    }

    // MARK: what a client cannot forge

    @Test func r20AnotherClientWritingTheSwitchIntoATrustedClientsPropertiesChangesNothing() {
        core.clientAdded(ClientID(Self.controller), controllerProps(access: "unrestricted"), identity: ClientIdentity())
        _ = sink.take()
        // pw_client_update_properties on the controller's global, from another connection:
        // the daemon reports the new set, but the controller sent nothing.
        core.handle(.clientChanged(ClientID(Self.controller),
                                   controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": "true"])))
        core.flush()
        #expect(sink.take().streamEffects.isEmpty)
        #expect(core.policy.snapshot().silentMode == false)
    }

    @Test func r20AFlatpakClientThatClaimsUnrestrictedAccessAtConnectIsStillRefused() {
        // PipeWire 0.3.65 keeps a pipewire.access the client brings; the module's own
        // look at the process (its Flatpak instance file) says sandboxed.
        core.clientAdded(ClientID(Self.controller),
                         controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": "true"]),
                         identity: ClientIdentity(executable: "/app/bin/game", appID: "org.example.Game", uid: 1000,
                                                  access: "unrestricted", inFlatpak: true))
        let calls = sink.take()
        #expect(calls.streamEffects.isEmpty)
        #expect(calls.logs.contains { $0.0 == .warn && $0.1.contains("sandboxed") })
        #expect(core.policy.snapshot().silentMode == false)
    }

    @Test func r20WithAControlAllowListOnlyTheExecutablesItNamesMaySetTheSwitches() {
        var config = PolicyConfiguration()
        config.controlApplications = ["/usr/bin/pw-session"]
        let sink = RecordingEffectSink()
        let core = ModuleCore(configuration: config, effects: sink)
        var props = controllerProps(access: "unrestricted", ["audio.session.control.silent-mode": "true"])
        props["application.name"] = "/usr/bin/pw-session"
        props["application.process.binary"] = "/usr/bin/pw-session"
        core.clientAdded(ClientID(71), props, identity: ClientIdentity(executable: "/usr/bin/python3", uid: 1000))
        #expect(core.policy.snapshot().silentMode == false)
        #expect(sink.take().logs.contains { $0.0 == .warn && $0.1.contains("control.allowed-applications") })

        core.clientAdded(ClientID(72), props, identity: ClientIdentity(executable: "/usr/bin/pw-session", uid: 1000))
        #expect(core.policy.snapshot().silentMode == true)
    }

    @Test func r10WhatAClientOrStreamSaysOfItsIdentityIsNotRead() {
        var config = PolicyConfiguration()
        config.callPriorityApplications = ["/usr/bin/linphone"]
        let core = ModuleCore(configuration: config, effects: RecordingEffectSink())
        let forged: Properties = [
            "audio-session.identity.executable": "/usr/bin/linphone", "audio-session.identity.sandboxed": "false",
            "pipewire.sec.pid": "1", "application.process.binary": "/usr/bin/linphone", "media.role": "Phone",
        ]
        core.clientAdded(ClientID(80), forged, identity: ClientIdentity(executable: "/usr/bin/pw-play", uid: 1000, access: "restricted"))
        core.handle(.streamAdded(NodeID(81), client: ClientID(80), direction: .output, forged))
        core.handle(.clientChanged(ClientID(80), forged))
        core.flush()
        #expect(core.policy.sessions[.stream(NodeID(81))]?.priority == .normal)
        #expect(core.policy.snapshot().clients[ClientID(80)]?.facts.identity.sandboxed == true)
        #expect(core.policy.snapshot().clients[ClientID(80)]?.facts.identity.executable == "/usr/bin/pw-play")
    }
}

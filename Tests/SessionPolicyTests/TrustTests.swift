import SessionPolicy
import PipeWireFacts
import Testing

/// Priority is granted on the identity the module established, never on what a client
/// declares or calls itself (R10, and the alarm class).
@Suite struct TrustTests {
    static let sandboxed = ClientIdentity(executable: "/usr/bin/pw-play", uid: 1000, access: .restricted).properties
    static let softphone = ClientIdentity(executable: "/usr/bin/linphone", uid: 1000).properties

    /// Sandboxing is read from what the daemon enforced, not from `pipewire.access` alone:
    /// on PipeWire before 0.3.82 a client could bring `pipewire.access = unrestricted`
    /// itself, and the access module then granted it nothing.
    @Test func anAccessTheDaemonDidNotBackIsSandboxed() {
        // The spoof on 0.3.65: claims unrestricted, registered without access to the core.
        #expect(ClientIdentity(access: .unrestricted, coreAccessGranted: false, accessFromDaemon: false).sandboxed)
        // The same with a `default` it brought itself.
        #expect(ClientIdentity(access: "default", coreAccessGranted: false, accessFromDaemon: false).sandboxed)
        // A genuinely unrestricted client, on either generation.
        #expect(!ClientIdentity(access: .unrestricted, coreAccessGranted: true, accessFromDaemon: false).sandboxed)
        #expect(!ClientIdentity(access: .unrestricted, coreAccessGranted: true, accessFromDaemon: true).sandboxed)
        // PipeWire 1.x with per-socket access: `default` is the daemon's, granted later by
        // the session manager.
        #expect(!ClientIdentity(access: "default", coreAccessGranted: false, accessFromDaemon: true).sandboxed)
        // Nothing known: as before.
        #expect(!ClientIdentity(access: .unrestricted).sandboxed)
        #expect(ClientIdentity(access: .restricted, coreAccessGranted: true).sandboxed)
    }

    @Test func r20R10AClientWhoseAccessTheDaemonDidNotBackGetsNoSwitchAndNoCallPriority() {
        let spoof = ClientIdentity(executable: "/usr/bin/pw-mon", uid: 1000, access: .unrestricted,
                                   coreAccessGranted: false, accessFromDaemon: false)
        var policy = SessionPolicy()
        let fx = policy.handle(.clientAdded(C(1), ["audio.session.control.silent-mode": "true"], identity: spoof))
            + policy.handle(.switchesRequested(C(1), SwitchRequest(silentMode: true)))
        #expect(fx.contains(.switchRefused(C(1), .silentMode, reason: .sandboxed)), "\(fx)")
        #expect(policy.global.silentMode == false)

        var w = World()
        w.legacy(10, client: 1, role: nil)
        w.play(10)
        w.when(.clientAdded(C(2), [:], identity: spoof))
        w.clientProps[C(2)] = [:]
        w.stream(20, client: 2, .output, ["media.role": "Phone"])
        #expect(w.session(legacyS(20))?.priority == .normal)
        #expect(!w.decide(.streamRunning(N(20), true)).contains(.pause(N(10))))
    }

    @Test func r10ARestrictedClientPlayingWithRolePhoneGetsNormalPriorityAndInterruptsNoMixableAudio() {
        // A stream without a role mixes (desktop profile): only a call interrupts it (R10, R2).
        var w = World()
        w.legacy(10, client: 1, role: nil)
        w.play(10)
        w.client(2, Self.sandboxed)
        w.stream(20, client: 2, .output, ["media.role": "Phone"])
        #expect(w.session(legacyS(20))?.priority == .normal)
        let effects = w.decide(.streamRunning(N(20), true))
        #expect(!effects.contains(.pause(N(10))), "\(effects)")

        var trusted = World()
        trusted.legacy(10, client: 1, role: nil)
        trusted.play(10)
        trusted.client(2, Self.softphone)
        trusted.stream(20, client: 2, .output, ["media.role": "Phone"])
        #expect(trusted.decide(.streamRunning(N(20), true)).contains(.pause(N(10))))
    }

    @Test func r10ARestrictedClientDeclaringPlayAndRecordVoiceChatGetsNormalPriority() {
        var w = World()
        w.declared(2, "playAndRecord", mode: "voiceChat", extra: Self.sandboxed)
        w.stream(20, client: 2)
        #expect(w.session(clientS(2))?.priority == .normal)

        var trusted = World()
        trusted.declared(2, "playAndRecord", mode: "voiceChat", extra: Self.softphone)
        trusted.stream(20, client: 2)
        #expect(trusted.session(clientS(2))?.priority == .call)
    }

    @Test func aRestrictedClientPlayingWithRoleAlarmGetsNormalPriority() {
        var w = World()
        w.client(2, Self.sandboxed)
        w.stream(20, client: 2, .output, ["media.role": "Alarm"])
        #expect(w.session(legacyS(20))?.priority == .normal)

        var trusted = World()
        trusted.client(2, Self.softphone)
        trusted.stream(20, client: 2, .output, ["media.role": "Alarm"])
        #expect(trusted.session(legacyS(20))?.priority == .alarm)
    }

    @Test func r10TheCallAllowListNamesExecutablesNotApplicationNames() {
        var w = World { $0.callPriorityApplications = ["/usr/bin/linphone", "org.example.Phone"] }
        // Calls itself linphone, runs something else: not granted.
        var spoof = ClientIdentity(executable: "/usr/bin/pw-play", uid: 1000).properties
        spoof["application.name"] = "/usr/bin/linphone"
        spoof["application.process.binary"] = "/usr/bin/linphone"
        w.client(2, spoof)
        w.stream(20, client: 2, .output, ["media.role": "Phone", "application.name": "/usr/bin/linphone"])
        #expect(w.session(legacyS(20))?.priority == .normal)
        // The executable named in the list.
        w.client(3, Self.softphone)
        w.stream(30, client: 3, .output, ["media.role": "Phone"])
        #expect(w.session(legacyS(30))?.priority == .call)
        // A Flatpak app named by its id, sandboxed or not.
        w.client(4, ClientIdentity(executable: "/app/bin/phone", appID: "org.example.Phone", access: .restricted).properties)
        w.stream(40, client: 4, .output, ["media.role": "Phone"])
        #expect(w.session(legacyS(40))?.priority == .call)
    }

    @Test func allowListEntriesNameExecutablesUsersAndAppIDs() {
        let id = ClientIdentity(executable: "/usr/bin/linphone", appID: "org.example.Phone", uid: 1000)
        #expect(id.isNamed(by: "/usr/bin/linphone"))
        #expect(!id.isNamed(by: "linphone"))
        #expect(id.isNamed(by: "uid:1000"))
        #expect(!id.isNamed(by: "uid:0"))
        #expect(!id.isNamed(by: "uid:"))
        #expect(!id.isNamed(by: "uid:99999999999999999999"))
        #expect(id.isNamed(by: "org.example.Phone"))
        #expect(!ClientIdentity().isNamed(by: ""))
        #expect(ClientIdentity(testProperties: id.properties) == id)
    }
}

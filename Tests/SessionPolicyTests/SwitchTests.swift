import SessionPolicy
import PipeWireFacts
import Testing

/// Who may set the global switches (R20) is the policy's decision, one per request, on the
/// identity the module established for the client (its record's `ClientFacts.identity`).
@Suite("The global switches are granted (R20)")
struct SwitchTests {
    static let sandboxed = ClientIdentity(executable: "/usr/bin/pw-session", uid: 1000, access: .restricted)
    static let pwSession = ClientIdentity(executable: "/usr/bin/pw-session", uid: 1000)

    /// An ambient stream 10 plays (silenced by either switch); client `c` has `identity`.
    static func world(_ c: UInt32, _ identity: ClientIdentity, _ extra: Properties = [:],
                      _ configure: (inout PolicyConfiguration) -> Void = { _ in }) -> World {
        var w = World(configure)
        w.declared(1, "ambient")
        w.stream(10, client: 1)
        w.play(10)
        w.client(c, identity.properties.merging(extra) { $1 })
        return w
    }

    static func both(_ on: Bool) -> SwitchRequest { SwitchRequest(silentMode: on, screenLock: on) }

    static func globals(_ effects: [Effect]) -> [GlobalSnapshot] {
        effects.compactMap { if case .publishGlobal(let g) = $0 { g } else { nil } }
    }

    @Test("both switches in one request are one decision: one publishGlobal carrying both")
    func bothSwitchesInOneRequestAreOneDecision() {
        var w = Self.world(2, Self.pwSession)
        let effects = w.when(.switchesRequested(C(2), Self.both(true)))
        #expect(decisions(effects) == [.silence(N(10), true)])
        let published = Self.globals(effects)
        #expect(published.count == 1, "\(effects)")
        #expect(published.first?.silentMode == true)
        #expect(published.first?.screenLocked == true)
    }

    @Test("a switch the request leaves out stays as it is")
    func aSwitchTheRequestLeavesOutStaysAsItIs() {
        var w = Self.world(2, Self.pwSession)
        w.when(.switchesRequested(C(2), SwitchRequest(screenLock: true)))
        #expect(w.decide(.switchesRequested(C(2), SwitchRequest(silentMode: false))) == [])
        #expect(w.policy.global.screenLocked == true)
        #expect(w.policy.global.silentMode == false)
        #expect(w.decide(.switchesRequested(C(2), SwitchRequest(screenLock: false))) == [.silence(N(10), false)])
    }

    @Test("a sandboxed client is refused: one switchRefused per switch it asked for, nothing changes")
    func aSandboxedClientIsRefused() {
        var w = Self.world(2, Self.sandboxed)
        let effects = w.when(.switchesRequested(C(2), Self.both(true)))
        #expect(effects == [
            .switchRefused(C(2), .silentMode, reason: .sandboxed),
            .switchRefused(C(2), .screenLock, reason: .sandboxed),
        ])
        #expect(w.policy.global.silentMode == false)
        #expect(w.policy.global.screenLocked == false)
        // Asked again unchanged: no new request, nothing to refuse again.
        #expect(w.decide(.switchesRequested(C(2), SwitchRequest(screenLock: true))) == [])
        #expect(w.decide(.switchesRequested(C(2), SwitchRequest(screenLock: false)))
            == [.switchRefused(C(2), .screenLock, reason: .sandboxed)])
    }

    @Test("a granted request names each switch it set, once: asked again unchanged, nothing")
    func aGrantedRequestNamesEachSwitchOnce() {
        var w = Self.world(2, Self.pwSession)
        #expect(w.when(.switchesRequested(C(2), Self.both(true))).filter { if case .switchSet = $0 { true } else { false } }
            == [.switchSet(C(2), .silentMode, true), .switchSet(C(2), .screenLock, true)])
        #expect(w.when(.switchesRequested(C(2), Self.both(true))) == [])
    }

    @Test("sandboxed by the properties the request came with refuses; not sandboxed there grants nothing")
    func sandboxedWithTheRequestOnlyRefuses() {
        var w = Self.world(2, Self.pwSession)
        #expect(w.decide(.switchesRequested(C(2), SwitchRequest(silentMode: true, access: .restricted)))
            == [.switchRefused(C(2), .silentMode, reason: .sandboxed)])
        #expect(w.policy.global.silentMode == false)

        var v = Self.world(2, Self.sandboxed)
        #expect(v.decide(.switchesRequested(C(2), SwitchRequest(silentMode: true, access: .unrestricted)))
            == [.switchRefused(C(2), .silentMode, reason: .sandboxed)])
    }

    @Test("what a client calls itself does not make it sandboxed or trusted: only its identity counts")
    func theIdentityKeysOfTheRecordDecideNotTheName() {
        // Calls itself pw-session; the module found it sandboxed.
        var w = Self.world(2, Self.sandboxed, ["application.name": "pw-session"])
        #expect(w.decide(.switchesRequested(C(2), SwitchRequest(silentMode: true)))
            == [.switchRefused(C(2), .silentMode, reason: .sandboxed)])
    }

    @Test("with an allow list, clients are named by executable or app id, not by application.name")
    func theAllowListNamesIdentitiesNotApplicationNames() {
        let list: (inout PolicyConfiguration) -> Void = {
            $0.controlApplications = ["/usr/bin/pw-session", "org.example.Remote"]
        }
        // Runs python, calls itself pw-session.
        let spoof: Properties = ["application.name": "/usr/bin/pw-session", "application.process.binary": "/usr/bin/pw-session"]
        var w = Self.world(2, ClientIdentity(executable: "/usr/bin/python3", uid: 1000), spoof, list)
        #expect(w.decide(.switchesRequested(C(2), Self.both(true))) == [
            .switchRefused(C(2), .silentMode, reason: .notAllowed),
            .switchRefused(C(2), .screenLock, reason: .notAllowed),
        ])
        #expect(w.policy.global.silentMode == false)

        // Named by its executable.
        w.client(3, Self.pwSession.properties)
        #expect(w.decide(.switchesRequested(C(3), SwitchRequest(silentMode: true))) == [.silence(N(10), true)])

        // Named by its application id.
        var v = Self.world(4, ClientIdentity(executable: "/app/bin/remote", appID: "org.example.Remote", uid: 1000), [:], list)
        #expect(v.decide(.switchesRequested(C(4), SwitchRequest(screenLock: true))) == [.silence(N(10), true)])

        // Named, but sandboxed: sandboxed clients may not, whatever the list says.
        var s = Self.world(5, Self.sandboxed, [:], list)
        #expect(s.decide(.switchesRequested(C(5), SwitchRequest(silentMode: true)))
            == [.switchRefused(C(5), .silentMode, reason: .sandboxed)])
    }

    @Test("with an allow list, a client without an identity is named by nothing")
    func withAnAllowListAClientWithoutIdentityIsRefused() {
        var w = World { $0.controlApplications = ["/usr/bin/pw-session"] }
        w.client(2, ["application.name": "pw-session"])
        #expect(w.decide(.switchesRequested(C(2), SwitchRequest(silentMode: true)))
            == [.switchRefused(C(2), .silentMode, reason: .notAllowed)])
        #expect(w.decide(.switchesRequested(C(9), SwitchRequest(silentMode: true)))
            == [.switchRefused(C(9), .silentMode, reason: .notAllowed)])
    }

    @Test("the switches stay as set after the client that set them leaves")
    func theSwitchesStayAsSetAfterTheClientLeaves() {
        var w = Self.world(2, Self.pwSession)
        w.when(.switchesRequested(C(2), SwitchRequest(silentMode: true)))
        #expect(w.decide(.clientRemoved(C(2))) == [])
        #expect(w.policy.global.silentMode == true)
    }
}

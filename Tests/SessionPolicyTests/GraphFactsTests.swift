import PipeWireFacts
import Testing
@testable import SessionPolicy

/// §13 of docs/policy.md: what the policy makes of the facts the module reports. Each
/// of these was decided outside the policy before; each is the policy's now.
@Suite("What the policy reads from the graph (§13)")
struct GraphFactsTests {
    /// A card's sink (`device.api=alsa`, no form factor of its own) whose port is its route.
    static let card: Properties = ["node.name": "alsa_output.card", "node.description": "Built-in Audio", "device.api": "alsa"]

    static func read(_ port: String, _ availability: RouteReading.Availability = .yes, unavailable: [String] = []) -> Event {
        .endpointRoutesRead(N(50), RouteReading(
            name: "analog-output-\(port)", portType: port, availability: availability,
            unavailable: unavailable.map { "analog-output-\($0)" }))
    }

    /// Music plays on the card's sink, its headphone port active.
    static func musicOnHeadphones() -> World {
        var w = World()
        w.when(.endpointAdded(N(50), kind: .sink, card), read("headphones"))
        w.legacy(20, client: 2, role: "Music")
        w.link(2, 20, 50)
        w.play(20)
        return w
    }

    @Test("F1 a capture stream that records a sink's monitor is no session, and nothing that happens to it reaches the rules")
    func f1AMonitorRecorderIsNoSession() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.play(10)
        let before = w.policy.sessions
        let recorder: Properties = ["application.name": "pw-cat", "stream.capture.sink": "true"]
        #expect(w.decide(
            .streamAdded(N(20), client: C(2), direction: .input, recorder), .streamRunning(N(20), true),
            .streamChanged(N(20), recorder), .streamActivatedByOwner(N(20))) == [])
        #expect(w.policy.sessions == before)
        #expect(w.policy.snapshot().monitors == [N(20)])
        w.when(.streamRemoved(N(20)))
        #expect(w.policy.snapshot().monitors.isEmpty)
        // An output stream cannot record a monitor: it is a session.
        w.when(.streamAdded(N(21), client: C(2), direction: .output, recorder), .streamRunning(N(21), true))
        #expect(w.session(legacyS(21)) != nil)
    }

    @Test("F2 a card's port that becomes unavailable is lost (R30) even when the card already switched to its speaker")
    func f2AnUnavailablePortIsALoss() {
        var w = Self.musicOnHeadphones()
        #expect(w.policy.snapshot().endpoints[N(50)]?.port.type == .headphones)
        let lost = w.decide(Self.read("speaker", unavailable: ["headphones"]))
        #expect(lost.first == .pause(N(20)))
        #expect(lost.contains(.notify(legacyS(20), .routeChange(
            reason: .oldDeviceUnavailable, previous: Route(outputs: [Port(name: "Built-in Audio", uid: "alsa_output.card", type: .headphones)]),
            current: Route()))))
        #expect(w.policy.snapshot().endpoints[N(50)]?.portLost == true)
        #expect(w.policy.snapshot().endpoints[N(50)]?.port.type == .builtInSpeaker)
    }

    @Test("F2 another port chosen while the old one is still available is the user's choice (R33), never a loss")
    func f2AnotherPortWhileTheOldIsAvailableIsTheUsersChoice() {
        var w = Self.musicOnHeadphones()
        #expect(w.decide(Self.read("speaker")) == [])
        #expect(w.session(legacyS(20))?.isPlaying == true)
        #expect(w.session(legacyS(20))?.route.outputs.map(\.type) == [.builtInSpeaker])
    }

    @Test("F2 the lost port active and available again is back (R32); what its loss paused stays paused (R31)")
    func f2TheLostPortsReturnIsBack() {
        var w = Self.musicOnHeadphones()
        _ = w.decide(Self.read("speaker", unavailable: ["headphones"]))
        // Still listed unavailable while the card switches back: not back yet.
        #expect(w.decide(Self.read("headphones", .no, unavailable: ["headphones"])) == [])
        #expect(w.policy.snapshot().endpoints[N(50)]?.portLost == true)
        #expect(w.decide(Self.read("headphones")) == [])
        #expect(w.policy.snapshot().endpoints[N(50)]?.portLost == false)
        #expect(w.policy.snapshot().endpoints[N(50)]?.port.type == .headphones)
        #expect(w.policy.snapshot().streams[N(20)]?.pausedByPolicy == true)
    }

    @Test("F2 a read before the node exists gives the node its port; a Bluetooth device's profile is never overridden by a route")
    func f2AnEarlyReadGivesTheNodeItsPort() {
        var w = World()
        w.when(Self.read("headphones"), .endpointAdded(N(50), kind: .sink, Self.card))
        #expect(w.policy.snapshot().endpoints[N(50)]?.port.type == .headphones)
        #expect(w.policy.snapshot().earlyRoutes.isEmpty)
        w.when(.endpointAdded(N(60), kind: .sink, ["node.name": "bluez_output.x", "device.api": "bluez5", "api.bluez5.profile": "a2dp-sink"]),
               .endpointRoutesRead(N(60), RouteReading(name: "speaker-output", portType: "speaker", availability: .yes, unavailable: [])))
        #expect(w.policy.snapshot().endpoints[N(60)]?.port.type == .bluetoothA2DP)
        // A read for a node that goes before it is added leaves nothing behind.
        w.when(.endpointRoutesRead(N(70), RouteReading(name: "x", portType: "", availability: .yes, unavailable: [])), .endpointRemoved(N(70)))
        #expect(w.policy.recordCount == 0)
    }

    @Test("F3 a node its owner makes active is an activation request (R16) only while the policy holds it paused")
    func f3TheOwnersActivationIsARequestOnlyWhileHeld() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.play(10)
        // Not held: nothing (its running state follows in its own report).
        #expect(w.decide(.streamActivatedByOwner(N(10))) == [])
        w.legacy(11, client: 2, role: "Phone")
        w.play(11)
        #expect(w.policy.holdsPaused(N(10)))
        // Held by the call: arbitrated again, and refused (the call outranks it).
        #expect(w.decide(.streamActivatedByOwner(N(10))).contains(.pause(N(10))))
    }

    @Test("F3 after the program paused itself (the MPRIS bridge's release) its own start is still a request while the module's pause holds the node")
    func f3AReleasedStreamsStartIsStillARequest() {
        var w = World { $0.daemonUserID = 1000 }
        w.legacy(10, client: 1, role: "Music")
        w.play(10)
        w.legacy(11, client: 2, role: "Phone")
        w.play(11)
        w.when(.clientAdded(C(70), [DeclarationKey.mprisReleased: "10"], identity: ClientIdentity(uid: 1000)))
        #expect(!w.policy.holdsPaused(N(10)))
        #expect(w.policy.snapshot().streams[N(10)]?.pauseReleased == true)
        #expect(w.decide(.streamActivatedByOwner(N(10))) == [.pause(N(10))])
        #expect(w.policy.holdsPaused(N(10)))
        #expect(w.policy.snapshot().streams[N(10)]?.pauseReleased == false)
    }

    @Test("F3 a released stream whose player plays again (still governed, no longer released) is the owner's activation: a player that never paused its node, as Chromium, gets it back")
    func f3AReleasedStreamWhosePlayerPlaysAgainIsAnActivation() {
        let player = "org.mpris.MediaPlayer2.chromium.instance1"
        /// Music (10) interrupted by a call (11), its player paused through MPRIS and released.
        func releasedDuringACall() -> World {
            var w = World { $0.daemonUserID = 1000 }
            w.legacy(10, client: 1, role: "Music")
            w.play(10)
            w.legacy(11, client: 2, role: "Phone")
            w.play(11)
            w.when(.clientAdded(C(70), [:], identity: ClientIdentity(uid: 1000)))
            w.when(.playerReportChanged(C(70), PlayerReport(governed: [N(10): player], released: [N(10)])))
            return w
        }
        var w = releasedDuringACall()
        #expect(w.policy.snapshot().streams[N(10)]?.pauseReleased == true)
        // The user presses play in the browser during the call: arbitrated, refused (R16).
        #expect(w.decide(.playerReportChanged(C(70), PlayerReport(governed: [N(10): player], released: []))).contains(.pause(N(10))))
        #expect(w.policy.holdsPaused(N(10)))
        w.when(.playerReportChanged(C(70), PlayerReport(governed: [N(10): player], released: [N(10)])))
        // The call ends; the bridge's Play makes the player play: the node is resumed.
        w.when(.streamRemoved(N(11)))
        let fx = w.decide(.playerReportChanged(C(70), PlayerReport(governed: [N(10): player], released: [])))
        #expect(fx.contains(.resume(N(10))), "\(fx)")
        #expect(w.policy.snapshot().streams[N(10)]?.pauseReleased == false)
        // A stream the bridge stops governing altogether is not resumed by that alone.
        var v = releasedDuringACall()
        v.when(.streamRemoved(N(11)))
        #expect(!v.decide(.playerReportChanged(C(70), PlayerReport())).contains(.resume(N(10))))
    }

    @Test("F4 MPRIS reports are accepted from the daemon's own user's unsandboxed clients only; a release never plays anything")
    func f4PlayerReportsComeFromTrustedClientsOnly() {
        let report = PlayerReport(governed: [N(10): "org.mpris.MediaPlayer2.mpv"], released: [N(10)])
        for (identity, trusted) in [
            (ClientIdentity(uid: 1000), true), (ClientIdentity(uid: 1000, inFlatpak: true), false),
            (ClientIdentity(uid: 1000, access: .restricted), false), (ClientIdentity(uid: 1001), false), (ClientIdentity(), false),
        ] {
            var w = World { $0.daemonUserID = 1000 }
            w.legacy(10, client: 1, role: "Music")
            w.play(10)
            w.legacy(11, client: 2, role: "Phone")
            w.play(11)
            w.when(.clientAdded(C(70), [:], identity: identity))
            let fx = w.decide(.playerReportChanged(C(70), report))
            #expect(!fx.contains(.resume(N(10))))
            if trusted {
                #expect(fx.contains(.publishPlayer(N(10), player: "org.mpris.MediaPlayer2.mpv")), "\(identity)")
                #expect(!w.policy.holdsPaused(N(10)))
            } else {
                #expect(fx == [.playerReportRefused(C(70))], "\(identity)")
                #expect(w.policy.holdsPaused(N(10)))
            }
        }
    }

    @Test("F5 a declaration larger than the limits is refused whole with badParam, and the last accepted one stays in force")
    func f5AnOversizedDeclarationIsRefusedWhole() {
        func refusedForItsSize(_ fx: [Effect]) -> Bool {
            fx.contains { if case .notify(clientS(1), .declarationRefused(let e)) = $0 { e.code == .badParam } else { false } }
        }
        let long = String(repeating: "a", count: DeclarationLimits.maximumValueBytes + 1)
        var keys: Properties = ["audio.session.category": "ambient"]
        for i in 0..<DeclarationLimits.maximumKeys { keys["audio.session.x\(i)"] = "1" }
        let options = Array(repeating: "mixWithOthers", count: DeclarationLimits.maximumOptions + 1).joined(separator: ",")
        for oversized: Properties in [["audio.session.category": "ambient", "audio.session.mode": long], keys,
                                      ["audio.session.category": "ambient", "audio.session.options": options]] {
            var w = World()
            w.declared(1, "playback")
            #expect(refusedForItsSize(w.when(.clientChanged(C(1), oversized))), "\(oversized.keys.sorted())")
            #expect(w.session(clientS(1))?.category == .playback)
            #expect(w.session(clientS(1))?.options.contains(.mixWithOthers) == false)
        }
    }

    @Test("F6 when the module goes away every stream the policy holds paused is resumed (R41), and nothing else is decided")
    func f6UnloadingUndoesThePauses() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.play(10)
        w.legacy(11, client: 2, role: "Phone")
        w.play(11)
        #expect(w.policy.handle(.moduleUnloading) == [.resume(N(10))])
    }

    @Test("F7 who a client is was established when it connected: a later property change cannot change it")
    func f7TheIdentityIsTheConnectionsOwn() {
        var w = World { $0.callPriorityApplications = ["/usr/bin/linphone"] }
        w.when(.clientAdded(C(1), ["application.name": "phone"], identity: ClientIdentity(executable: "/usr/bin/pw-play")))
        w.when(.clientChanged(C(1), ClientFacts(applicationName: "phone", identity: ClientIdentity(executable: "/usr/bin/linphone"))))
        #expect(w.policy.snapshot().clients[C(1)]?.facts.identity.executable == "/usr/bin/pw-play")
        w.stream(10, client: 1, .output, ["media.role": "Phone"])
        w.play(10)
        #expect(w.session(legacyS(10))?.priority == .normal)
    }
}

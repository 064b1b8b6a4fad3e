import Testing
import PipeWireFacts
@testable import SessionPolicy

/// R35: a Bluetooth headset's profile switch is not a loss. The module reports the headset's
/// sink removed, the headset's profile as read, and the sink of its next profile, as PipeWire's
/// Bluetooth plugin makes them (same device, same node name).
@Suite struct ProfileSwitchTests {
    static let device = DeviceID(40)

    static func headset(_ profile: String) -> Properties {
        ["node.name": "bluez_output.00_11_22_33_44_55.1", "node.description": "Headset", "device.api": "bluez5",
         "api.bluez5.profile": profile, "device.id": "40", "media.class": "Audio/Sink"]
    }

    static func profile(_ name: String) -> Event { .deviceProfileRead(device, DeviceProfile(pipeWireName: name)) }

    /// Music (node 20) playing on the headset's A2DP sink (node 50), the speaker (60) beside it.
    static func musicOnTheHeadset(_ configure: (inout PolicyConfiguration) -> Void = { _ in }) -> World {
        var w = World(configure)
        w.when(profile("a2dp-sink"))
        w.sink(50, headset("a2dp-sink"))
        w.sink(60, speakerProps)
        w.legacy(20, client: 2, role: "Music")
        w.link(1, 20, 50)
        w.play(20)
        return w
    }

    static func reasons(_ effects: [Effect], _ s: SessionID) -> [RouteChangeReason] {
        effects.compactMap { if case .notify(s, .routeChange(let r, _, _)) = $0 { r } else { nil } }
    }

    static func window(_ effects: [Effect]) -> UInt64? {
        effects.lazy.compactMap { if case .scheduleTimer(let t, _) = $0 { t } else { nil } }.first
    }

    @Test("R35 the headset's sink goes while the headset stays: the music is paused at once, nobody is told of a loss yet")
    func r35TheSinkOfASwitchingHeadsetGoesTheMusicIsHeldNotLost() {
        var w = Self.musicOnTheHeadset()
        let out = w.decide(.endpointRemoved(N(50)))
        #expect(out.first == .pause(N(20)), "\(out)")
        #expect(Self.reasons(out, legacyS(20)) == [])
        #expect(Self.window(out) != nil)
        // WirePlumber moves the orphan to the speaker: it stays paused there.
        #expect(w.decide(.linkAdded(L(2), output: N(20), input: N(60))) == [])
        #expect(w.session(legacyS(20))?.isPlaying == false)
    }

    @Test("R35 switched to hands-free: playback is held (noSuitableRouteForCategory); back in A2DP it plays again (routeConfigurationChange)")
    func r35PlaybackWaitsOutHandsFreeAndPlaysAgainInA2DP() {
        var w = Self.musicOnTheHeadset()
        w.when(.endpointRemoved(N(50)), Self.profile("headset-head-unit"))
        let hfp = w.when(.endpointAdded(N(51), kind: .sink, Self.headset("headset-head-unit")), .linkAdded(L(3), output: N(20), input: N(51)))
        #expect(Self.reasons(hfp, legacyS(20)) == [.noSuitableRouteForCategory], "\(hfp)")
        #expect(!decisions(hfp).contains(.resume(N(20))))
        #expect(w.session(legacyS(20))?.route.outputs.map(\.type) == [.bluetoothHFP])

        w.when(.endpointRemoved(N(51)), Self.profile("a2dp-sink"))
        let a2dp = w.when(.endpointAdded(N(52), kind: .sink, Self.headset("a2dp-sink")), .linkAdded(L(4), output: N(20), input: N(52)))
        #expect(Self.reasons(a2dp, legacyS(20)) == [.routeConfigurationChange], "\(a2dp)")
        #expect(decisions(a2dp).contains(.resume(N(20))))
        #expect(w.policy.model.profileSwitches.isEmpty)
        #expect(w.policy.model.streams[N(20)]?.switchHold == nil)
    }

    @Test("R35 a call follows the headset into hands-free: its stream plays on")
    func r35ACallPlaysOnInHandsFree() {
        var w = Self.musicOnTheHeadset()
        w.legacy(30, client: 3, role: "Phone")
        w.link(5, 30, 50)
        w.play(30)
        w.when(.endpointRemoved(N(50)), Self.profile("headset-head-unit"))
        let out = w.when(.endpointAdded(N(51), kind: .sink, Self.headset("headset-head-unit")), .linkAdded(L(6), output: N(30), input: N(51)))
        #expect(Self.reasons(out, legacyS(30)) == [.routeConfigurationChange], "\(out)")
        #expect(decisions(out).contains(.resume(N(30))))
    }

    @Test("R35 an interruption that ends while the headset is in hands-free resumes the music only once the headset is back in A2DP")
    func r35MusicInterruptedByACallComesBackInA2DP() {
        var w = Self.musicOnTheHeadset()
        // The call starts on the speaker; the music is interrupted (its fade is done).
        w.legacy(30, client: 3, role: "Phone")
        w.link(5, 30, 60)
        w.play(30)
        w.when(.streamFadedOut(N(20)), .streamRunning(N(20), false))
        w.when(.endpointRemoved(N(50)), Self.profile("headset-head-unit"),
               .endpointAdded(N(51), kind: .sink, Self.headset("headset-head-unit")), .linkAdded(L(3), output: N(20), input: N(51)))
        // The call ends: shouldResume, but hands-free does not suit the music.
        let end = w.when(.streamRemoved(N(30)))
        #expect(end.contains(ended(legacyS(20), resume: true)), "\(end)")
        #expect(!decisions(end).contains(.resume(N(20))))
        // Back in A2DP: it plays.
        w.when(.endpointRemoved(N(51)), Self.profile("a2dp-sink"))
        let back = w.when(.endpointAdded(N(52), kind: .sink, Self.headset("a2dp-sink")), .linkAdded(L(4), output: N(20), input: N(52)))
        #expect(decisions(back).contains(.resume(N(20))), "\(back)")
    }

    @Test("R30 R31 a headset whose profile turns off lost its sink: oldDeviceUnavailable, and its music stays paused when a sink comes back")
    func r31AHeadsetTurningOffIsALoss() {
        var w = Self.musicOnTheHeadset()
        w.when(.endpointRemoved(N(50)))
        let off = w.when(Self.profile("off"))
        #expect(Self.reasons(off, legacyS(20)) == [.oldDeviceUnavailable], "\(off)")
        #expect(w.policy.model.profileSwitches.isEmpty)
        w.when(Self.profile("a2dp-sink"))
        let back = w.when(.endpointAdded(N(52), kind: .sink, Self.headset("a2dp-sink")), .linkAdded(L(4), output: N(20), input: N(52)))
        #expect(!decisions(back).contains(.resume(N(20))), "R31: \(back)")
    }

    @Test("R30 R31 an empty profile (a device that answers none) and a removed device are losses too")
    func r31NoProfileAndARemovedDeviceAreLosses() {
        for last in [Self.profile(""), .deviceRemoved(Self.device)] {
            var w = Self.musicOnTheHeadset()
            w.when(.endpointRemoved(N(50)))
            #expect(Self.reasons(w.when(last), legacyS(20)) == [.oldDeviceUnavailable])
            #expect(w.policy.recordCount == (last == .deviceRemoved(Self.device) ? 0 : 1))
        }
    }

    @Test("R35 no sink of the headset within the window: a loss")
    func r31TheWindowEndsWithoutASinkItIsALoss() {
        var w = Self.musicOnTheHeadset()
        let out = w.when(.endpointRemoved(N(50)))
        guard let token = Self.window(out) else {
            Issue.record("no window: \(out)")
            return
        }
        #expect(Self.reasons(w.when(.timerFired(token)), legacyS(20)) == [.oldDeviceUnavailable])
        // A timer that ran out after the headset switched changes nothing.
        var v = Self.musicOnTheHeadset()
        let held = v.when(.endpointRemoved(N(50)))
        v.when(.endpointAdded(N(51), kind: .sink, Self.headset("headset-head-unit")))
        #expect(Self.window(held).map { Self.reasons(v.when(.timerFired($0)), legacyS(20)) } == [])
    }

    @Test("R16 the program starting its stream itself ends the hold")
    func r16TheProgramStartingItselfEndsTheHold() {
        var w = Self.musicOnTheHeadset()
        w.when(.endpointRemoved(N(50)), Self.profile("headset-head-unit"),
               .endpointAdded(N(51), kind: .sink, Self.headset("headset-head-unit")), .linkAdded(L(3), output: N(20), input: N(51)))
        let out = w.decide(.streamActivatedByOwner(N(20)))
        #expect(out.contains(.resume(N(20))), "\(out)")
        #expect(w.policy.model.streams[N(20)]?.switchHold == nil)
        #expect(w.policy.model.profileSwitches.isEmpty)
    }

    @Test("Without a timer (profileSwitchMilliseconds 0) a Bluetooth sink that goes is lost at once, as before")
    func withoutAWindowTheSinkIsLostAtOnce() {
        var w = Self.musicOnTheHeadset { $0.profileSwitchMilliseconds = 0 }
        let out = w.when(.endpointRemoved(N(50)))
        #expect(Self.reasons(out, legacyS(20)) == [.oldDeviceUnavailable])
    }

    @Test("The headset's port types come from its profile: bluetoothA2DP, bluetoothHFP, bluetoothLE")
    func portTypesFromTheProfile() {
        for (profile, type) in [("a2dp-sink", PortType.bluetoothA2DP), ("headset-head-unit", .bluetoothHFP),
                                ("headset-head-unit-cvsd", .bluetoothHFP), ("bap-sink", .bluetoothLE), ("bap-duplex", .bluetoothLE)] {
            #expect(EndpointFacts(pipeWire: Self.headset(profile), kind: .sink).port.type == type, "\(profile)")
        }
        #expect(EndpointFacts(pipeWire: Self.headset("a2dp-sink"), kind: .sink).device == Self.device)
    }
}

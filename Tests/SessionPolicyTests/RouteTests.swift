import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Routes (§8)")
struct RouteTests {
    /// Headphones 50, speaker 60.
    func world(_ configure: (inout PolicyConfiguration) -> Void = { _ in }) -> World {
        var w = World(configure)
        w.sink(50, headphonesProps)
        w.when(.headphonePortRead(N(50)))
        w.sink(60, speakerProps)
        return w
    }

    @Test("R30 private output lost pauses exactly the streams playing through it")
    func r30PrivateOutputLostPausesExactlyTheStreamsPlayingThroughIt() {
        var w = world()
        w.legacy(10, client: 1, role: nil)
        w.legacy(11, client: 2, role: nil)
        w.legacy(12, client: 3, role: nil)
        w.legacy(13, client: 4, role: nil)
        w.link(1, 10, 50)
        w.link(2, 11, 50)
        w.link(3, 12, 60)
        w.link(4, 13, 50)  // linked but not playing
        w.play(10)
        w.play(11)
        w.play(12)
        let lost = Route(outputs: [headphonesPort])
        #expect(w.decide(.endpointRemoved(N(50))) == [
            .pause(N(10)), .pause(N(11)),
            .notify(legacyS(10), .routeChange(reason: .oldDeviceUnavailable, previous: lost, current: Route())),
            .notify(legacyS(11), .routeChange(reason: .oldDeviceUnavailable, previous: lost, current: Route())),
        ])
        // WirePlumber relinks the orphans to the speaker: nothing resumes.
        #expect(w.decide(.linkAdded(L(5), output: N(10), input: N(60)), .linkAdded(L(6), output: N(11), input: N(60))) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.pausedByPolicy == true)
        #expect(w.policy.snapshot().streams[N(12)]?.pausedByPolicy == false)
    }

    @Test("R31 loss sends oldDeviceUnavailable, began(routeDisconnected) where preferred; no auto-resume unless configured")
    func r31LossSendsOldDeviceUnavailableAndBeganWherePreferredWithoutAutoResume() {
        var w = world()
        w.declared(1, "playback", extra: ["audio.session.prefers-interruption-on-route-disconnect": "true"])
        w.stream(10, client: 1)
        w.legacy(20, client: 2, role: nil)
        w.link(1, 10, 50)
        w.link(2, 20, 50)
        w.play(10)
        w.play(20)
        let lost = Route(outputs: [headphonesPort])
        #expect(w.decide(.headphonePortLost(N(50))) == [
            .pause(N(10)), .pause(N(20)),
            .notify(clientS(1), .routeChange(reason: .oldDeviceUnavailable, previous: lost, current: Route())),
            began(clientS(1), .routeDisconnected),
            .notify(legacyS(20), .routeChange(reason: .oldDeviceUnavailable, previous: lost, current: Route())),
        ])
        #expect(w.decide(.headphonePortRestored(N(50))) == [])

        var v = world { $0.resumeLegacyOnDeviceReturn = true }
        v.legacy(20, client: 2, role: nil)
        v.link(2, 20, 50)
        v.play(20)
        _ = v.decide(.headphonePortLost(N(50)))
        #expect(v.decide(.headphonePortRestored(N(50))) == [.resume(N(20))])
    }

    @Test("R32 a new device sends newDeviceAvailable and playback continues")
    func r32ANewDeviceSendsNewDeviceAvailableAndPlaybackContinues() {
        var w = World()
        w.sink(60, speakerProps)
        w.legacy(10, client: 1, role: "Music")
        w.link(1, 10, 60)
        w.play(10)
        let r = Route(outputs: [speakerPort])
        #expect(w.decide(.endpointAdded(N(50), kind: .sink, headphonesProps)) == [
            .notify(legacyS(10), .routeChange(reason: .newDeviceAvailable, previous: r, current: r))
        ])
        #expect(w.decide(.linkRemoved(L(1)), .linkAdded(L(2), output: N(10), input: N(50))) == [])
        #expect(w.session(legacyS(10))?.route == Route(outputs: [headphonesPort]))
        #expect(w.session(legacyS(10))?.active == true)
    }

    @Test("R33 overrideOutputAudioPort(.speaker) and (.none) of a declared session send override once each; the override is no loss")
    func r33OverrideOutputAudioPortSpeakerAndNoneSendOverrideOnceEachAndAreNoLoss() {
        var w = world()
        let base: Properties = ["application.name": "player", "audio.session.category": "playback"]
        w.client(1, base)
        w.stream(10, client: 1)
        w.link(1, 10, 50)
        w.play(10)
        var speaker = base
        speaker[DeclarationKey.outputOverride] = "speaker"
        #expect(w.decide(.clientChanged(C(1), speaker)) == [
            .notify(clientS(1), .routeChange(reason: .override, previous: Route(outputs: [headphonesPort]), current: Route(outputs: [speakerPort])))
        ])
        // The same value again is no new override.
        #expect(w.decide(.clientChanged(C(1), speaker)) == [])
        // The headphones go before the session manager has moved the stream: not a loss for it.
        #expect(w.decide(.endpointRemoved(N(50))) == [])
        w.sink(50, headphonesProps)
        w.link(2, 10, 60)
        var none = base
        none[DeclarationKey.outputOverride] = ""
        #expect(w.decide(.clientChanged(C(1), none)) == [
            .notify(clientS(1), .routeChange(reason: .override, previous: Route(outputs: [speakerPort]), current: Route(outputs: [speakerPort])))
        ])
        // An output nobody knows changes nothing.
        var unknown = base
        unknown[DeclarationKey.outputOverride] = "no-such-sink"
        #expect(w.decide(.clientChanged(C(1), unknown)) == [])
    }

    @Test("R34 defaultToSpeaker routes playAndRecord to the speaker instead of the receiver without a private output")
    func r34DefaultToSpeakerRoutesPlayAndRecordToTheSpeakerWithoutAPrivateOutput() {
        var w = World()
        w.sink(60, speakerProps)
        w.declared(1, "playAndRecord", options: "defaultToSpeaker")
        w.declared(2, "playAndRecord")
        #expect(w.session(clientS(1))?.preferredOutputPortType == .builtInSpeaker)
        #expect(w.session(clientS(2))?.preferredOutputPortType == .builtInReceiver)
        w.sink(50, headphonesProps)
        #expect(w.session(clientS(1))?.preferredOutputPortType == nil)
        #expect(w.session(clientS(2))?.preferredOutputPortType == nil)
    }

    @Test("§8 port types from node and device properties")
    func section8PortTypesComeFromNodeAndDeviceProperties() {
        #expect(Port.from(headphonesProps, kind: .sink).type == .headphones)
        #expect(Port.from(speakerProps, kind: .sink).type == .builtInSpeaker)
        #expect(Port.from(micProps, kind: .source).type == .builtInMic)
        #expect(Port.from(["device.api": "bluez5", "api.bluez5.profile": "a2dp-sink"], kind: .sink).type == .bluetoothA2DP)
        #expect(Port.from(["device.bus": "bluetooth", "api.bluez5.profile": "headset-head-unit"], kind: .sink).type == .bluetoothHFP)
        #expect(Port.from(["device.api": "alsa", "device.bus": "usb"], kind: .sink).type == .usbAudio)
        #expect(Port.from(["device.api": "alsa", "node.name": "alsa_output.pci.hdmi-stereo"], kind: .sink).type == .HDMI)
        #expect(Port.from(["device.api": "alsa"], kind: .sink, routeName: "analog-output-headphones", routePortType: "headphones").type == .headphones)
        // A route without a port type: its name is a hint, as an ALSA path is.
        #expect(Port.from(["device.api": "alsa"], kind: .source, routeName: "analog-input-headset-mic").type == .headsetMic)
        // `port.type` is the route's, never a node property: a stream or client cannot make a sink private by it.
        #expect(Port.from(["device.api": "alsa", "port.type": "headphones", "node.name": "speaker"], kind: .sink).type == .builtInSpeaker)
        #expect(Port.from(["device.api": "alsa", "api.alsa.path": "analog-input-headset-mic"], kind: .source).type == .headsetMic)
        #expect(Port.from(["device.api": "alsa", "device.form-factor": "car"], kind: .sink).type == .carAudio)
        #expect(Port.from(["factory.name": "support.null-audio-sink"], kind: .sink).type == .virtual)
        #expect(Port.from([:], kind: .sink) == Port(name: "", uid: "", type: .virtual))
    }

    @Test("§8 a route's name hints its port type wherever the word sits in it, in any case")
    func section8ARouteNameHintsItsPortTypeWhereverTheWordSits() {
        let hint = { (name: String) in PortType(route: name, portType: "", kind: .sink) }
        #expect(hint("headphone") == .headphones)             // the whole name
        #expect(hint("Analog Output HeadPhones") == .headphones) // any case, inside
        #expect(hint("über-hdmi") == .HDMI)                   // after non-ASCII bytes
        #expect(hint("out-displayport") == .displayPort)      // at the very end
        #expect(hint("headphon") == nil)                      // a word cut short is no hint
        #expect(hint("ph") == nil)                            // shorter than every word
        #expect(hint("") == nil)
    }
}

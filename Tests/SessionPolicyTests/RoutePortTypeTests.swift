import PipeWireFacts
import SessionPolicy
import Testing

/// A card's route names its port type (`port.type` in the route's info, the ALSA card
/// profile's values); the translation types it by exact value.
@Suite("Route port types")
struct RoutePortTypeTests {
    @Test("§8 every port type a card's route can name, for a sink and for a source")
    func section8EveryRoutePortTypeForASinkAndForASource() {
        let table: [(String, PortType?, PortType?)] = [
            ("headphones", .headphones, .headsetMic),
            ("headset", .headphones, .headsetMic),
            ("handsfree", .bluetoothHFP, .bluetoothHFP),
            ("bluetooth", .bluetoothA2DP, .bluetoothHFP),
            ("speaker", .builtInSpeaker, nil),
            ("portable", .builtInSpeaker, nil),
            ("mic", nil, .builtInMic),
            ("handset", .builtInReceiver, .builtInMic),
            ("earpiece", .builtInReceiver, .builtInMic),
            ("hdmi", .HDMI, nil),
            ("tv", .HDMI, nil),
            ("line", .lineOut, .lineIn),
            ("spdif", .lineOut, .lineIn),
            ("hifi", .lineOut, .lineIn),
            ("usb", .usbAudio, .usbAudio),
            ("car", .carAudio, .carAudio),
            ("unknown", nil, nil), ("aux", nil, nil), ("analog", nil, nil), ("radio", nil, nil),
            ("video", nil, nil), ("network", nil, nil), ("phone", nil, nil), ("", nil, nil),
            // Exact values only: no substring, no other case.
            ("Headphones", nil, nil), ("headphones2", nil, nil), ("not-headphones", nil, nil),
        ]
        for (value, sink, source) in table {
            #expect(PortType(routePortType: value, kind: .sink) == sink, "\(value) on a sink")
            #expect(PortType(routePortType: value, kind: .source) == source, "\(value) on a source")
        }
    }

    @Test("§8 a route whose port type says nothing leaves the endpoint's own properties to decide")
    func section8ARouteWithoutAUsablePortTypeLeavesThePropertiesToDecide() {
        let usb: Properties = ["device.api": "alsa", "device.bus": "usb", "node.name": "alsa_output.usb"]
        #expect(Port.from(usb, kind: .sink, routeName: "analog-output", routePortType: "analog").type == .usbAudio)
        #expect(Port.from(usb, kind: .sink, routeName: "analog-output-speaker", routePortType: "speaker").type == .builtInSpeaker)
    }
}

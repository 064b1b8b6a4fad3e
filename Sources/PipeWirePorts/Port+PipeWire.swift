import AudioSessionVocabulary

/// A sink's or source's port read from PipeWire's properties: shared by the translation
/// the policy reads (`PipeWireFacts`) and by the client library and `pw-session`, which
/// describe the current route the same way.
extension Port {
    /// Describes an endpoint from its merged node and device properties and, for a card's
    /// endpoint, the route active on its device (its name and info `port.type`).
    ///
    /// The port type comes, first match wins, from: Bluetooth (`device.bus`,
    /// `device.api=bluez5`, `api.bluez5.profile`), the active route
    /// (`PortType(route:portType:kind:)`), hints in `device.port.type` and `api.alsa.path`,
    /// HDMI/DisplayPort in the node name, `device.form-factor`, USB bus, virtual nodes
    /// (`node.virtual`, `factory.name=support.null-audio-sink` without a form factor), else
    /// the built-in speaker or microphone.
    public static func from(_ props: Properties, kind: EndpointKind, routeName: String? = nil, routePortType: String = "") -> Port {
        var port = from(props, kind: kind)
        if deviceFixesPortType(props) { return port }
        if let name = routeName, let type = PortType(route: name, portType: routePortType, kind: kind) { port.type = type }
        return port
    }

    /// The port as the properties alone describe it (no route).
    public static func from(_ props: Properties, kind: EndpointKind) -> Port {
        let uid = props["node.name"] ?? ""
        let name = props["node.description"] ?? props["device.description"] ?? props["node.nick"] ?? uid
        return Port(name: name, uid: uid, type: portType(props, kind: kind))
    }

    /// Whether the device fixes the port type whatever route is active: a Bluetooth device,
    /// whose profile says what it is.
    public static func deviceFixesPortType(_ props: Properties) -> Bool {
        props["device.bus"]?.lowercased() == "bluetooth" || props["device.api"] == "bluez5" || props["api.bluez5.profile"] != nil
            || (props["node.name"] ?? "").lowercased().hasPrefix("bluez")
    }

    static func portType(_ props: Properties, kind: EndpointKind) -> PortType {
        let sink = kind == .sink
        let formFactor = props["device.form-factor"]?.lowercased()
        let bus = props["device.bus"]?.lowercased()
        let nodeName = (props["node.name"] ?? "").lowercased()
        if deviceFixesPortType(props) {
            if formFactor == "car" { return .carAudio }
            if let p = props["api.bluez5.profile"]?.lowercased() {
                if p.has("headset") || p.has("hfp") || p.has("hsp") || p.has("head-unit") || p.has("gateway") {
                    return .bluetoothHFP
                }
                if p.has("bap") || p.has("lc3") { return .bluetoothLE }
            }
            return .bluetoothA2DP
        }
        for h in [props["device.port.type"], props["api.alsa.path"]].compactMap({ $0?.lowercased() }) {
            if let type = PortType(hint: h, kind: kind) { return type }
        }
        if nodeName.has("hdmi") { return .HDMI }
        if nodeName.has("displayport") { return .displayPort }
        if let f = formFactor {
            switch f {
            case "headphone", "headphones", "earbuds": return sink ? .headphones : .headsetMic
            case "headset", "hands-free": return sink ? .headphones : .headsetMic
            case "handset": return sink ? .builtInReceiver : .builtInMic
            case "car": return .carAudio
            case "tv": return .HDMI
            case "hifi": return sink ? .lineOut : .lineIn
            case "internal", "speaker", "computer", "portable": return sink ? .builtInSpeaker : .builtInMic
            case "microphone", "webcam": return bus == "usb" ? .usbAudio : .builtInMic
            default: break
            }
        }
        if bus == "usb" { return .usbAudio }
        if props["node.virtual"] == "true" || props["factory.name"] == "support.null-audio-sink" || props["device.api"] == nil {
            return .virtual
        }
        return sink ? .builtInSpeaker : .builtInMic
    }
}

extension PortType {
    /// The port type a lowercased name suggests (a route's name, `device.port.type`,
    /// `api.alsa.path`), nil when it suggests none.
    init?(hint h: String, kind: EndpointKind) {
        let sink = kind == .sink
        if h.has("headphone") || h.has("headset") { self = sink ? .headphones : .headsetMic }
        else if h.has("hdmi") { self = .HDMI }
        else if h.has("displayport") { self = .displayPort }
        else if h.has("line") || h.has("spdif") || h.has("iec958") { self = sink ? .lineOut : .lineIn }
        else if h.has("speaker") { self = .builtInSpeaker }
        else if h.has("mic") { self = .builtInMic }
        else { return nil }
    }

    /// The port type of a device's active route: its info `port.type` by exact value
    /// (`PortType(routePortType:kind:)`), else what its name suggests; nil when neither says.
    public init?(route name: String, portType: String, kind: EndpointKind) {
        if let t = PortType(routePortType: portType, kind: kind) {
            self = t
        } else if let t = PortType(hint: name.lowercased(), kind: kind) {
            self = t
        } else {
            return nil
        }
    }
}

extension String {
    /// Whether `word` occurs in the string, byte for byte. Not `contains(_:)` on a String:
    /// that one comes from the Regex library, and linking it would add about a megabyte of
    /// code to the module inside the daemon for these few lookups of lowercase ASCII hints.
    func has(_ word: String) -> Bool {
        let hay = Array(utf8), needle = Array(word.utf8)
        guard !needle.isEmpty else { return true }
        guard hay.count >= needle.count else { return false }
        for start in 0...(hay.count - needle.count) where hay[start..<(start + needle.count)].elementsEqual(needle) {
            return true
        }
        return false
    }
}

import SessionPolicy

extension Port {
    /// Describes an endpoint from its merged node and device properties and, for a card's
    /// endpoint, its device's active route as the module read it.
    ///
    /// The port type comes, first match wins, from: Bluetooth (`device.bus`,
    /// `device.api=bluez5`, `api.bluez5.profile`), the active route's port type
    /// (`PortType(routePortType:kind:)`, by exact value), hints in the route's name,
    /// `device.port.type` and `api.alsa.path`, HDMI/DisplayPort in the node name,
    /// `device.form-factor`, USB bus, virtual nodes (`node.virtual`,
    /// `factory.name=support.null-audio-sink` without a form factor), else the built-in
    /// speaker or microphone.
    public static func from(_ props: Properties, kind: EndpointKind, route: ActiveRoute? = nil) -> Port {
        let uid = props["node.name"] ?? ""
        let name = props["node.description"] ?? props["device.description"] ?? props["node.nick"] ?? uid
        return Port(name: name, uid: uid, type: portType(props, kind: kind, route: route))
    }

    static func portType(_ props: Properties, kind: EndpointKind, route: ActiveRoute?) -> PortType {
        let sink = kind == .sink
        let formFactor = props[PipeWireKey.formFactor]?.lowercased()
        let bus = props["device.bus"]?.lowercased()
        let profile = props["api.bluez5.profile"]?.lowercased()
        let nodeName = (props["node.name"] ?? "").lowercased()
        if bus == "bluetooth" || props["device.api"] == "bluez5" || profile != nil || nodeName.hasPrefix("bluez") {
            if formFactor == "car" { return .carAudio }
            if let p = profile {
                if p.contains("headset") || p.contains("hfp") || p.contains("hsp") || p.contains("head-unit") || p.contains("gateway") {
                    return .bluetoothHFP
                }
                if p.contains("bap") || p.contains("lc3") { return .bluetoothLE }
            }
            return .bluetoothA2DP
        }
        if let route, let type = PortType(routePortType: route.portType, kind: kind) { return type }
        let hints = [route?.name, props["device.port.type"], props["api.alsa.path"]]
            .compactMap { $0?.lowercased() }
        for h in hints {
            if h.contains("headphone") { return sink ? .headphones : .headsetMic }
            if h.contains("headset") { return sink ? .headphones : .headsetMic }
            if h.contains("hdmi") { return .HDMI }
            if h.contains("displayport") { return .displayPort }
            if h.contains("line") || h.contains("spdif") || h.contains("iec958") { return sink ? .lineOut : .lineIn }
            if h.contains("speaker") { return .builtInSpeaker }
            if h.contains("mic") { return .builtInMic }
        }
        if nodeName.contains("hdmi") { return .HDMI }
        if nodeName.contains("displayport") { return .displayPort }
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

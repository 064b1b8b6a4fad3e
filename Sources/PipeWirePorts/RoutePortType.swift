import AudioSessionVocabulary

extension PortType {
    /// The port type a route's `port.type` names. The values are the ALSA card profile's
    /// port types (PulseAudio's, which PipeWire's card profiles keep); a value that says
    /// nothing the policy can use (`unknown`, `aux`, `analog`, `radio`, `video`, `network`,
    /// `phone`, a port type an endpoint of this kind cannot have, or a new one) gives nil,
    /// and the endpoint's own properties decide.
    public init?(routePortType value: String, kind: EndpointKind) {
        let sink = kind == .sink
        switch value {
        case "headphones", "headset": self = sink ? .headphones : .headsetMic
        case "handsfree": self = .bluetoothHFP
        case "bluetooth": self = sink ? .bluetoothA2DP : .bluetoothHFP
        case "speaker", "portable":
            guard sink else { return nil }
            self = .builtInSpeaker
        case "mic":
            guard !sink else { return nil }
            self = .builtInMic
        case "handset", "earpiece": self = sink ? .builtInReceiver : .builtInMic
        case "hdmi", "tv":
            guard sink else { return nil }
            self = .HDMI
        case "line", "spdif", "hifi": self = sink ? .lineOut : .lineIn
        case "usb": self = .usbAudio
        case "car": self = .carAudio
        default: return nil
        }
    }
}

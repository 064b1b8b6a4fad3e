/// `AVAudioSession.Port`: the kind of an input or output (§8).
public enum PortType: String, Sendable, Hashable, CaseIterable {
    case builtInSpeaker, builtInReceiver, builtInMic, headphones, headsetMic
    case lineOut, lineIn, HDMI, displayPort, bluetoothA2DP, bluetoothHFP, bluetoothLE
    case usbAudio, carAudio, airPlay, virtual
}

/// `AVAudioSessionPortDescription`: one endpoint of a route.
public struct Port: Sendable, Equatable, Hashable {
    /// `portName`: `node.description`, else `device.description`, `node.nick`, `node.name`.
    public var name: String
    /// `uid`: the node name (`node.name`).
    public var uid: String
    /// `portType`.
    public var type: PortType

    public init(name: String, uid: String, type: PortType) {
        self.name = name
        self.uid = uid
        self.type = type
    }
}

/// `AVAudioSessionRouteDescription`: the sinks and sources a session's streams
/// are connected to, in node order.
public struct Route: Sendable, Equatable, Hashable {
    public var inputs: [Port]
    public var outputs: [Port]
    public init(inputs: [Port] = [], outputs: [Port] = []) {
        self.inputs = inputs
        self.outputs = outputs
    }
    public static let empty = Route()
}

/// Which side of a route a port is on: an output (a sink) or an input (a source).
public enum EndpointKind: String, Sendable, Hashable, CaseIterable {
    case sink, source
}

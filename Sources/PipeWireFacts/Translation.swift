import SessionPolicy
@_exported import PipeWirePorts

/// The translation layer: PipeWire's property sets in, the policy's typed facts and events
/// out. This is the one place that knows which PipeWire property means what (`media.class`,
/// `media.role`, `application.name`, `node.link-group`, `pipewire.access`, the
/// `audio.session.*` declaration, the device and ALSA/Bluetooth keys of a port). Every
/// string kept is cut to `maximumValueBytes`: a client may send properties of any size, the
/// facts stay small.
public enum PipeWireKey {
    public static let mediaClass = "media.class"
    public static let mediaRole = "media.role"
    public static let applicationName = "application.name"
    public static let processBinary = "application.process.binary"
    public static let linkGroup = "node.link-group"
    public static let formFactor = "device.form-factor"
    public static let access = "pipewire.access"
    public static let captureSink = "stream.capture.sink"
    public static let monitor = "stream.monitor"
    public static let processID = "application.process.id"
    public static let deviceID = "device.id"
}

public enum Translation {
    /// Kept values (names, roles, groups) are cut to this many bytes.
    public static let maximumValueBytes = 256

    /// `value` cut to at most `maximumValueBytes` bytes, at a character boundary.
    public static func cut(_ value: String) -> String {
        guard value.utf8.count > maximumValueBytes else { return value }
        var out = ""
        var bytes = 0
        for ch in value {
            let n = ch.utf8.count
            if bytes &+ n > maximumValueBytes { break }
            bytes &+= n
            out.append(ch)
        }
        return out
    }

    static func value(_ props: Properties, _ key: String) -> String? {
        props[key].map(cut)
    }

    /// A non-empty value, cut.
    static func nonEmpty(_ props: Properties, _ key: String) -> String? {
        guard let v = props[key], !v.isEmpty else { return nil }
        return cut(v)
    }

    static func applicationName(_ props: Properties) -> String? {
        value(props, PipeWireKey.applicationName) ?? value(props, PipeWireKey.processBinary)
    }

    /// PipeWire's boolean reading: "true" or "1".
    static func isTrue(_ props: Properties, _ key: String) -> Bool {
        props[key] == "true" || props[key] == "1"
    }

    /// Whether anything of a client is read from `key` of its properties: its declaration,
    /// switch requests and player reports (`audio.session.*`), its name, its process, and the
    /// access a switch request carries. Only these are worth turning into strings: a client
    /// may carry hundreds of other keys, some of them large, and rewrite them at will. The key
    /// is read as C has it, up to its NUL.
    public static func readsClientKey(_ key: UnsafePointer<CChar>) -> Bool {
        switch UInt8(bitPattern: key[0]) {
        case UInt8(ascii: "a"):
            return readsDeclarationOrProgramKey(key)
        case UInt8(ascii: "p"):
            return cString(key, is: "pipewire.access")
        default:
            return false
        }
    }

    /// The keys both a client's and a stream's facts are read from: the declaration and
    /// requests (`audio.session.*`), the program's name and its process.
    static func readsDeclarationOrProgramKey(_ key: UnsafePointer<CChar>) -> Bool {
        cString(key, startsWith: "audio.session.")
            || cString(key, is: "application.name")
            || cString(key, is: "application.process.binary")
            || cString(key, is: "application.process.id")
    }

    /// Whether anything of a stream is read from `key` of its properties (`StreamFacts`): its
    /// declaration (`audio.session.*`), its program's name and process, its role, its link
    /// group, and whether it records a sink's monitor. A stream carries some fifty keys the
    /// daemon and its library set (formats, loops, serials, latencies) and may carry any
    /// others; only these are turned into strings, on every stream added and every change of
    /// its properties. The key is read as C has it, up to its NUL.
    public static func readsStreamKey(_ key: UnsafePointer<CChar>) -> Bool {
        switch UInt8(bitPattern: key[0]) {
        case UInt8(ascii: "a"):
            return readsDeclarationOrProgramKey(key)
        case UInt8(ascii: "m"):
            return cString(key, is: "media.role")
        case UInt8(ascii: "n"):
            return cString(key, is: "node.link-group")
        case UInt8(ascii: "s"):
            return cString(key, is: "stream.capture.sink") || cString(key, is: "stream.monitor")
        default:
            return false
        }
    }

    /// Whether a client's own writing asks something with `key`: the global switches and the
    /// MPRIS bridge's reports (`audio.session.control.*`), and the access a request carries.
    public static func isRequestKey(_ key: UnsafePointer<CChar>) -> Bool {
        cString(key, startsWith: "audio.session.control.") || cString(key, is: "pipewire.access")
    }

    /// Whether the C string `s` starts with `prefix` (never read past `s`'s NUL: a shorter
    /// string differs at its NUL).
    static func cString(_ s: UnsafePointer<CChar>, startsWith prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { p in
            var i = 0
            while i < p.count {
                if UInt8(bitPattern: s[i]) != p[i] { return false }
                i &+= 1
            }
            return true
        }
    }

    /// Whether the C string `s` is `text`.
    static func cString(_ s: UnsafePointer<CChar>, is text: StaticString) -> Bool {
        cString(s, startsWith: text) && s[text.utf8CodeUnitCount] == 0
    }
}

/// What kind of graph object a node is, by its `media.class`: the module watches streams
/// and endpoints and nothing else.
public enum NodeClass: Sendable, Equatable {
    case stream(StreamDirection)
    case endpoint(EndpointKind)

    /// nil for a node the policy has nothing to do with (video, MIDI, a driver).
    public init?(mediaClass: String) {
        guard let c = mediaClass.withCString({ NodeClass(mediaClass: $0) }) else { return nil }
        self = c
    }

    /// The same, read from the node's C string where it lies (no string is made for each
    /// node the daemon announces).
    public init?(mediaClass s: UnsafePointer<CChar>) {
        if Translation.cString(s, is: "Stream/Output/Audio") {
            self = .stream(.output)
        } else if Translation.cString(s, is: "Stream/Input/Audio") {
            // A sink's monitor recorder too: the policy decides it is no session.
            self = .stream(.input)
        } else if Translation.cString(s, is: "Audio/Sink") || Translation.cString(s, is: "Audio/Duplex") {
            self = .endpoint(.sink)
        } else if Translation.cString(s, is: "Audio/Source") || Translation.cString(s, is: "Audio/Source/Virtual") {
            self = .endpoint(.source)
        } else {
            return nil
        }
    }
}

extension ClientFacts {
    /// A client's facts from its properties and the identity the module established when
    /// it connected (never read from the properties: a client could bring any).
    public init(pipeWire props: Properties, identity: ClientIdentity) {
        self.init(applicationName: Translation.applicationName(props), identity: identity,
                  declaration: DeclarationFacts(pipeWire: props), playerReport: PlayerReport(pipeWire: props),
                  processID: props[PipeWireKey.processID].flatMap { UInt32($0) })
    }
}

extension StreamFacts {
    public init(pipeWire props: Properties) {
        self.init(applicationName: Translation.applicationName(props),
                  role: Translation.value(props, PipeWireKey.mediaRole).map(MediaRole.init(rawValue:)),
                  linkGroup: Translation.nonEmpty(props, PipeWireKey.linkGroup).map(LinkGroup.init(rawValue:)),
                  declaration: DeclarationFacts(pipeWire: props),
                  recordsMonitor: Translation.isTrue(props, PipeWireKey.captureSink) || Translation.isTrue(props, PipeWireKey.monitor),
                  processID: props[PipeWireKey.processID].flatMap { UInt32($0) })
    }
}

extension EndpointFacts {
    /// An endpoint's facts from its node's properties merged with its device's. Sinks and
    /// sources declare nothing.
    public init(pipeWire props: Properties, kind: EndpointKind) {
        var port = Port.from(props, kind: kind)
        port.name = Translation.cut(port.name)
        port.uid = Translation.cut(port.uid)
        self.init(port: port, portTypeFixedByDevice: Port.deviceFixesPortType(props),
                  formFactor: Translation.value(props, PipeWireKey.formFactor).map(FormFactor.init(rawValue:)),
                  linkGroup: Translation.nonEmpty(props, PipeWireKey.linkGroup).map(LinkGroup.init(rawValue:)),
                  device: props[PipeWireKey.deviceID].flatMap { UInt32($0) }.map(DeviceID.init))
    }
}

extension RouteReading {
    /// One read of a device's routes for one of its endpoints: the active route's name,
    /// its info `port.type` (typed for a sink and for a source), its availability and the
    /// names of the routes known to be unavailable (at most `maximumUnavailable`).
    public init(name: String, portType: String, availability: Availability, unavailable: [String]) {
        var names = Set<String>()
        for n in unavailable.prefix(Self.maximumUnavailable) { names.insert(Translation.cut(n)) }
        self.init(name: Translation.cut(name),
                  sinkPortType: PortType(route: name, portType: portType, kind: .sink),
                  sourcePortType: PortType(route: name, portType: portType, kind: .source),
                  availability: availability, unavailable: names)
    }

    /// The most unavailable route names read from one reading (the module sends at most two
    /// per route it read, and reads at most 32 of each kind).
    public static let maximumUnavailable = 256
}

extension DeviceProfile {
    /// A device's active profile by its name (`SPA_PARAM_PROFILE_name`), cut; `off` is the
    /// profile without sinks or sources, on every device PipeWire makes, and a device that
    /// answers no active profile (empty name) has none either.
    public init(pipeWireName name: String) {
        self.init(name: Translation.cut(name), isOff: name == "off" || name.isEmpty)
    }
}

/// Events built from PipeWire property sets: what the module reports, translated.
extension Event {
    public static func clientAdded(_ c: ClientID, _ props: Properties, identity: ClientIdentity = ClientIdentity()) -> Event {
        .clientAdded(c, ClientFacts(pipeWire: props, identity: identity))
    }
    /// The identity is the one the policy has (a property change cannot change it).
    public static func clientChanged(_ c: ClientID, _ props: Properties) -> Event {
        .clientChanged(c, ClientFacts(pipeWire: props, identity: ClientIdentity()))
    }
    public static func streamAdded(_ n: NodeID, client: ClientID, direction: StreamDirection, _ props: Properties) -> Event {
        .streamAdded(n, client: client, direction: direction, StreamFacts(pipeWire: props))
    }
    public static func streamChanged(_ n: NodeID, _ props: Properties) -> Event {
        .streamChanged(n, StreamFacts(pipeWire: props))
    }
    public static func endpointAdded(_ n: NodeID, kind: EndpointKind, _ props: Properties) -> Event {
        .endpointAdded(n, kind: kind, EndpointFacts(pipeWire: props, kind: kind))
    }
    /// `kind` is the endpoint's kind (a port's type depends on it); a sink unless told.
    public static func endpointChanged(_ n: NodeID, kind: EndpointKind = .sink, _ props: Properties) -> Event {
        .endpointChanged(n, EndpointFacts(pipeWire: props, kind: kind))
    }
}

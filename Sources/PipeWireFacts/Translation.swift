import SessionPolicy

/// The translation layer: PipeWire's property sets in, the policy's typed facts out. This
/// is the one place that knows which PipeWire property means what (`media.role`,
/// `application.name`, `node.link-group`, the device and ALSA/Bluetooth keys of a port).
/// Every value kept is cut to `maximumValueBytes`: a client may send properties of any
/// size, the facts stay small.
public enum PipeWireKey {
    public static let mediaRole = "media.role"
    public static let applicationName = "application.name"
    public static let processBinary = "application.process.binary"
    public static let linkGroup = "node.link-group"
    public static let formFactor = "device.form-factor"
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

    /// The `audio.session.*` properties, as given (their size is judged by the module,
    /// which refuses an oversized declaration as a whole).
    public static func sessionKeys(_ props: Properties) -> Properties {
        props.filter { $0.key.hasPrefix(DeclarationKey.prefix) }
    }

    static func applicationName(_ props: Properties) -> String? {
        value(props, PipeWireKey.applicationName) ?? value(props, PipeWireKey.processBinary)
    }
}

extension ClientFacts {
    /// A client's facts from its properties. The identity is read from `IdentityKey`
    /// properties when present (tests, recorded graphs); the module replaces it with the
    /// one it established.
    public init(pipeWire props: Properties) {
        self.init(applicationName: Translation.applicationName(props), identity: ClientIdentity(props),
                  sessionKeys: Translation.sessionKeys(props))
    }
}

extension StreamFacts {
    public init(pipeWire props: Properties) {
        let group = Translation.value(props, PipeWireKey.linkGroup)
        self.init(applicationName: Translation.applicationName(props), role: Translation.value(props, PipeWireKey.mediaRole),
                  linkGroup: group?.isEmpty == true ? nil : group, sessionKeys: Translation.sessionKeys(props))
    }
}

extension EndpointFacts {
    /// An endpoint's facts from its node's properties merged with its device's, and the
    /// device's active route when the module read one.
    public init(pipeWire props: Properties, kind: EndpointKind, route: ActiveRoute? = nil) {
        var port = Port.from(props, kind: kind, route: route)
        port.name = Translation.cut(port.name)
        port.uid = Translation.cut(port.uid)
        let group = Translation.value(props, PipeWireKey.linkGroup)
        self.init(port: port, formFactor: Translation.value(props, PipeWireKey.formFactor)?.lowercased(),
                  linkGroup: group?.isEmpty == true ? nil : group)
    }
}

/// Events built from PipeWire property sets: what the module reports, translated.
extension Event {
    public static func clientAdded(_ c: ClientID, _ props: Properties) -> Event {
        .clientAdded(c, ClientFacts(pipeWire: props))
    }
    public static func clientChanged(_ c: ClientID, _ props: Properties) -> Event {
        .clientChanged(c, ClientFacts(pipeWire: props))
    }
    public static func streamAdded(_ n: NodeID, client: ClientID, direction: StreamDirection, _ props: Properties) -> Event {
        .streamAdded(n, client: client, direction: direction, StreamFacts(pipeWire: props))
    }
    public static func streamChanged(_ n: NodeID, _ props: Properties) -> Event {
        .streamChanged(n, StreamFacts(pipeWire: props))
    }
    public static func endpointAdded(_ n: NodeID, kind: EndpointKind, _ props: Properties, route: ActiveRoute? = nil) -> Event {
        .endpointAdded(n, kind: kind, EndpointFacts(pipeWire: props, kind: kind, route: route))
    }
    /// `kind` is the endpoint's kind (a port's type depends on it); a sink unless told.
    public static func endpointChanged(_ n: NodeID, kind: EndpointKind = .sink, _ props: Properties, route: ActiveRoute? = nil) -> Event {
        .endpointChanged(n, EndpointFacts(pipeWire: props, kind: kind, route: route))
    }
    public static func endpointPortRestored(
        _ n: NodeID, kind: EndpointKind = .sink, _ props: Properties, route: ActiveRoute? = nil
    ) -> Event {
        .endpointPortRestored(n, EndpointFacts(pipeWire: props, kind: kind, route: route))
    }
}

/// What the policy knows of the graph's objects: typed facts, never PipeWire's property
/// names or a property set. The translation layer (`PipeWireFacts`) reads them from
/// PipeWire's properties; the policy reads only these.

/// A client (one connection).
public struct ClientFacts: Sendable, Equatable {
    /// The program's name, for rules that name programs.
    public var applicationName: String?
    /// Who the client is, as the daemon established it when it connected (trusted when
    /// unknown: the policy driven directly, as in tests). Read from `clientAdded` only: a
    /// later property change cannot change who a client is.
    public var identity: ClientIdentity
    /// What its `audio.session.*` properties declare and ask.
    public var declaration: DeclarationFacts {
        get { _declaration.value }
        set { _declaration = OutOfLine(newValue) }
    }
    var _declaration: OutOfLine<DeclarationFacts>
    /// What the MPRIS bridge reports on this connection (docs/mpris.md), when it carries a
    /// report; only a trusted client's report counts (`PolicyStep+Players.swift`).
    public var playerReport: PlayerReport?
    /// The process the program says it runs as: it only groups a program's streams (R43).
    public var processID: UInt32?

    public init(
        applicationName: String? = nil, identity: ClientIdentity = ClientIdentity(),
        declaration: DeclarationFacts = DeclarationFacts(), playerReport: PlayerReport? = nil, processID: UInt32? = nil
    ) {
        self.applicationName = applicationName
        self.identity = identity
        self._declaration = OutOfLine(declaration)
        self.playerReport = playerReport
        self.processID = processID
    }
}

/// A stream node.
///
/// Its names and declaration are kept in one shared, immutable record: a stream's record in
/// the model is copied each time the policy reads or decides on it, and the copy then costs
/// one reference instead of one per name. The facts change only when the stream's
/// properties do.
public struct StreamFacts: Sendable, Equatable {
    struct Named: Sendable, Equatable {
        var applicationName: String?
        var role: MediaRole?
        var linkGroup: LinkGroup?
        var declaration: DeclarationFacts
    }
    private var named: OutOfLine<Named>

    /// The program's name (when its client has none).
    public var applicationName: String? {
        get { named.value.applicationName }
        set { named.change { $0.applicationName = newValue } }
    }
    /// What the program says its audio is for, when it declared nothing (legacy role, §1).
    public var role: MediaRole? {
        get { named.value.role }
        set { named.change { $0.role = newValue } }
    }
    /// The group of nodes that belong together (a loopback's sink and its stream).
    public var linkGroup: LinkGroup? {
        get { named.value.linkGroup }
        set { named.change { $0.linkGroup = newValue } }
    }
    /// What its own `audio.session.*` properties declare and ask (a wrapped program).
    public var declaration: DeclarationFacts {
        get { named.value.declaration }
        set { named.change { $0.declaration = newValue } }
    }
    /// A capture stream that records a sink's monitor (a level meter, `pw-record` of what a
    /// sink plays): observation, never a session (`PolicyStep+Streams.swift`).
    public var recordsMonitor: Bool
    /// The process the program says it runs as (a PulseAudio program's streams carry it):
    /// it only groups a program's streams (R43).
    public var processID: UInt32?

    public init(
        applicationName: String? = nil, role: MediaRole? = nil, linkGroup: LinkGroup? = nil,
        declaration: DeclarationFacts = DeclarationFacts(), recordsMonitor: Bool = false, processID: UInt32? = nil
    ) {
        self.named = OutOfLine(Named(applicationName: applicationName, role: role, linkGroup: linkGroup, declaration: declaration))
        self.recordsMonitor = recordsMonitor
        self.processID = processID
    }
}

/// A sink or source.
public struct EndpointFacts: Sendable, Equatable {
    /// Its port as its own properties describe it: name, uid and the type they give.
    public var port: Port
    /// The device fixes the port's type whatever route is active (a Bluetooth profile): a
    /// route read never changes it.
    public var portTypeFixedByDevice: Bool
    /// The device's form factor: some configurations count more of them as private
    /// outputs (R30).
    public var formFactor: FormFactor?
    /// The group of nodes that belong together (a loopback's sink and its stream).
    public var linkGroup: LinkGroup?
    /// The device it belongs to (`device.id`): a Bluetooth headset's sinks of one profile
    /// and of the next share it.
    public var device: DeviceID?

    public init(port: Port, portTypeFixedByDevice: Bool = false, formFactor: FormFactor? = nil, linkGroup: LinkGroup? = nil,
                device: DeviceID? = nil) {
        self.port = port
        self.portTypeFixedByDevice = portTypeFixedByDevice
        self.formFactor = formFactor
        self.linkGroup = linkGroup
        self.device = device
    }
}

/// A device's active profile (`SPA_PARAM_Profile`) as last read: a Bluetooth headset's
/// `a2dp-sink`, `headset-head-unit`, … or `off` (no sink and no source: the headset's
/// audio link is gone).
public struct DeviceProfile: Sendable, Equatable {
    public var name: String
    public var isOff: Bool
    public init(name: String, isOff: Bool) {
        self.name = name
        self.isOff = isOff
    }
}

/// A legacy stream's `media.role` (`Music`, `Phone`, `Notification`…): what the program
/// says its audio is for. The role table (`PolicyConfiguration.roles`) decides what it means.
public struct MediaRole: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
}

/// A `node.link-group`: nodes that belong together (a loopback's sink and its stream).
public struct LinkGroup: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
}

/// A device's form factor (`headphones`, `headset`, `internal`…), lowercased.
public struct FormFactor: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue.lowercased() }
    public init(stringLiteral value: String) { self.init(rawValue: value) }
}

/// One read of the routes of an endpoint's device (a card's ports): the route active on
/// the endpoint and the routes known to be unavailable. A fact, no decision: whether the
/// endpoint's port was lost, chosen by the user or is back is the policy's
/// (`PolicyStep+Ports.swift`).
public struct RouteReading: Sendable, Equatable {
    public enum Availability: Sendable, Equatable { case unknown, no, yes }

    /// The route's name (`analog-output-headphones`).
    public var name: String
    /// The port type the route names, for a sink and for a source (the same route type
    /// means headphones on a sink and a headset microphone on a source); nil when it says
    /// nothing the policy can use.
    public var sinkPortType: PortType?
    public var sourcePortType: PortType?
    /// Its availability, as the device says.
    public var availability: Availability
    /// The names of the device's routes known to be unavailable.
    public var unavailable: Set<String>

    public init(
        name: String, sinkPortType: PortType? = nil, sourcePortType: PortType? = nil,
        availability: Availability = .unknown, unavailable: Set<String> = []
    ) {
        self.name = name
        self.sinkPortType = sinkPortType
        self.sourcePortType = sourcePortType
        self.availability = availability
        self.unavailable = unavailable
    }

    public func portType(_ kind: EndpointKind) -> PortType? { kind == .sink ? sinkPortType : sourcePortType }
}

/// What the MPRIS bridge reports on its own connection (docs/mpris.md): the legacy
/// streams it governs with their player's bus name, and the streams whose player paused
/// itself after the policy paused them. Neither can make anything play.
public struct PlayerReport: Sendable, Equatable {
    public var governed: [NodeID: String]
    public var released: Set<NodeID>

    public init(governed: [NodeID: String] = [:], released: Set<NodeID> = []) {
        self.governed = governed
        self.released = released
    }
}

/// A value kept out of line: copying what holds it copies one reference (a stream's record
/// is copied on every decision; its declaration rarely changes).
struct OutOfLine<Value: Equatable & Sendable>: Equatable, Sendable {
    final class Storage: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    private var storage: Storage
    init(_ value: Value) { storage = Storage(value) }
    var value: Value { storage.value }

    /// A new record: the shared one is never written.
    mutating func change(_ body: (inout Value) -> Void) {
        var v = storage.value
        body(&v)
        self = OutOfLine(v)
    }

    static func == (a: OutOfLine, b: OutOfLine) -> Bool {
        a.storage === b.storage || a.storage.value == b.storage.value
    }
}

/// What the policy knows of the graph's objects: typed facts, never PipeWire's property
/// names. The translation layer (`PipeWireFacts`) reads them from PipeWire's property
/// sets; the policy reads only these.

/// A client (one connection).
public struct ClientFacts: Sendable, Equatable {
    /// The program's name, for rules that name programs.
    public var applicationName: String?
    /// Who the client is, as the daemon established it (trusted when unknown: the policy
    /// driven directly, as in tests).
    public var identity: ClientIdentity
    /// Its `audio.session.*` properties: the declaration and requests, in this project's
    /// own vocabulary (`DeclarationKey`).
    public var sessionKeys: Properties

    public init(applicationName: String? = nil, identity: ClientIdentity = ClientIdentity(), sessionKeys: Properties = [:]) {
        self.applicationName = applicationName
        self.identity = identity
        self.sessionKeys = sessionKeys
    }
}

/// A stream node.
public struct StreamFacts: Sendable, Equatable {
    /// The program's name (when its client has none).
    public var applicationName: String?
    /// What the program says its audio is for, when it declared nothing (legacy role, §1).
    public var role: String?
    /// The group of nodes that belong together (a loopback's sink and its stream).
    public var linkGroup: String?
    /// Its `audio.session.*` properties (`DeclarationKey`).
    public var sessionKeys: Properties

    public init(applicationName: String? = nil, role: String? = nil, linkGroup: String? = nil, sessionKeys: Properties = [:]) {
        self.applicationName = applicationName
        self.role = role
        self.linkGroup = linkGroup
        self.sessionKeys = sessionKeys
    }
}

/// A sink or source.
public struct EndpointFacts: Sendable, Equatable {
    /// Its port: name, uid and type.
    public var port: Port
    /// The device's form factor ("headphone", "headset", "speaker"…), lowercased: some
    /// configurations count more of them as private outputs (R30).
    public var formFactor: String?
    /// The group of nodes that belong together (a loopback's sink and its stream).
    public var linkGroup: String?

    public init(port: Port, formFactor: String? = nil, linkGroup: String? = nil) {
        self.port = port
        self.formFactor = formFactor
        self.linkGroup = linkGroup
    }
}

/// Identifiers of PipeWire graph objects, as distinct types: an id is never a bare `UInt32`.

/// A PipeWire client (one connection, `pw_impl_client`): the owner of a declared session.
public struct ClientID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var raw: UInt32
    public init(_ raw: UInt32) { self.raw = raw }
    public static func < (a: ClientID, b: ClientID) -> Bool { a.raw < b.raw }
    public var description: String { "client \(raw)" }
}

/// A PipeWire node (`pw_impl_node`): a stream, a sink or a source.
public struct NodeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var raw: UInt32
    public init(_ raw: UInt32) { self.raw = raw }
    public static func < (a: NodeID, b: NodeID) -> Bool { a.raw < b.raw }
    public var description: String { "node \(raw)" }
}

/// A PipeWire link (`pw_impl_link`) between an output node and an input node.
public struct LinkID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var raw: UInt32
    public init(_ raw: UInt32) { self.raw = raw }
    public static func < (a: LinkID, b: LinkID) -> Bool { a.raw < b.raw }
    public var description: String { "link \(raw)" }
}

/// The thing `AVAudioSession.sharedInstance()` is for one program.
///
/// A session is a client that declared (its client properties or one of its
/// streams' properties carry `audio.session.*`), or, for a legacy stream that
/// declares nothing, that stream alone (§1).
public enum SessionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    case client(ClientID)
    case stream(NodeID)

    /// Client sessions first, then legacy sessions, each by id (the order effects follow).
    public static func < (a: SessionID, b: SessionID) -> Bool { a.orderKey < b.orderKey }

    private var orderKey: UInt64 {
        switch self {
        case .client(let c): return UInt64(c.raw)
        case .stream(let n): return UInt64(n.raw) | (1 << 32)
        }
    }

    /// One 64-bit word per session (kind and id): every policy decision hashes sessions often.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(orderKey)
    }

    public var description: String {
        switch self {
        case .client(let c): return "session of \(c)"
        case .stream(let n): return "legacy session of \(n)"
        }
    }
}

/// The direction of a stream node: `output` plays (`Stream/Output/Audio`),
/// `input` captures (`Stream/Input/Audio`).
public enum StreamDirection: String, Sendable, Hashable, CaseIterable {
    case output, input
}

/// Identifiers of PipeWire graph objects, as distinct types: an id is never a bare `UInt32`.

/// A PipeWire client (one connection, `pw_impl_client`): the owner of a declared session.
public struct ClientID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var raw: UInt32
    public init(_ raw: UInt32) { self.raw = raw }
    public static func < (a: ClientID, b: ClientID) -> Bool { a.raw < b.raw }
    public func _rawHashValue(seed: Int) -> Int { IDHash.mix(UInt64(raw), seed: seed) }
    public var description: String { "client \(raw)" }
}

/// A PipeWire node (`pw_impl_node`): a stream, a sink or a source.
public struct NodeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var raw: UInt32
    public init(_ raw: UInt32) { self.raw = raw }
    public static func < (a: NodeID, b: NodeID) -> Bool { a.raw < b.raw }
    public func _rawHashValue(seed: Int) -> Int { IDHash.mix(UInt64(raw), seed: seed) }
    public var description: String { "node \(raw)" }
}

/// A PipeWire link (`pw_impl_link`) between an output node and an input node.
public struct LinkID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var raw: UInt32
    public init(_ raw: UInt32) { self.raw = raw }
    public static func < (a: LinkID, b: LinkID) -> Bool { a.raw < b.raw }
    public func _rawHashValue(seed: Int) -> Int { IDHash.mix(UInt64(raw), seed: seed) }
    public var description: String { "link \(raw)" }
}

/// A PipeWire device (`pw_impl_device`): a sound card or a Bluetooth headset, the owner
/// of sinks and sources (their `device.id`).
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var raw: UInt32
    public init(_ raw: UInt32) { self.raw = raw }
    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.raw < b.raw }
    public func _rawHashValue(seed: Int) -> Int { IDHash.mix(UInt64(raw), seed: seed) }
    public var description: String { "device \(raw)" }
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

    public func _rawHashValue(seed: Int) -> Int { IDHash.mix(orderKey, seed: seed) }

    public var description: String {
        switch self {
        case .client(let c): return "session of \(c)"
        case .stream(let n): return "legacy session of \(n)"
        }
    }
}

/// The hash the policy's tables use for ids: a 64-bit mix of the id and the table's seed
/// instead of the standard SipHash, which costs about a third of every decision (each one
/// looks sessions, streams and clients up dozens of times). SipHash protects tables whose
/// keys an adversary chooses; these keys are ids the daemon assigns, which no client picks.
/// Tables still differ in their seed, so an iteration order is no more stable than before.
enum IDHash {
    @inline(__always)
    static func mix(_ value: UInt64, seed: Int) -> Int {
        // The finaliser of MurmurHash3 (a bijection with full avalanche) of the id and seed.
        var x = value &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: seed)
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return Int(truncatingIfNeeded: x)
    }
}

/// The direction of a stream node: `output` plays (`Stream/Output/Audio`),
/// `input` captures (`Stream/Input/Audio`).
public enum StreamDirection: String, Sendable, Hashable, CaseIterable {
    case output, input
}

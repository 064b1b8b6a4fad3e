import CGIO

/// A D-Bus value as GDBus delivered it (a GVariant), read into Swift once: the agent's
/// code matches on these, never on text.
public indirect enum DBusValue: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    /// Any signed integer type (n, i, x).
    case int(Int64)
    /// Any unsigned integer type (y, q, u, t).
    case uint(UInt64)
    case double(Double)
    case array([DBusValue])
    /// A dictionary with string keys (`a{sv}`, `a{ss}` …).
    case dictionary([String: DBusValue])
    case tuple([DBusValue])
    case variant(DBusValue)
    /// A type the agent has no use for (handles, signatures, maybes, non-string keys), by its type string.
    case other(String)

    /// The value inside any number of variants.
    public var unwrapped: DBusValue {
        if case .variant(let v) = self { return v.unwrapped }
        return self
    }

    public var string: String? {
        switch unwrapped {
        case .string(let s), .objectPath(let s): return s
        default: return nil
        }
    }

    public var bool: Bool? {
        if case .bool(let b) = unwrapped { return b }
        return nil
    }

    public var uint32: UInt32? {
        switch unwrapped {
        case .uint(let u): return UInt32(exactly: u)
        case .int(let i): return UInt32(exactly: i)
        default: return nil
        }
    }

    public var elements: [DBusValue]? {
        switch unwrapped {
        case .array(let a), .tuple(let a): return a
        default: return nil
        }
    }

    public var dictionary: [String: DBusValue]? {
        if case .dictionary(let d) = unwrapped { return d }
        return nil
    }

    /// The `index`th member of a tuple or array; nil out of range.
    public subscript(_ index: Int) -> DBusValue? {
        guard let e = elements, e.indices.contains(index) else { return nil }
        return e[index]
    }

    /// The value of a GVariant written in GLib's text format (`({'a': <1>},)`), read as a
    /// value from the bus is; nil when the text is not one. For tests and diagnostics.
    public static func parse(_ text: String) -> DBusValue? {
        guard let v = g_variant_parse(nil, text, nil, nil, nil) else { return nil }
        g_variant_ref_sink(v)
        defer { g_variant_unref(v) }
        return read(v)
    }

    /// Reads a GVariant (borrowed: the caller keeps its reference). Containers nest at
    /// most `depth` deep (deeper content is `.other`) and are read to `maximumMembers`.
    static func read(_ v: OpaquePointer, depth: Int = 16) -> DBusValue {
        let type = String(cString: g_variant_get_type_string(v))
        guard depth > 0, let first = type.utf8.first else { return .other(type) }
        switch first {
        case UInt8(ascii: "s"): return .string(String(cString: g_variant_get_string(v, nil)))
        case UInt8(ascii: "o"): return .objectPath(String(cString: g_variant_get_string(v, nil)))
        case UInt8(ascii: "b"): return .bool(g_variant_get_boolean(v) != 0)
        case UInt8(ascii: "y"): return .uint(UInt64(g_variant_get_byte(v)))
        case UInt8(ascii: "q"): return .uint(UInt64(g_variant_get_uint16(v)))
        case UInt8(ascii: "u"): return .uint(UInt64(g_variant_get_uint32(v)))
        case UInt8(ascii: "t"): return .uint(UInt64(g_variant_get_uint64(v)))
        case UInt8(ascii: "n"): return .int(Int64(g_variant_get_int16(v)))
        case UInt8(ascii: "i"): return .int(Int64(g_variant_get_int32(v)))
        case UInt8(ascii: "x"): return .int(Int64(g_variant_get_int64(v)))
        case UInt8(ascii: "d"): return .double(g_variant_get_double(v))
        case UInt8(ascii: "v"):
            guard let inner = g_variant_get_variant(v) else { return .other(type) }
            defer { g_variant_unref(inner) }
            return .variant(read(inner, depth: depth - 1))
        case UInt8(ascii: "("):
            return .tuple(children(v, depth: depth))
        case UInt8(ascii: "a"):
            if type.hasPrefix("a{s") || type.hasPrefix("a{o") {
                var d: [String: DBusValue] = [:]
                for entry in children(v, depth: depth) {
                    if case .tuple(let kv) = entry, kv.count == 2, let k = kv[0].string { d[k] = kv[1] }
                }
                return .dictionary(d)
            }
            return .array(children(v, depth: depth))
        case UInt8(ascii: "{"):
            return .tuple(children(v, depth: depth))
        default:
            return .other(type)
        }
    }

    /// At most this many members of one container are read: what the agent reads is a few
    /// properties or sessions, and a player on the bus may send anything.
    static let maximumMembers = 1024

    private static func children(_ v: OpaquePointer, depth: Int) -> [DBusValue] {
        let n = min(g_variant_n_children(v), gsize(maximumMembers))
        var out: [DBusValue] = []
        out.reserveCapacity(Int(n))
        var i: gsize = 0
        while i < n {
            if let c = g_variant_get_child_value(v, i) {
                out.append(read(c, depth: depth - 1))
                g_variant_unref(c)
            }
            i += 1
        }
        return out
    }
}

/// An argument of a method call.
public enum DBusArgument: Sendable, Equatable {
    case string(String)
    case uint32(UInt32)
    case bool(Bool)

    /// A new floating GVariant.
    var variant: OpaquePointer? {
        switch self {
        case .string(let s): return g_variant_new_string(s)
        case .uint32(let u): return g_variant_new_uint32(u)
        case .bool(let b): return g_variant_new_boolean(b ? 1 : 0)
        }
    }

    /// The arguments as one floating tuple GVariant (what g_dbus_connection_call takes).
    static func tuple(_ args: [DBusArgument]) -> OpaquePointer? {
        var children = args.map(\.variant)
        guard !children.contains(where: { $0 == nil }) else { return nil }
        return children.withUnsafeMutableBufferPointer { buf in
            buf.baseAddress.map { base in
                base.withMemoryRebound(to: OpaquePointer?.self, capacity: buf.count) {
                    g_variant_new_tuple($0, gsize(buf.count))
                }
            } ?? g_variant_new_tuple(nil, 0)
        }
    }
}

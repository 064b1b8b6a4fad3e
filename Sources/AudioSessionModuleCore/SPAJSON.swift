// PipeWire's relaxed JSON (SPA-JSON) for module arguments: keys may be bare,
// `=` or `:` separate a key from its value, commas are optional, `#` starts a
// comment. Standard library only; never traps on any input.

/// A parsed SPA-JSON value. Bare words stay strings; numbers are read on demand.
public indirect enum SPAJSONValue: Equatable, Sendable {
    case string(String)
    case array([SPAJSONValue])
    case object([(String, SPAJSONValue)])

    public static func == (lhs: SPAJSONValue, rhs: SPAJSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var double: Double? { string.flatMap { Double($0) } }
    public var bool: Bool? {
        switch string { case "true": return true; case "false": return false; default: return nil }
    }
    /// A list of words: an array of strings, or one string of space/comma separated words.
    public var words: [String]? {
        switch self {
        case .array(let items):
            var out: [String] = []
            for item in items { guard let s = item.string else { return nil }; out.append(s) }
            return out
        case .string(let s):
            return s.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        case .object: return nil
        }
    }
    public subscript(key: String) -> SPAJSONValue? {
        if case .object(let members) = self { return members.last(where: { $0.0 == key })?.1 }
        return nil
    }
}

public struct SPAJSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
}

/// Parses one SPA-JSON value (a bare top level `a = b c = d` is read as an object).
public func parseSPAJSON(_ text: String) -> Result<SPAJSONValue, SPAJSONError> {
    var parser = SPAJSONParser(Array(text.utf8))
    return parser.parseDocument()
}

/// Parses a property value as pw_properties keeps it: an object or array as
/// SPA-JSON, anything else as one string (quotes removed).
public func parseSPAJSONValue(_ text: String) -> Result<SPAJSONValue, SPAJSONError> {
    var parser = SPAJSONParser(Array(text.utf8))
    parser.skipSpace()
    switch parser.current {
    case UInt8(ascii: "{"), UInt8(ascii: "["):
        return parser.parseDocument()
    case UInt8(ascii: "\""):
        return parser.parseString().map { .string($0) }
    default:
        var trimmed = Substring(text)
        while let c = trimmed.first, c == " " || c == "\t" || c == "\n" { trimmed.removeFirst() }
        while let c = trimmed.last, c == " " || c == "\t" || c == "\n" { trimmed.removeLast() }
        return .success(.string(String(trimmed)))
    }
}

struct SPAJSONParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    static let maxDepth = 64

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipSpace() {
        while let c = current {
            if c == UInt8(ascii: "#") {
                while let d = current, d != UInt8(ascii: "\n") { index += 1 }
            } else if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: ",") {
                index += 1
            } else {
                return
            }
        }
    }

    mutating func parseDocument() -> Result<SPAJSONValue, SPAJSONError> {
        skipSpace()
        if current == UInt8(ascii: "{") || current == UInt8(ascii: "[") || current == nil {
            if current == nil { return .success(.object([])) }
            let value = parseValue()
            skipSpace()
            if case .success = value, current != nil { return .failure(error("trailing text")) }
            return value
        }
        return parseMembers(until: nil).map { .object($0) }
    }

    func error(_ what: String) -> SPAJSONError {
        SPAJSONError(description: "\(what) at byte \(index)")
    }

    mutating func parseValue() -> Result<SPAJSONValue, SPAJSONError> {
        skipSpace()
        guard let c = current else { return .failure(error("value expected")) }
        switch c {
        case UInt8(ascii: "{"):
            guard depth < Self.maxDepth else { return .failure(error("nested too deeply")) }
            depth += 1; index += 1
            defer { depth -= 1 }
            return parseMembers(until: UInt8(ascii: "}")).map { .object($0) }
        case UInt8(ascii: "["):
            guard depth < Self.maxDepth else { return .failure(error("nested too deeply")) }
            depth += 1; index += 1
            defer { depth -= 1 }
            var items: [SPAJSONValue] = []
            while true {
                skipSpace()
                guard let d = current else { return .failure(error("] expected")) }
                if d == UInt8(ascii: "]") { index += 1; return .success(.array(items)) }
                switch parseValue() {
                case .success(let v): items.append(v)
                case .failure(let e): return .failure(e)
                }
            }
        case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: "="), UInt8(ascii: ":"):
            return .failure(error("unexpected '\(Character(Unicode.Scalar(c)))'"))
        default:
            return parseString().map { .string($0) }
        }
    }

    mutating func parseMembers(until close: UInt8?) -> Result<[(String, SPAJSONValue)], SPAJSONError> {
        var members: [(String, SPAJSONValue)] = []
        while true {
            skipSpace()
            guard let c = current else {
                if close == nil { return .success(members) }
                return .failure(error("} expected"))
            }
            if let close, c == close { index += 1; return .success(members) }
            let key: String
            switch parseString() {
            case .success(let k): key = k
            case .failure(let e): return .failure(e)
            }
            skipSpace()
            if current == UInt8(ascii: "=") || current == UInt8(ascii: ":") { index += 1 }
            switch parseValue() {
            case .success(let v): members.append((key, v))
            case .failure(let e): return .failure(e)
            }
        }
    }

    mutating func parseString() -> Result<String, SPAJSONError> {
        var out: [UInt8] = []
        if current == UInt8(ascii: "\"") {
            index += 1
            while let c = current {
                index += 1
                if c == UInt8(ascii: "\"") { return .success(String(decoding: out, as: UTF8.self)) }
                if c == UInt8(ascii: "\\"), let e = current {
                    index += 1
                    switch e {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"): appendUnicodeEscape(to: &out)
                    default: out.append(e)
                    }
                } else {
                    out.append(c)
                }
            }
            return .failure(error("unterminated string"))
        }
        while let c = current {
            if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == UInt8(ascii: ",")
                || c == UInt8(ascii: "=") || c == UInt8(ascii: ":") || c == UInt8(ascii: "{")
                || c == UInt8(ascii: "}") || c == UInt8(ascii: "[") || c == UInt8(ascii: "]")
                || c == UInt8(ascii: "\"") || c == UInt8(ascii: "#") {
                break
            }
            out.append(c)
            index += 1
        }
        if out.isEmpty { return .failure(error("word expected")) }
        return .success(String(decoding: out, as: UTF8.self))
    }

    /// `\uXXXX` (after the `u`), a surrogate pair as one scalar, like
    /// spa_json_parse_stringn; a bad or lone escape becomes U+FFFD.
    mutating func appendUnicodeEscape(to out: inout [UInt8]) {
        func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var v: UInt32 = 0
            for b in bytes[index..<index + 4] {
                guard let d = Character(Unicode.Scalar(b)).hexDigitValue else { return nil }
                v = v << 4 | UInt32(d)
            }
            index += 4
            return v
        }
        var scalar: Unicode.Scalar = "\u{FFFD}"
        if let high = hex4() {
            if (0xD800..<0xDC00).contains(high), index + 1 < bytes.count,
               bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                let mark = index
                index += 2
                if let low = hex4(), (0xDC00..<0xE000).contains(low),
                   let s = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)) {
                    scalar = s
                } else {
                    index = mark
                }
            } else if let s = Unicode.Scalar(high) {
                scalar = s
            }
        }
        out.append(contentsOf: Array(String(scalar).utf8))
    }
}

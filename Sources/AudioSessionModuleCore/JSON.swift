// A small JSON writer for the `audio-session` metadata values.
// Standard library only: this code runs inside the PipeWire daemon.

/// Writes JSON text straight into bytes: the metadata values the module publishes on every
/// change are written without a tree of values built first. Keys are the format's own
/// (static, nothing to escape).
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// A value or member was written in the current container: the next one needs a comma.
    private var separated = false

    init() { bytes.reserveCapacity(512) }

    private mutating func separate() {
        if separated { bytes.append(UInt8(ascii: ",")) }
        separated = true
    }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    /// A container starts: its first value needs no comma.
    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        separated = false
    }

    /// A container ends: it was a value of the one around it.
    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        separated = true
    }

    /// A member's key; its value follows.
    mutating func key(_ k: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        k.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        separated = false
    }

    mutating func string(_ s: String) {
        separate()
        Self.quote(s, into: &bytes)
    }

    mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    mutating func bool(_ b: Bool) {
        separate()
        bytes.append(contentsOf: (b ? "true" : "false").utf8)
    }

    mutating func int(_ v: Int64) {
        separate()
        if v < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(v.magnitude)
    }

    /// `magnitude`'s decimal digits.
    private mutating func appendDigits(_ magnitude: UInt64) {
        var m = magnitude
        // Room for the 20 digits of the largest magnitude, written last to first.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buf in
            var i = buf.count
            repeat {
                i -= 1
                buf[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: m % 10)
                m /= 10
            } while m > 0 && i > 0
            bytes.append(contentsOf: buf[i...])
        }
    }

    /// `thousandths` / 1000 as Swift's `Double` description writes it ("1.0", "0.5",
    /// "0.316"), from integers: no `String` is made.
    mutating func thousandths(_ thousandths: UInt32) {
        separate()
        let whole = thousandths / 1000
        var rest = thousandths % 1000
        appendDigits(UInt64(whole))
        bytes.append(UInt8(ascii: "."))
        if rest == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        // Three digits, the trailing zeros left out.
        var digits = 3
        while rest % 10 == 0 {
            rest /= 10
            digits -= 1
        }
        var divisor: UInt32 = 1
        for _ in 1..<digits { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: (rest / divisor) % 10))
            divisor /= 10
        }
    }

    /// The text with a NUL after it, as C reads a string (a JSON text has no NUL of its
    /// own): the writer's bytes are handed over, not copied.
    consuming func cString() -> [UInt8] {
        bytes.append(0)
        return bytes
    }

    mutating func double(_ d: Double) {
        separate()
        // JSON has no NaN or infinity.
        if d.isFinite { bytes.append(contentsOf: String(d).utf8) } else { bytes.append(contentsOf: "null".utf8) }
    }

    /// `s` as a JSON string: quotes, backslashes and control characters escaped, every
    /// other byte of its UTF-8 copied as it is.
    static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (names, categories, ports) need no escape: copied in one piece.
        var text = s
        let copied = text.withUTF8 { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            out.append(contentsOf: utf8)
            return true
        }
        if copied {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "\n"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0f)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

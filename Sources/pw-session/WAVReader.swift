import Foundation

/// A minimal RIFF/WAVE reader for `pw-session play`: PCM 8/16/24/32-bit and
/// 32/64-bit float, as interleaved Float samples.
struct WAVReader {
    var rate: Int
    var channels: Int
    var samples: [Float]

    enum Failure: Error, CustomStringConvertible {
        case notWAV(String), unsupported(String)
        var description: String {
            switch self {
            case .notWAV(let s): return "not a WAV file: \(s)"
            case .unsupported(let s): return "unsupported WAV: \(s)"
            }
        }
    }

    init(path: String) throws {
        let d = try Data(contentsOf: URL(fileURLWithPath: path))
        let b = [UInt8](d)
        func u16(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        guard b.count >= 12, b[0..<4] == [0x52, 0x49, 0x46, 0x46], b[8..<12] == [0x57, 0x41, 0x56, 0x45] else {
            throw Failure.notWAV(path)
        }
        var off = 12
        var fmt: (tag: Int, ch: Int, rate: Int, bits: Int)?
        var data: Range<Int>?
        while off + 8 <= b.count {
            let id = String(decoding: b[off..<off + 4], as: UTF8.self)
            let size = u32(off + 4)
            let body = off + 8
            let end = min(body + size, b.count)
            if id == "fmt ", size >= 16, body + 16 <= b.count {
                var tag = u16(body)
                if tag == 0xFFFE, size >= 26 { tag = u16(body + 24) }
                fmt = (tag, u16(body + 2), u32(body + 4), u16(body + 14))
            } else if id == "data" {
                data = body..<end
            }
            off = body + size + (size & 1)
        }
        guard let f = fmt, let r = data, f.ch > 0 else { throw Failure.notWAV("no fmt or data chunk in \(path)") }
        rate = f.rate
        channels = f.ch
        let bytes = f.bits / 8
        guard bytes > 0 else { throw Failure.unsupported("\(f.bits) bits") }
        var out: [Float] = []
        out.reserveCapacity(r.count / bytes)
        var i = r.lowerBound
        while i + bytes <= r.upperBound {
            switch (f.tag, f.bits) {
            case (1, 8): out.append((Float(b[i]) - 128) / 128)
            case (1, 16): out.append(Float(Int16(bitPattern: UInt16(u16(i)))) / 32768)
            case (1, 24):
                let v = Int32(bitPattern: UInt32(b[i]) << 8 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 24) >> 8
                out.append(Float(v) / 8_388_608)
            case (1, 32): out.append(Float(Int32(bitPattern: UInt32(u32(i)))) / 2_147_483_648)
            case (3, 32): out.append(Float(bitPattern: UInt32(u32(i))))
            case (3, 64):
                let lo = UInt64(u32(i)), hi = UInt64(u32(i + 4))
                out.append(Float(Double(bitPattern: lo | hi << 32)))
            default: throw Failure.unsupported("format \(f.tag), \(f.bits) bits")
            }
            i += bytes
        }
        samples = out
    }
}

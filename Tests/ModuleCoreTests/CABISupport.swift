import AudioSessionCoreABI
import enum AudioSessionModuleCore.LogLevel
import Foundation
import Testing

/// A full table of C callbacks that capture nothing and record into the
/// `RecordingEffectSink` that `data` points to, as the module passes its `struct impl`.
let recordingTable = RecordingEffectSink.immediateTable

extension RecordingEffectSink {
    /// A core made through the C entry point with default arguments, its effects recorded here.
    func newCore() throws -> OpaquePointer {
        var table = recordingTable
        let data = Unmanaged.passUnretained(self).toOpaque()
        let core = withUnsafePointer(to: &table) { AudioSessionCoreABI.as_core_new(nil, $0, data, nil, 0) }
        return try #require(core)
    }
}

/// C strings that live as long as the builder: keys and values as raw bytes (NULL allowed).
final class CProps {
    private var buffers: [UnsafeMutablePointer<CChar>] = []
    private(set) var items: [as_prop] = []

    init(_ pairs: [(key: [UInt8]?, value: [UInt8]?)]) {
        for (k, v) in pairs { items.append(as_prop(key: cString(k), value: cString(v))) }
    }

    convenience init(_ pairs: KeyValuePairs<String, String>) {
        self.init(pairs.map { (Array($0.key.utf8), Array($0.value.utf8)) })
    }

    private func cString(_ bytes: [UInt8]?) -> UnsafePointer<CChar>? {
        guard let bytes else { return nil }
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (i, b) in bytes.enumerated() { p[i] = CChar(bitPattern: b) }
        p[bytes.count] = 0
        buffers.append(p)
        return UnsafePointer(p)
    }

    /// Calls `body` with a `struct as_props` over the items (n_items may be overridden).
    func with<R>(nItems: UInt32? = nil, _ body: (UnsafePointer<as_props>) -> R) -> R {
        items.withUnsafeBufferPointer { buf in
            var props = as_props(items: buf.baseAddress, n_items: nItems ?? UInt32(buf.count))
            return withUnsafePointer(to: &props) { body($0) }
        }
    }

    deinit { buffers.forEach { $0.deallocate() } }
}

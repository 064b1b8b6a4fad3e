import AudioSessionCoreABI
import enum AudioSessionModuleCore.LogLevel
import Foundation

/// Effects recorded by the @convention(c) callbacks; reached through the `data`
/// pointer given to `as_core_new`, as the module passes its `struct impl`.
final class CEffectRecorder {
    var calls: [EffectCall] = []
}

private func recorder(_ data: UnsafeMutableRawPointer?) -> CEffectRecorder? {
    guard let data else { return nil }
    return Unmanaged<CEffectRecorder>.fromOpaque(data).takeUnretainedValue()
}

/// A full table of C callbacks that capture nothing and record into `data`.
let recordingTable = as_core_effects(
    version: UInt32(AS_CORE_EFFECTS_VERSION),
    pause: { data, node in recorder(data)?.calls.append(.pause(node)) },
    resume: { data, node in recorder(data)?.calls.append(.resume(node)) },
    duck: { data, node, gain, ramp in recorder(data)?.calls.append(.duck(node, gain: gain, rampMilliseconds: ramp)) },
    silence: { data, node, on in recorder(data)?.calls.append(.silence(node, on)) },
    publish: { data, subject, key, type, value in
        recorder(data)?.calls.append(.publish(
            subject: subject, key: key.map { String(cString: $0) } ?? "<NULL>",
            type: type.map { String(cString: $0) } ?? "<NULL>", value: value.map { String(cString: $0) }))
    },
    log: { data, level, message in
        let l: LogLevel
        switch level {
        case AS_LOG_ERROR: l = .error
        case AS_LOG_WARN: l = .warn
        case AS_LOG_INFO: l = .info
        default: l = .debug
        }
        recorder(data)?.calls.append(.log(l, message.map { String(cString: $0) } ?? "<NULL>"))
    },
    schedule_flush: nil,
    schedule_timer: nil)

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

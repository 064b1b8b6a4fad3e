import AudioSessionCoreABI
import AudioSessionModuleCore
import Foundation
import SessionPolicy
import PipeWireFacts
import Testing

/// One call the core made on its effect table, in the order it made them.
enum EffectCall: Equatable, CustomStringConvertible {
    case pause(UInt32)
    case resume(UInt32)
    case duck(UInt32, gain: Float, rampMilliseconds: UInt32)
    case fade(UInt32, gain: Float, milliseconds: UInt32)
    case silence(UInt32, Bool)
    case listen(UInt32, Bool)
    case publish(subject: UInt32, key: String, type: String, value: String?)
    case log(LogLevel, String)

    var description: String {
        switch self {
        case .pause(let n): return "pause(\(n))"
        case .resume(let n): return "resume(\(n))"
        case .duck(let n, let g, let r): return "duck(\(n), \(g), \(r) ms)"
        case .fade(let n, let g, let ms): return "fade(\(n), \(g), \(ms) ms)"
        case .silence(let n, let on): return "silence(\(n), \(on))"
        case .listen(let n, let on): return "listen(\(n), \(on))"
        case .publish(let s, let k, let t, let v): return "publish(\(s), \(k), \(t), \(v ?? "nil"))"
        case .log(let l, let m): return "log(\(l), \(m))"
        }
    }
}

/// A recording fake for the module's effect table (`struct as_core_effects`): its C
/// callbacks remember every call, as the module's would carry it out.
class RecordingEffectSink {
    var calls: [EffectCall] = []
    /// Flushes asked for with `schedule_flush` (a deferring sink only).
    var flushRequests = 0
    /// Whether the table has `schedule_flush`, as the module's does: property changes wait.
    var defers: Bool { false }
    /// Whether the table has `schedule_timer`, as the module's does; the timers pending, in
    /// the order they were asked for (a token asked for again is moved, as the module does).
    var timers: Bool { false }
    var timerRequests: [(token: UInt64, milliseconds: UInt32)] = []

    func schedule(_ token: UInt64, _ milliseconds: UInt32) {
        timerRequests.removeAll { $0.token == token }
        timerRequests.append((token, milliseconds))
    }

    /// The calls since the last `take()`, and forget them.
    func take() -> [EffectCall] {
        defer { calls = [] }
        return calls
    }

    /// The table, its callbacks recording into the sink `data` points to.
    var table: as_core_effects {
        var t = defers ? Self.deferringTable : Self.immediateTable
        if timers { t.schedule_timer = { data, token, ms in sink(data).schedule(token, ms) } }
        return t
    }

    static let immediateTable = as_core_effects(
        version: UInt32(AS_CORE_EFFECTS_VERSION),
        pause: { data, node in sink(data).calls.append(.pause(node)) },
        resume: { data, node in sink(data).calls.append(.resume(node)) },
        duck: { data, node, gain, ramp in sink(data).calls.append(.duck(node, gain: gain, rampMilliseconds: ramp)) },
        silence: { data, node, on in sink(data).calls.append(.silence(node, on)) },
        publish: { data, subject, key, type, value in
            sink(data).calls.append(.publish(
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
            sink(data).calls.append(.log(l, message.map { String(cString: $0) } ?? "<NULL>"))
        },
        schedule_flush: nil,
        schedule_timer: nil,
        fade: { data, node, gain, ms in sink(data).calls.append(.fade(node, gain: gain, milliseconds: ms)) },
        listen: { data, node, on in sink(data).calls.append(.listen(node, on)) })

    static let deferringTable: as_core_effects = {
        var t = immediateTable
        t.schedule_flush = { data in sink(data).flushRequests += 1 }
        return t
    }()
}

/// The sink a table's `data` points to.
private func sink(_ data: UnsafeMutableRawPointer?) -> RecordingEffectSink {
    Unmanaged<RecordingEffectSink>.fromOpaque(data!).takeUnretainedValue()
}

extension ModuleCore {
    /// A core whose effects `sink` records (the core keeps it alive).
    convenience init(configuration: PolicyConfiguration, effects sink: RecordingEffectSink,
                     clock: @escaping () -> UInt64 = ModuleCore.now) {
        self.init(configuration: configuration, effects: sink.table, data: Unmanaged.passUnretained(sink).toOpaque(), owner: sink,
                  clock: clock)
    }
}

/// A metadata write, with its JSON value parsed back by Foundation.
struct MetadataWrite {
    var subject: UInt32
    var key: String
    var type: String
    /// nil: the key was removed.
    var value: [String: Any]?
}

extension Array where Element == EffectCall {
    /// pause/resume/duck/silence only, in order.
    var streamEffects: [EffectCall] {
        filter {
            switch $0 {
            case .publish, .log: return false
            default: return true
            }
        }
    }

    var pausedNodes: [UInt32] { compactMap { if case .pause(let n) = $0 { return n } else { return nil } } }
    var resumedNodes: [UInt32] { compactMap { if case .resume(let n) = $0 { return n } else { return nil } } }

    /// Every metadata write, each value parsed with JSONSerialization (a value that
    /// is not a JSON object is recorded as an issue).
    var metadataWrites: [MetadataWrite] {
        compactMap {
            guard case .publish(let subject, let key, let type, let value) = $0 else { return nil }
            guard let value else { return MetadataWrite(subject: subject, key: key, type: type, value: nil) }
            let object = (try? JSONSerialization.jsonObject(with: Data(value.utf8))) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(value)")
            return MetadataWrite(subject: subject, key: key, type: type, value: object ?? [:])
        }
    }

    /// The values written to `audio-session.event`.
    var events: [[String: Any]] {
        metadataWrites.filter { $0.key == "audio-session.event" }.compactMap(\.value)
    }

    var logs: [(LogLevel, String)] {
        compactMap { if case .log(let l, let m) = $0 { return (l, m) } else { return nil } }
    }
}

extension Dictionary where Key == String, Value == Any {
    /// `{"kind": k, "id": n}` of an event's or a session's `session` member.
    var sessionRef: (kind: String, id: Int)? {
        guard let s = self["session"] as? [String: Any], let kind = s["kind"] as? String,
              let id = s.int("id") else { return nil }
        return (kind, id)
    }
    func string(_ key: String) -> String? { self[key] as? String }
    func bool(_ key: String) -> Bool? {
        if let b = self[key] as? Bool { return b }
        return nil
    }
    func int(_ key: String) -> Int? {
        if let i = self[key] as? Int { return i }
        if let n = self[key] as? NSNumber { return n.intValue }
        return nil
    }
}

/// A recording sink that, like the module, asks for a flush on its next loop turn.
final class DeferringEffectSink: RecordingEffectSink {
    override var defers: Bool { true }
    var recording: RecordingEffectSink { self }
}

extension String {
    /// The text of a C buffer up to its first NUL (all of it when there is none).
    init(terminated chars: [CChar]) {
        self.init(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

import AudioSessionModuleCore
import Foundation
import SessionPolicy
import PipeWireFacts
import Testing

/// One call the core made on its `EffectSink`, in the order it made them.
enum EffectCall: Equatable, CustomStringConvertible {
    case pause(UInt32)
    case resume(UInt32)
    case duck(UInt32, gain: Float, rampMilliseconds: UInt32)
    case silence(UInt32, Bool)
    case publish(subject: UInt32, key: String, type: String, value: String?)
    case log(LogLevel, String)

    var description: String {
        switch self {
        case .pause(let n): return "pause(\(n))"
        case .resume(let n): return "resume(\(n))"
        case .duck(let n, let g, let r): return "duck(\(n), \(g), \(r) ms)"
        case .silence(let n, let on): return "silence(\(n), \(on))"
        case .publish(let s, let k, let t, let v): return "publish(\(s), \(k), \(t), \(v ?? "nil"))"
        case .log(let l, let m): return "log(\(l), \(m))"
        }
    }
}

/// A recording fake for the module's effect table: remembers every call.
final class RecordingEffectSink: EffectSink {
    var calls: [EffectCall] = []

    func pause(_ node: UInt32) { calls.append(.pause(node)) }
    func resume(_ node: UInt32) { calls.append(.resume(node)) }
    func duck(_ node: UInt32, _ gain: Float, _ rampMilliseconds: UInt32) {
        calls.append(.duck(node, gain: gain, rampMilliseconds: rampMilliseconds))
    }
    func silence(_ node: UInt32, _ on: Bool) { calls.append(.silence(node, on)) }
    func publish(_ subject: UInt32, _ key: String, _ type: String, _ value: String?) {
        calls.append(.publish(subject: subject, key: key, type: type, value: value))
    }
    func log(_ level: LogLevel, _ message: String) { calls.append(.log(level, message)) }

    /// The calls since the last `take()`, and forget them.
    func take() -> [EffectCall] {
        defer { calls = [] }
        return calls
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
final class DeferringEffectSink: EffectSink {
    let recording = RecordingEffectSink()
    var flushRequests = 0

    func pause(_ node: UInt32) { recording.pause(node) }
    func resume(_ node: UInt32) { recording.resume(node) }
    func duck(_ node: UInt32, _ gain: Float, _ rampMilliseconds: UInt32) { recording.duck(node, gain, rampMilliseconds) }
    func silence(_ node: UInt32, _ on: Bool) { recording.silence(node, on) }
    func publish(_ subject: UInt32, _ key: String, _ type: String, _ value: String?) {
        recording.publish(subject, key, type, value)
    }
    func log(_ level: LogLevel, _ message: String) { recording.log(level, message) }
    var defersPropertyChanges: Bool { true }
    func scheduleFlush() { flushRequests += 1 }
}

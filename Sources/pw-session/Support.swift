import AudioSession
import ArgumentParser
import Dispatch
import Foundation

/// Runs async work from a synchronous `run()` (the root command is synchronous).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try box.get()
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<T, any Error>?
    func set(_ v: Result<T, any Error>) { lock.lock(); value = v; lock.unlock() }
    func get() throws -> T {
        lock.lock(); defer { lock.unlock() }
        guard let value else { throw ExitCode(1) }
        return try value.get()
    }
}

/// One line on stdout, flushed (monitors and players are read by programs line by line).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func complain(_ line: String) {
    FileHandle.standardError.write(Data(("pw-session: " + line + "\n").utf8))
}

/// Compact JSON of an Encodable value, keys sorted.
func jsonLine<T: Encodable>(_ value: T) -> String {
    let e = JSONEncoder()
    e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? e.encode(value)).flatMap { String(data: $0, encoding: .utf8) } ?? "null"
}

/// A connection that only observes the policy; exits 1 when it is not reachable.
func observePolicy(timeout: Double) throws -> AudioSession {
    let session = AudioSession(configuration: .init(applicationName: "pw-session", activationTimeout: .seconds(timeout), declares: false))
    let ok = try blocking { await session.waitForPolicy() }
    guard ok else {
        complain("no audio-session policy reachable (is PipeWire running with libpipewire-module-audio-session?)")
        throw ExitCode(1)
    }
    return session
}

/// The options every declaring verb shares.
struct DeclarationOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("ambient, soloAmbient, playback, record, playAndRecord, multiRoute.", valueName: "category"))
    var category: String?

    @Option(name: .long, help: ArgumentHelp("default, voiceChat, gameChat, videoRecording, measurement, moviePlayback, videoChat, spokenAudio, voicePrompt.", valueName: "mode"))
    var mode: String?

    @Option(name: .long, help: ArgumentHelp("Comma list: mixWithOthers, duckOthers, interruptSpokenAudioAndMixWithOthers, allowBluetoothHFP, allowBluetoothA2DP, allowAirPlay, defaultToSpeaker, overrideMutedMicrophoneInterruption.", valueName: "a,b"))
    var options: String?

    @Flag(name: .customLong("prefers-no-interruptions-from-system-alerts"), help: "Alerts do not interrupt or duck this session (R17).")
    var prefersNoInterruptionsFromSystemAlerts = false

    @Flag(name: .customLong("prefers-interruption-on-route-disconnect"), help: "Also get interruption began (routeDisconnected) when the private output is lost (R31).")
    var prefersInterruptionOnRouteDisconnect = false

    /// The declaration as properties (only what was given).
    var properties: [String: String] {
        var p: [String: String] = [:]
        if let category { p[DeclarationKey.category] = category }
        if let mode { p[DeclarationKey.mode] = mode }
        if let options { p[DeclarationKey.options] = options }
        if prefersNoInterruptionsFromSystemAlerts { p[DeclarationKey.prefersNoInterruptionsFromSystemAlerts] = "true" }
        if prefersInterruptionOnRouteDisconnect { p[DeclarationKey.prefersInterruptionOnRouteDisconnect] = "true" }
        return p
    }

    /// Parses and validates (§1, 3, 4); a refusal exits 2 with the rule's sentence.
    func declaration(defaultCategory: Category? = nil) throws -> Declaration? {
        var props = properties
        if props[DeclarationKey.category] == nil, let c = defaultCategory { props[DeclarationKey.category] = c.rawValue }
        switch Declaration.parse(props) {
        case .success(let d): return d
        case .failure(let e): throw Refusal(error: e)
        }
    }
}

/// A refused declaration: exit status 2 with the error code and the rule's sentence.
struct Refusal: Error, CustomStringConvertible {
    let error: SessionError
    var description: String { "\(error.code.rawValue): \(error.message)" }
}

extension PWSession {
    /// Maps errors thrown by verbs: refusals exit 2, session errors 1.
    static func report(_ error: any Error) -> Int32? {
        switch error {
        case let r as Refusal:
            complain(r.description)
            return 2
        case let e as SessionError:
            complain("\(e.code.rawValue): \(e.message)")
            return 1
        default:
            return nil
        }
    }
}

func describe(_ r: Route) -> String {
    let outs = r.outputs.map { "\($0.name) [\($0.type.rawValue)]" }.joined(separator: ", ")
    let ins = r.inputs.map { "\($0.name) [\($0.type.rawValue)]" }.joined(separator: ", ")
    var parts: [String] = []
    parts.append("out: " + (outs.isEmpty ? "-" : outs))
    if !ins.isEmpty { parts.append("in: " + ins) }
    return parts.joined(separator: "; ")
}

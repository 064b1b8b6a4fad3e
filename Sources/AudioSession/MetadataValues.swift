import FoundationEssentials
import AudioSessionVocabulary

/// The JSON documents the module publishes in the `audio-session` metadata
/// (`AudioSessionModuleCore.MetadataFormat`, docs/metadata.md), decoded.
/// Read by the library and by `pw-session status|monitor`.
public enum PolicyMetadata {
    public static let name = "audio-session"
    public static let eventKey = "audio-session.event"
    public static let globalKey = "audio-session.global"
    public static let sessionKey = "audio-session.session"
    /// Subject = a legacy stream's node id: the MPRIS player the bridge governs it through.
    public static let mprisKey = "audio-session.mpris"

    static let decoder = JSONDecoder()

    public static func decode<T: Decodable>(_ type: T.Type, from value: String) -> T? {
        try? decoder.decode(T.self, from: Data(value.utf8))
    }
}

/// `{kind: client|stream, id}`: which session a document is about.
public struct SessionRef: Codable, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Codable, Sendable { case client, stream }
    public var kind: Kind
    public var id: UInt32
    public init(kind: Kind, id: UInt32) { self.kind = kind; self.id = id }
    public var description: String { "\(kind.rawValue) \(id)" }
}

/// A port as published: `{name, uid, type}`.
public struct PortDescription: Codable, Sendable, Hashable {
    public var name: String
    public var uid: String
    public var type: String
    public var port: SessionPort { Port(name: name, uid: uid, type: PortType(rawValue: type) ?? .virtual) }
    public init(_ p: SessionPort) { name = p.name; uid = p.uid; type = p.type.rawValue }
}

/// A route as published: `{inputs, outputs}`.
public struct RouteDescription: Codable, Sendable, Hashable {
    public var inputs: [PortDescription]
    public var outputs: [PortDescription]
    public var route: Route { Route(inputs: inputs.map(\.port), outputs: outputs.map(\.port)) }
    public init(_ r: Route) { inputs = r.inputs.map(PortDescription.init); outputs = r.outputs.map(PortDescription.init) }
}

/// `audio-session.session` (subject = client id or stream node id).
public struct SessionState: Codable, Sendable, Equatable {
    public var session: SessionRef
    public var application: String?
    public var legacy: Bool
    public var category: String
    public var mode: String
    public var options: [String]
    public var priority: String?
    public var active: Bool
    public var playing: Bool
    public var interrupted: Bool
    public var interruptionReason: String?
    public var duckGain: Double
    public var silenced: Bool
    public var streams: [UInt32]
    public var route: RouteDescription
    public var prefersNoInterruptionsFromSystemAlerts: Bool?
    public var prefersInterruptionOnRouteDisconnect: Bool?
    public var secondaryAudioShouldBeSilencedHint: Bool?

    /// Ducked: the policy's gain on this session is below 1.
    public var ducked: Bool { duckGain < 0.999 }
}

/// `audio-session.global` (subject 0).
public struct GlobalState: Codable, Sendable, Equatable {
    public var currentRoute: RouteDescription
    public var silentMode: Bool
    public var screenLocked: Bool
    public var isOtherAudioPlaying: Bool
    public var secondaryAudioShouldBeSilencedHint: Bool
    public var playingSessions: Int
    public var primaryAudioSessions: Int
}

/// One `audio-session.event` document (subject 0).
public struct PolicyEvent: Sendable, Equatable {
    public var sequence: Int64
    public var session: SessionRef
    public var notification: PolicyNotification
    /// The document as published (for `monitor --json`).
    public var json: String

    public static func decode(_ value: String) -> PolicyEvent? {
        guard let raw = PolicyMetadata.decode(RawEvent.self, from: value) else { return nil }
        let n: PolicyNotification
        switch raw.type {
        case "interruption":
            if raw.phase == "began" {
                n = .interruptionBegan(reason: InterruptionReason(rawValue: raw.reason ?? "default") ?? .default)
            } else {
                n = .interruptionEnded(shouldResume: raw.shouldResume ?? false)
            }
        case "routeChange":
            n = .routeChange(reason: RouteChangeReason(rawValue: raw.reason ?? "unknown") ?? .unknown,
                             previous: raw.previousRoute?.route ?? .empty, current: raw.currentRoute?.route ?? .empty)
        case "silenceSecondaryAudioHint":
            n = .silenceSecondaryAudioHint(begin: raw.phase == "begin")
        case "mediaServicesWereLost": n = .mediaServicesWereLost
        case "mediaServicesWereReset": n = .mediaServicesWereReset
        case "activation":
            if raw.ok == true {
                n = .activationResult(.success(raw.warning.flatMap(ActivationWarning.init(rawValue:))))
            } else {
                n = .activationResult(.failure(raw.error?.sessionError ?? SessionError(code: .badParam, message: "activation refused")))
            }
        case "declarationRefused":
            n = .declarationRefused(raw.error?.sessionError ?? SessionError(code: .badParam, message: "declaration refused"))
        default:
            return nil
        }
        return PolicyEvent(sequence: raw.seq, session: raw.session, notification: n, json: value)
    }

    private struct RawError: Decodable {
        var code: String
        var message: String
        var sessionError: SessionError {
            SessionError(code: SessionErrorCode(rawValue: code) ?? .badParam, message: message)
        }
    }

    private struct RawEvent: Decodable {
        var seq: Int64
        var session: SessionRef
        var type: String
        var phase: String?
        var reason: String?
        var shouldResume: Bool?
        var previousRoute: RouteDescription?
        var currentRoute: RouteDescription?
        var ok: Bool?
        var warning: String?
        var error: RawError?
    }
}

/// `audio-session.mpris` (docs/metadata.md): the MPRIS player a legacy stream is governed through.
public struct MPRISGovernance: Codable, Sendable, Equatable {
    /// The player's bus name, e.g. `org.mpris.MediaPlayer2.mpv`.
    public var player: String
}

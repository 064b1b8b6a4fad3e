import SessionPolicy
import PipeWireFacts

/// The public format of the `audio-session` metadata (documented in
/// docs/metadata.md): keys, subjects and JSON documents. Readers:
/// the AudioSession library and `pw-session status|monitor`.
public enum MetadataFormat {
    /// Subject 0: every notification, in order, one value per write, with a sequence number.
    public static let eventKey = "audio-session.event"
    /// Subject 0: the global state.
    public static let globalKey = "audio-session.global"
    /// Subject = the session's client id (declared) or stream node id (legacy): its state.
    public static let sessionKey = "audio-session.session"
    public static let jsonType = "Spa:String:JSON"

    public static func subject(of session: SessionID) -> UInt32 {
        switch session {
        case .client(let c): return c.raw
        case .stream(let n): return n.raw
        }
    }

    static func sessionRef(_ session: SessionID) -> JSON {
        switch session {
        case .client(let c): return .object([("kind", .string("client")), ("id", .int(Int64(c.raw)))])
        case .stream(let n): return .object([("kind", .string("stream")), ("id", .int(Int64(n.raw)))])
        }
    }

    static func port(_ p: Port) -> JSON {
        .object([("name", .string(p.name)), ("uid", .string(p.uid)), ("type", .string(p.type.rawValue))])
    }

    static func route(_ r: Route) -> JSON {
        .object([("inputs", .array(r.inputs.map(port))), ("outputs", .array(r.outputs.map(port)))])
    }

    static func error(_ e: SessionError) -> JSON {
        .object([("code", .string(e.code.rawValue)), ("message", .string(e.message))])
    }

    static func gain(_ g: Float) -> JSON {
        // Three decimals: stable text for equal values.
        .double((Double(g) * 1000).rounded() / 1000)
    }

    public static func notification(_ n: Notification) -> [(String, JSON)] {
        switch n {
        case .interruptionBegan(let reason):
            return [("type", .string("interruption")), ("phase", .string("began")), ("reason", .string(reason.rawValue))]
        case .interruptionEnded(let shouldResume):
            return [("type", .string("interruption")), ("phase", .string("ended")), ("shouldResume", .bool(shouldResume))]
        case .routeChange(let reason, let previous, let current):
            return [("type", .string("routeChange")), ("reason", .string(reason.rawValue)),
                    ("previousRoute", route(previous)), ("currentRoute", route(current))]
        case .silenceSecondaryAudioHint(let begin):
            return [("type", .string("silenceSecondaryAudioHint")), ("phase", .string(begin ? "begin" : "end"))]
        case .mediaServicesWereLost:
            return [("type", .string("mediaServicesWereLost"))]
        case .mediaServicesWereReset:
            return [("type", .string("mediaServicesWereReset"))]
        case .activationResult(.success(let warning)):
            var out: [(String, JSON)] = [("type", .string("activation")), ("ok", .bool(true))]
            if let warning { out.append(("warning", .string(warning.rawValue))) }
            return out
        case .activationResult(.failure(let e)):
            return [("type", .string("activation")), ("ok", .bool(false)), ("error", error(e))]
        case .declarationRefused(let e):
            return [("type", .string("declarationRefused")), ("error", error(e))]
        }
    }

    public static func event(sequence: UInt64, session: SessionID, notification n: Notification) -> JSON {
        .object([("seq", .int(Int64(clamping: sequence))), ("session", sessionRef(session))] + notification(n))
    }

    public static func session(_ id: SessionID, _ s: SessionSnapshot) -> JSON {
        var members: [(String, JSON)] = [
            ("session", sessionRef(id)),
            ("application", s.applicationName.map(JSON.string) ?? .null),
            ("legacy", .bool(s.isLegacy)),
            ("category", .string(s.category.rawValue)),
            ("mode", .string(s.mode.rawValue)),
            ("options", .array(s.options.names.map(JSON.string))),
            ("priority", .string(s.priority.rawValue)),
            ("active", .bool(s.active)),
            ("playing", .bool(s.isPlaying)),
            ("interrupted", .bool(s.interrupted)),
        ]
        if let r = s.interruptionReason { members.append(("interruptionReason", .string(r.rawValue))) }
        members += [
            ("duckGain", gain(s.duckGain)),
            ("silenced", .bool(s.silenced)),
            ("streams", .array(s.streams.map { .int(Int64($0.raw)) })),
            ("route", route(s.route)),
            ("prefersNoInterruptionsFromSystemAlerts", .bool(s.prefersNoInterruptionsFromSystemAlerts)),
            ("prefersInterruptionOnRouteDisconnect", .bool(s.prefersInterruptionOnRouteDisconnect)),
            ("secondaryAudioShouldBeSilencedHint", .bool(s.secondaryAudioShouldBeSilencedHint)),
        ]
        return .object(members)
    }

    public static func global(_ g: GlobalSnapshot) -> JSON {
        .object([
            ("currentRoute", route(g.currentRoute)),
            ("silentMode", .bool(g.silentMode)),
            ("screenLocked", .bool(g.screenLocked)),
            ("isOtherAudioPlaying", .bool(g.isOtherAudioPlaying)),
            ("secondaryAudioShouldBeSilencedHint", .bool(g.secondaryAudioShouldBeSilencedHint)),
            ("playingSessions", .int(Int64(g.playingSessionCount))),
            ("primaryAudioSessions", .int(Int64(g.primaryAudioSessionCount))),
        ])
    }
}

extension MetadataFormat {
    /// Subject = a legacy stream's node id: the MPRIS player the bridge governs it through.
    public static let mprisKey = "audio-session.mpris"

    static func mpris(player: String) -> JSON {
        .object([("player", .string(player))])
    }
}

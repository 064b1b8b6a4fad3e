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

    // The documents are written straight into bytes (`JSONWriter`): the module writes one
    // on every change it publishes, so no tree of values is built for it.

    static func sessionRef(_ session: SessionID, _ w: inout JSONWriter) {
        w.beginObject()
        w.key("kind")
        switch session {
        case .client(let c):
            w.string("client")
            w.key("id")
            w.int(Int64(c.raw))
        case .stream(let n):
            w.string("stream")
            w.key("id")
            w.int(Int64(n.raw))
        }
        w.endObject()
    }

    static func port(_ p: Port, _ w: inout JSONWriter) {
        w.beginObject()
        w.key("name")
        w.string(p.name)
        w.key("uid")
        w.string(p.uid)
        w.key("type")
        w.string(p.type.rawValue)
        w.endObject()
    }

    static func route(_ r: Route, _ w: inout JSONWriter) {
        w.beginObject()
        w.key("inputs")
        w.beginArray()
        for p in r.inputs { port(p, &w) }
        w.endArray()
        w.key("outputs")
        w.beginArray()
        for p in r.outputs { port(p, &w) }
        w.endArray()
        w.endObject()
    }

    static func error(_ e: SessionError, _ w: inout JSONWriter) {
        w.beginObject()
        w.key("code")
        w.string(e.code.rawValue)
        w.key("message")
        w.string(e.message)
        w.endObject()
    }

    static func gain(_ g: Float, _ w: inout JSONWriter) {
        // Three decimals: stable text for equal values. A gain is within 0...1: written
        // from integers; anything else (never decided) the general way.
        let thousandths = (Double(g) * 1000).rounded()
        if thousandths >= 0 && thousandths <= 1_000_000 {
            w.thousandths(UInt32(thousandths))
        } else {
            w.double(thousandths / 1000)
        }
    }

    /// A notification's members (after the event's sequence number and session).
    static func notification(_ n: Notification, _ w: inout JSONWriter) {
        switch n {
        case .interruptionBegan(let reason):
            w.key("type"); w.string("interruption")
            w.key("phase"); w.string("began")
            w.key("reason"); w.string(reason.rawValue)
        case .interruptionEnded(let shouldResume):
            w.key("type"); w.string("interruption")
            w.key("phase"); w.string("ended")
            w.key("shouldResume"); w.bool(shouldResume)
        case .routeChange(let reason, let previous, let current):
            w.key("type"); w.string("routeChange")
            w.key("reason"); w.string(reason.rawValue)
            w.key("previousRoute"); route(previous, &w)
            w.key("currentRoute"); route(current, &w)
        case .silenceSecondaryAudioHint(let begin):
            w.key("type"); w.string("silenceSecondaryAudioHint")
            w.key("phase"); w.string(begin ? "begin" : "end")
        case .mediaServicesWereLost:
            w.key("type"); w.string("mediaServicesWereLost")
        case .mediaServicesWereReset:
            w.key("type"); w.string("mediaServicesWereReset")
        case .activationResult(.success(let warning)):
            w.key("type"); w.string("activation")
            w.key("ok"); w.bool(true)
            if let warning {
                w.key("warning"); w.string(warning.rawValue)
            }
        case .activationResult(.failure(let e)):
            w.key("type"); w.string("activation")
            w.key("ok"); w.bool(false)
            w.key("error"); error(e, &w)
        case .declarationRefused(let e):
            w.key("type"); w.string("declarationRefused")
            w.key("error"); error(e, &w)
        }
    }

    /// An `audio-session.event` value: UTF-8 JSON text.
    public static func event(sequence: UInt64, session: SessionID, notification n: Notification) -> [UInt8] {
        eventWriter(sequence: sequence, session: session, notification: n).bytes
    }

    static func eventWriter(sequence: UInt64, session: SessionID, notification n: Notification) -> JSONWriter {
        var w = JSONWriter()
        w.beginObject()
        w.key("seq"); w.int(Int64(clamping: sequence))
        w.key("session"); sessionRef(session, &w)
        notification(n, &w)
        w.endObject()
        return w
    }

    /// An `audio-session.session` value: UTF-8 JSON text.
    public static func session(_ id: SessionID, _ s: SessionSnapshot) -> [UInt8] {
        sessionWriter(id, s).bytes
    }

    static func sessionWriter(_ id: SessionID, _ s: SessionSnapshot) -> JSONWriter {
        var w = JSONWriter()
        w.beginObject()
        w.key("session"); sessionRef(id, &w)
        w.key("application")
        if let name = s.applicationName { w.string(name) } else { w.null() }
        w.key("legacy"); w.bool(s.isLegacy)
        w.key("category"); w.string(s.category.rawValue)
        w.key("mode"); w.string(s.mode.rawValue)
        w.key("options")
        w.beginArray()
        // In the vocabulary's order, as `CategoryOptions.names` lists them (no array made).
        for entry in CategoryOptions.named where s.options.contains(entry.option) { w.string(entry.name) }
        w.endArray()
        w.key("priority"); w.string(s.priority.rawValue)
        w.key("active"); w.bool(s.active)
        w.key("playing"); w.bool(s.isPlaying)
        w.key("interrupted"); w.bool(s.interrupted)
        if let r = s.interruptionReason {
            w.key("interruptionReason"); w.string(r.rawValue)
        }
        w.key("duckGain"); gain(s.duckGain, &w)
        w.key("silenced"); w.bool(s.silenced)
        w.key("streams")
        w.beginArray()
        for n in s.streams { w.int(Int64(n.raw)) }
        w.endArray()
        w.key("route"); route(s.route, &w)
        w.key("prefersNoInterruptionsFromSystemAlerts"); w.bool(s.prefersNoInterruptionsFromSystemAlerts)
        w.key("prefersInterruptionOnRouteDisconnect"); w.bool(s.prefersInterruptionOnRouteDisconnect)
        w.key("secondaryAudioShouldBeSilencedHint"); w.bool(s.secondaryAudioShouldBeSilencedHint)
        w.endObject()
        return w
    }

    /// An `audio-session.global` value: UTF-8 JSON text.
    public static func global(_ g: GlobalSnapshot) -> [UInt8] {
        globalWriter(g).bytes
    }

    static func globalWriter(_ g: GlobalSnapshot) -> JSONWriter {
        var w = JSONWriter()
        w.beginObject()
        w.key("currentRoute"); route(g.currentRoute, &w)
        w.key("silentMode"); w.bool(g.silentMode)
        w.key("screenLocked"); w.bool(g.screenLocked)
        w.key("isOtherAudioPlaying"); w.bool(g.isOtherAudioPlaying)
        w.key("secondaryAudioShouldBeSilencedHint"); w.bool(g.secondaryAudioShouldBeSilencedHint)
        w.key("playingSessions"); w.int(Int64(g.playingSessionCount))
        w.key("primaryAudioSessions"); w.int(Int64(g.primaryAudioSessionCount))
        w.endObject()
        return w
    }
}

extension MetadataFormat {
    /// Subject = a legacy stream's node id: the MPRIS player the bridge governs it through.
    public static let mprisKey = "audio-session.mpris"

    /// An `audio-session.mpris` value: UTF-8 JSON text.
    static func mpris(player: String) -> [UInt8] {
        mprisWriter(player: player).bytes
    }

    static func mprisWriter(player: String) -> JSONWriter {
        var w = JSONWriter()
        w.beginObject()
        w.key("player"); w.string(player)
        w.endObject()
        return w
    }
}

import AudioSessionCoreABI
import SessionPolicy
import PipeWireFacts

/// The Swift side of libpipewire-module-audio-session: owns the policy, turns
/// ABI calls into `GraphEvent`s and runs the resulting `Effect`s through the
/// module's callback table. One instance per loaded module, used on the
/// PipeWire main loop only.
public final class ModuleCore {
    public private(set) var policy: SessionPolicy
    let effects: EffectSink
    /// Sequence number of the last event published on `audio-session.event`.
    public private(set) var sequence: UInt64 = 0
    /// The sessions whose state is published now.
    public private(set) var publishedSessions: Set<SessionID> = []

    public init(configuration: PolicyConfiguration, effects: EffectSink) {
        var configuration = configuration
        // Nothing may be held for a grace period that no timer would end.
        if !effects.schedulesTimers { configuration.resumeGraceMilliseconds = 0 }
        self.policy = SessionPolicy(configuration: configuration)
        self.effects = effects
    }

    /// The port of each sink and source, from the module's reads of their devices' routes.
    var endpointRoutes = EndpointRoutes()
    /// The capture streams that record a sink's monitor: no session (`MonitorStreams`).
    var monitorStreams = MonitorStreams()
    /// Streams the policy let go of while the module's pause still holds their node (the
    /// MPRIS bridge reported that their player paused itself): their owner's re-activation
    /// is still an activation request (`streamActivated`), until the module pauses or
    /// resumes them again.
    var releasedPauses: Set<NodeID> = []

    /// The global switches each client last asked for, permitted or not (see `Control`):
    /// an unchanged request is not asked again.
    var controlRequests: [ClientID: [GlobalSwitch: Bool]] = [:]

    /// Who each client is, as the module established it when it connected (`ClientIdentity`).
    var identities: [ClientID: ClientIdentity] = [:]

    /// The last accepted `audio.session.*` keys of each client and stream (within
    /// `PropertyBounds`): what stays in force when a later declaration is refused for its size.
    var acceptedDeclarations: [PendingObject: Properties] = [:]
    /// Declarations refused for their size, answered once their event is decided.
    var refusals: [PendingObject: SessionError] = [:]

    /// Debouncing: property changes not decided on yet, the latest per object,
    /// with the order of each object's last change. Only when the sink defers
    /// (`EffectSink.defersPropertyChanges`: the module flushes on its next loop turn).
    var pendingChanges: [PendingObject: (order: UInt64, event: GraphEvent)] = [:]
    var pendingOrder: UInt64 = 0

    enum PendingObject: Hashable {
        case client(ClientID), stream(NodeID), endpoint(NodeID)
    }

    /// The object whose property change `event` is; nil for every other event.
    static func coalescing(_ event: GraphEvent) -> PendingObject? {
        switch event {
        case .clientChanged(let c, _): return .client(c)
        case .streamChanged(let n, _): return .stream(n)
        case .endpointChanged(let n, _, _): return .endpoint(n)
        default: return nil
        }
    }

    /// Feeds one event to the policy and runs what it decides, in order.
    ///
    /// A burst of property changes (a client rewriting its declaration, pipewire-pulse
    /// setting a new stream's properties one message at a time) is decided once, on
    /// the settled properties: each change is held until `flush()`, which the module
    /// runs when its loop has handled the messages at hand. Any other event decides
    /// the held changes first, so the policy sees the graph in order, and is itself
    /// decided at once: a pause that keeps audio from leaking never waits.
    public func handle(_ received: GraphEvent) {
        guard monitorStreams.admits(received) else { return }
        submit(withPorts(received), received: received)
    }

    /// `handle` for an event that has its endpoint's port already (`withPorts`).
    func submit(_ ported: GraphEvent, received: GraphEvent) {
        let event = vetted(ported)
        if effects.defersPropertyChanges, let object = Self.coalescing(event) {
            if pendingChanges.isEmpty { effects.scheduleFlush() }
            pendingOrder &+= 1
            pendingChanges[object] = (pendingOrder, event)
            return
        }
        flush()
        decide(event)
        // The MPRIS bridge's reports are read from what the client brought, not from the
        // bounded declaration (they are no declaration).
        if case .clientAdded(let client, let props) = received {
            applyPlayerReports(from: client, PlayerReports.keys(of: props))
        }
    }

    /// Decides the held property changes, in the order of their last change.
    public func flush() {
        guard !pendingChanges.isEmpty else { return }
        let batch = pendingChanges.values.sorted { $0.order < $1.order }
        pendingChanges = [:]
        for held in batch { decide(held.event) }
    }

    /// Publishes the current state again (the global state and every session's) into a
    /// metadata object that was created anew after the previous one was destroyed.
    /// Held property changes are decided first, so the state written is the settled one.
    public func republish() {
        flush()
        for effect in policy.publishedState() { run(effect) }
    }

    /// How many per-client, per-stream and per-endpoint records the module core holds
    /// (identities, switch requests, accepted declarations, refusals, player reports,
    /// endpoint ports, monitor recorders): 0 once every object is gone.
    public var recordCount: Int {
        identities.count + controlRequests.count + acceptedDeclarations.count + refusals.count + pendingChanges.count
            + playerReports.count + endpointRoutes.count + monitorStreams.count + releasedPauses.count
    }

    /// How many property changes wait for `flush()`.
    public var pendingChangeCount: Int { pendingChanges.count }

    func decide(_ event: GraphEvent) {
        // The translation layer: the policy sees typed facts, never PipeWire's properties.
        let translated = event.translated(endpointKind: { policy.endpointKind($0) })
        for effect in policy.handle(translated) {
            run(effect)
        }
        if let object = Self.declaringObject(event), let refusal = refusals.removeValue(forKey: object) {
            let session: SessionID
            switch object {
            case .client(let c): session = .client(c)
            case .stream(let n): session = policy.session(ofStream: n) ?? .stream(n)
            case .endpoint(let n): session = .stream(n)
            }
            run(.notify(session, .declarationRefused(refusal)))
        }
        switch event {
        case .clientAdded(let client, let props):
            // What a client brings when it connects is its own: nobody else can reach it
            // before it is registered.
            applyControl(from: client, props)
        case .clientRemoved(let client):
            controlRequests[client] = nil
            identities[client] = nil
            if playerReports.removeValue(forKey: client) != nil { publishPlayers() }
        case .streamRemoved(let node):
            releasedPauses.remove(node)
            if publishedPlayers[node] != nil { publishPlayers() }
        default:
            break
        }
    }

    /// The identity the module established for a client when it connected; given before
    /// the client's `clientAdded` (`as_core_client_identity`).
    public func setIdentity(_ identity: ClientIdentity, of client: ClientID) {
        identities[client] = identity
    }

    /// The event as the policy may see it: only the properties it reads (`PropertyBounds`),
    /// a declaration too large refused (the last accepted one stays), identity keys a client
    /// or stream brought removed and a client's own identity added.
    func vetted(_ event: GraphEvent) -> GraphEvent {
        switch event {
        case .clientAdded(let c, let props): return .clientAdded(c, withIdentity(c, bounded(.client(c), props)))
        case .clientChanged(let c, let props): return .clientChanged(c, withIdentity(c, bounded(.client(c), props)))
        case .streamAdded(let n, let c, let direction, let props):
            return .streamAdded(n, client: c, direction: direction, bounded(.stream(n), props))
        case .streamChanged(let n, let props): return .streamChanged(n, bounded(.stream(n), props))
        case .endpointAdded(let n, let kind, let props, let route): return .endpointAdded(n, kind: kind, endpointProperties(props), route: route)
        case .endpointChanged(let n, let props, let route): return .endpointChanged(n, endpointProperties(props), route: route)
        case .endpointPortRestored(let n, let props, let route):
            return .endpointPortRestored(n, endpointProperties(props), route: route)
        case .clientRemoved(let c):
            acceptedDeclarations[.client(c)] = nil
            refusals[.client(c)] = nil
            return event
        case .streamRemoved(let n):
            acceptedDeclarations[.stream(n)] = nil
            refusals[.stream(n)] = nil
            return event
        default: return event
        }
    }

    /// The client or stream whose declaration `event` carries.
    static func declaringObject(_ event: GraphEvent) -> PendingObject? {
        switch event {
        case .clientAdded(let c, _), .clientChanged(let c, _): return .client(c)
        case .streamAdded(let n, _, _, _), .streamChanged(let n, _): return .stream(n)
        default: return nil
        }
    }

    func bounded(_ object: PendingObject, _ props: Properties) -> Properties {
        var kept = PropertyBounds.kept(props)
        if let refusal = PropertyBounds.refusal(kept) {
            refusals[object] = refusal
            for key in kept.keys where key.hasPrefix(DeclarationKey.prefix) { kept[key] = nil }
            for (key, value) in acceptedDeclarations[object] ?? [:] { kept[key] = value }
        } else {
            refusals[object] = nil
            let declaration = PropertyBounds.declaration(kept)
            acceptedDeclarations[object] = declaration.isEmpty ? nil : declaration
        }
        return kept
    }

    /// Sinks and sources declare nothing.
    func endpointProperties(_ props: Properties) -> Properties {
        PropertyBounds.kept(props).filter { !$0.key.hasPrefix(DeclarationKey.prefix) }
    }

    /// `props` are `PropertyBounds.kept`: no identity keys left.
    func withIdentity(_ c: ClientID, _ props: Properties) -> Properties {
        var out = props
        guard let identity = identities[c] else { return out }
        for (k, v) in identity.properties { out[k] = v }
        return out
    }

    /// A client wrote its own properties (`pw_core_update_properties` on its own connection):
    /// the module reads the request from the update itself, so that properties another
    /// client wrote onto this one (`pw_client_update_properties` with W on it) never count.
    /// Held property changes are decided first only when a switch request changes, so a
    /// burst of declaration rewrites is still decided once.
    public func ownPropertiesWritten(_ client: ClientID, _ props: Properties) {
        if PlayerReports.present(in: props) || playerReports[client] != nil {
            flush()
            applyPlayerReports(from: client, props)
        }
        guard !newSwitchRequest(from: client, props).isEmpty else { return }
        flush()
        applyControl(from: client, props)
    }

    /// The MPRIS bridge's reports (`PlayerReports`), by client: only trusted ones are kept.
    var playerReports: [ClientID: PlayerReports] = [:]
    /// `audio-session.mpris` as published, by stream.
    public private(set) var publishedPlayers: [NodeID: String] = [:]
    /// The user the daemon runs as: bridge reports are accepted from this user only.
    public var daemonUserID: UInt32? = PlayerReports.currentUserID()

    /// The MPRIS bridge reports the players it governs and the streams whose player has
    /// paused itself (docs/mpris.md). A newly released stream is let go by the policy.
    func applyPlayerReports(from client: ClientID, _ props: Properties) {
        guard PlayerReports.present(in: props) || playerReports[client] != nil else { return }
        guard PlayerReports.isTrusted(identities[client], daemonUserID: daemonUserID) else {
            if playerReports.removeValue(forKey: client) != nil { publishPlayers() }
            effects.log(.warn, "\(client) may not report MPRIS players: only a client of the daemon's user that is not sandboxed may")
            return
        }
        let reports = PlayerReports(props)
        let before = playerReports[client]?.released ?? []
        playerReports[client] = reports
        for node in reports.released.subtracting(before).sorted() {
            effects.log(.info, "\(client): the player of \(node) has paused itself; the policy lets go of its pause")
            if policy.holdsPaused(node) { releasedPauses.insert(node) }
            for effect in policy.handle(.streamReleasedToProgram(node)) { run(effect) }
        }
        publishPlayers()
    }

    /// Brings `audio-session.mpris` in line with the reports, for streams that exist.
    func publishPlayers() {
        var wanted: [NodeID: String] = [:]
        for client in playerReports.keys.sorted() {
            for (node, player) in playerReports[client]?.governed ?? [:] where policy.hasStream(node) {
                wanted[node] = player
            }
        }
        for node in publishedPlayers.keys.sorted() where wanted[node] == nil {
            effects.publish(node.raw, MetadataFormat.mprisKey, MetadataFormat.jsonType, nil)
        }
        for node in wanted.keys.sorted() where publishedPlayers[node] != wanted[node] {
            guard let player = wanted[node] else { continue }
            effects.publish(node.raw, MetadataFormat.mprisKey, MetadataFormat.jsonType, MetadataFormat.mpris(player: player).description)
        }
        publishedPlayers = wanted
    }

    /// Silent mode and screen lock arrive as a client's own properties
    /// (`pw-session silent on` sets `audio.session.control.silent-mode = true`
    /// with pw_core_update_properties). The switches the client changes from what it last
    /// asked go to the policy as one request, which decides whether the client may set
    /// them (`Effect.switchRefused` when it may not); the switch stays as set after the
    /// client leaves.
    func applyControl(from client: ClientID, _ props: Properties) {
        let request = newSwitchRequest(from: client, props)
        guard !request.isEmpty else { return }
        for s in GlobalSwitch.allCases {
            if let on = request[s] { controlRequests[client, default: [:]][s] = on }
        }
        let decided = policy.handle(.switchesRequested(client, request))
        // The policy grants or refuses a request as a whole.
        let refused = decided.contains { if case .switchRefused = $0 { true } else { false } }
        for s in GlobalSwitch.allCases where !refused {
            if let on = request[s] { effects.log(.info, "\(client) sets \(Control.key(s)) \(on ? "on" : "off")") }
        }
        for effect in decided { run(effect) }
    }

    /// What `props` ask of the switches that the client has not asked already.
    func newSwitchRequest(from client: ClientID, _ props: Properties) -> SwitchRequest {
        var request = Control.request(in: props)
        for s in GlobalSwitch.allCases where request[s] == controlRequests[client]?[s] { request[s] = nil }
        return request
    }

    func run(_ effect: Effect) {
        switch effect {
        case .pause(let node):
            releasedPauses.remove(node)
            effects.pause(node.raw)
        case .resume(let node):
            releasedPauses.remove(node)
            effects.resume(node.raw)
        case .duck(let node, let gain, let ramp):
            effects.duck(node.raw, gain, ramp)
        case .silence(let node, let on):
            effects.silence(node.raw, on)
        case .notify(let session, let notification):
            sequence &+= 1
            let value = MetadataFormat.event(sequence: sequence, session: session, notification: notification)
            effects.publish(0, MetadataFormat.eventKey, MetadataFormat.jsonType, value.description)
            effects.log(.info, "\(session): \(value)")
        case .publishSession(let session, let snapshot):
            if snapshot == nil { publishedSessions.remove(session) } else { publishedSessions.insert(session) }
            let value = snapshot.map { MetadataFormat.session(session, $0).description }
            effects.publish(MetadataFormat.subject(of: session), MetadataFormat.sessionKey, MetadataFormat.jsonType, value)
        case .publishGlobal(let global):
            effects.publish(0, MetadataFormat.globalKey, MetadataFormat.jsonType, MetadataFormat.global(global).description)
        case .scheduleTimer(let token, let milliseconds):
            effects.scheduleTimer(token, milliseconds)
        case .switchRefused(let client, let s, let reason):
            effects.log(.warn, "\(client) may not set \(Control.key(s)): \(Control.describe(reason))")
        }
    }
}

public enum LogLevel: Sendable { case error, warn, info, debug }

/// Where effects go: the module's `struct as_core_effects`, or a recording fake in tests.
public protocol EffectSink: AnyObject {
    func pause(_ node: UInt32)
    func resume(_ node: UInt32)
    func duck(_ node: UInt32, _ gain: Float, _ rampMilliseconds: UInt32)
    func silence(_ node: UInt32, _ on: Bool)
    /// `value` nil removes the key.
    func publish(_ subject: UInt32, _ key: String, _ type: String, _ value: String?)
    func log(_ level: LogLevel, _ message: String)
    /// Whether property changes may wait for `ModuleCore.flush()` (debouncing).
    var defersPropertyChanges: Bool { get }
    /// Asks for one `ModuleCore.flush()` soon, on the same thread (the module's next loop turn).
    func scheduleFlush()
    /// Whether `scheduleTimer` calls back (a grace period needs it).
    var schedulesTimers: Bool { get }
    /// Asks for `ModuleCore.handle(.timerFired(token))` after `milliseconds`, on the same thread.
    func scheduleTimer(_ token: UInt64, _ milliseconds: UInt32)
}

extension EffectSink {
    public var defersPropertyChanges: Bool { false }
    public func scheduleFlush() {}
    public var schedulesTimers: Bool { false }
    public func scheduleTimer(_ token: UInt64, _ milliseconds: UInt32) {}
}

/// Runs effects through the C callback table given to `as_core_new`.
final class CEffectSink: EffectSink {
    let table: as_core_effects
    let data: UnsafeMutableRawPointer?

    init(table: as_core_effects, data: UnsafeMutableRawPointer?) {
        self.table = table
        self.data = data
    }

    func pause(_ node: UInt32) { table.pause?(data, node) }
    func resume(_ node: UInt32) { table.resume?(data, node) }
    func duck(_ node: UInt32, _ gain: Float, _ ramp: UInt32) { table.duck?(data, node, gain, ramp) }
    func silence(_ node: UInt32, _ on: Bool) { table.silence?(data, node, on) }
    func publish(_ subject: UInt32, _ key: String, _ type: String, _ value: String?) {
        guard let publish = table.publish else { return }
        key.withCString { k in
            type.withCString { t in
                if let value {
                    value.withCString { v in publish(data, subject, k, t, v) }
                } else {
                    publish(data, subject, k, t, nil)
                }
            }
        }
    }
    func log(_ level: LogLevel, _ message: String) {
        guard let log = table.log else { return }
        let c: as_log_level
        switch level {
        case .error: c = AS_LOG_ERROR
        case .warn: c = AS_LOG_WARN
        case .info: c = AS_LOG_INFO
        case .debug: c = AS_LOG_DEBUG
        }
        message.withCString { log(data, c, $0) }
    }
    var defersPropertyChanges: Bool { table.version >= 2 && table.schedule_flush != nil }
    func scheduleFlush() { table.schedule_flush?(data) }
    var schedulesTimers: Bool { table.version >= 3 && table.schedule_timer != nil }
    func scheduleTimer(_ token: UInt64, _ milliseconds: UInt32) {
        guard schedulesTimers else { return }
        table.schedule_timer?(data, token, milliseconds)
    }
}

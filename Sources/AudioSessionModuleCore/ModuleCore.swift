import AudioSessionCoreABI
import SessionPolicy

/// The Swift side of libpipewire-module-audio-session: owns the policy, turns
/// ABI calls into `Event`s and runs the resulting `Effect`s through the
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
        self.policy = SessionPolicy(configuration: configuration)
        self.effects = effects
    }

    /// The global switches each client last asked for (see `Control`).
    var controlRequests: [ClientID: [Control.Switch: Bool]] = [:]

    /// Debouncing: property changes not decided on yet, the latest per object,
    /// with the order of each object's last change. Only when the sink defers
    /// (`EffectSink.defersPropertyChanges`: the module flushes on its next loop turn).
    var pendingChanges: [PendingObject: (order: UInt64, event: Event)] = [:]
    var pendingOrder: UInt64 = 0

    enum PendingObject: Hashable {
        case client(ClientID), stream(NodeID), endpoint(NodeID)
    }

    /// The object whose property change `event` is; nil for every other event.
    static func coalescing(_ event: Event) -> PendingObject? {
        switch event {
        case .clientChanged(let c, _): return .client(c)
        case .streamChanged(let n, _): return .stream(n)
        case .endpointChanged(let n, _): return .endpoint(n)
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
    public func handle(_ event: Event) {
        if effects.defersPropertyChanges, let object = Self.coalescing(event) {
            if pendingChanges.isEmpty { effects.scheduleFlush() }
            pendingOrder &+= 1
            pendingChanges[object] = (pendingOrder, event)
            return
        }
        flush()
        decide(event)
    }

    /// Decides the held property changes, in the order of their last change.
    public func flush() {
        guard !pendingChanges.isEmpty else { return }
        let batch = pendingChanges.values.sorted { $0.order < $1.order }
        pendingChanges = [:]
        for held in batch { decide(held.event) }
    }

    /// How many property changes wait for `flush()`.
    public var pendingChangeCount: Int { pendingChanges.count }

    func decide(_ event: Event) {
        for effect in policy.handle(event) {
            run(effect)
        }
        switch event {
        case .clientAdded(let client, let props), .clientChanged(let client, let props):
            applyControl(from: client, props)
            applyPlayerReports(from: client, props)
        case .clientRemoved(let client):
            controlRequests[client] = nil
            if playerReports.removeValue(forKey: client) != nil { publishPlayers() }
        case .streamRemoved(let node):
            if publishedPlayers[node] != nil { publishPlayers() }
        default:
            break
        }
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
        guard PlayerReports.isTrusted(props, daemonUserID: daemonUserID) else {
            if playerReports.removeValue(forKey: client) != nil { publishPlayers() }
            effects.log(.warn, "\(client) may not report MPRIS players: only a client of the daemon's user that is not sandboxed may")
            return
        }
        let reports = PlayerReports(props)
        let before = playerReports[client]?.released ?? []
        playerReports[client] = reports
        for node in reports.released.subtracting(before).sorted() {
            effects.log(.info, "\(client): the player of \(node) has paused itself; the policy lets go of its pause")
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

    /// Silent mode and screen lock arrive as a permitted client's own properties
    /// (`pw-session silent on` sets `audio.session.control.silent-mode = true`
    /// with pw_core_update_properties). A request is applied when the client
    /// changes it; the switch stays as set after the client leaves.
    func applyControl(from client: ClientID, _ props: Properties) {
        var requests = controlRequests[client] ?? [:]
        for request in Control.requests(in: props) {
            guard requests[request.switch] != request.on else { continue }
            requests[request.switch] = request.on
            guard Control.isPermitted(props) else {
                effects.log(.warn, "\(client) may not set \(request.switch.rawValue): sandboxed client")
                continue
            }
            effects.log(.info, "\(client) sets \(request.switch.rawValue) \(request.on ? "on" : "off")")
            switch request.switch {
            case .silentMode: for effect in policy.handle(.silentMode(request.on)) { run(effect) }
            case .screenLock: for effect in policy.handle(.screenLocked(request.on)) { run(effect) }
            }
        }
        controlRequests[client] = requests
    }

    func run(_ effect: Effect) {
        switch effect {
        case .pause(let node):
            effects.pause(node.raw)
        case .resume(let node):
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
}

extension EffectSink {
    public var defersPropertyChanges: Bool { false }
    public func scheduleFlush() {}
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
}

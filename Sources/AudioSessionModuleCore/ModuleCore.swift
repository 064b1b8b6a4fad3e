import AudioSessionCoreABI
import SessionPolicy
import PipeWireFacts

#if canImport(Glibc)
import Glibc
#endif

/// The Swift side of libpipewire-module-audio-session: an adapter. It receives the
/// module's facts already typed by the translation (`Exports.swift`), steps the policy with
/// them, and hands the policy's effects to the module's callback table. It decides nothing
/// and keeps nothing the policy could keep: its only state is the property changes held
/// for one loop turn (debouncing) and the metadata's event counter. One instance per
/// loaded module, used on the PipeWire main loop only.
public final class ModuleCore {
    public private(set) var policy: SessionPolicy
    let effects: EffectSink
    /// Sequence number of the last event published on `audio-session.event`.
    public private(set) var sequence: UInt64 = 0

    public init(configuration: PolicyConfiguration, effects: EffectSink) {
        var configuration = configuration
        // Nothing may be held for a grace period that no timer would end.
        if !effects.schedulesTimers { configuration.resumeGraceMilliseconds = 0 }
        // MPRIS reports are accepted from the daemon's own user (the policy decides).
        if configuration.daemonUserID == nil { configuration.daemonUserID = Self.currentUserID() }
        self.policy = SessionPolicy(configuration: configuration)
        self.effects = effects
    }

    /// The user the daemon runs as.
    static func currentUserID() -> UInt32? {
        #if canImport(Glibc)
        return UInt32(getuid())
        #else
        return nil
        #endif
    }

    /// Debouncing: property changes not decided on yet, the latest per object, with the
    /// order of each object's last change. Only when the sink defers
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

    /// Publishes the current state again (the global state and every session's) into a
    /// metadata object that was created anew after the previous one was destroyed.
    /// Held property changes are decided first, so the state written is the settled one.
    public func republish() {
        flush()
        for effect in policy.publishedState() { run(effect) }
    }

    /// How many property changes wait for `flush()`.
    public var pendingChangeCount: Int { pendingChanges.count }

    /// How many per-object records the module core and the policy hold beyond the graph
    /// itself (held changes, monitor recorders, early route reads, MPRIS reports and
    /// players, switch requests): 0 once every object is gone.
    public var recordCount: Int { pendingChanges.count + policy.recordCount }

    func decide(_ event: Event) {
        for effect in policy.handle(event) { run(effect) }
    }

    /// A client wrote its own properties on its own connection (`pw_core_update_properties`):
    /// the MPRIS bridge's report and the global switch requests are read from this writing
    /// only, so that properties another client wrote onto this one never count. Held
    /// property changes are decided first only when the update carries a request, so a
    /// burst of declaration rewrites is still decided once.
    public func ownPropertiesWritten(_ client: ClientID, _ props: Properties) {
        if let report = PlayerReport(pipeWire: props) {
            flush()
            decide(.playerReportChanged(client, report))
        }
        let request = SwitchRequest(pipeWire: props)
        guard !request.isEmpty else { return }
        flush()
        decide(.switchesRequested(client, request))
    }

    /// A client connected: what it brings is its own (nobody else can reach it before it is
    /// registered), so the switches it asks for count as its request.
    public func clientAdded(_ client: ClientID, _ props: Properties, identity: ClientIdentity) {
        handle(.clientAdded(client, props, identity: identity))
        let request = SwitchRequest(pipeWire: props)
        if !request.isEmpty { decide(.switchesRequested(client, request)) }
    }

    /// The module is going away: what the policy undoes (its pauses, R41) is run; nothing is
    /// decided after this.
    public func unload() {
        flush()
        decide(.moduleUnloading)
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
            let value = snapshot.map { MetadataFormat.session(session, $0).description }
            effects.publish(MetadataFormat.subject(of: session), MetadataFormat.sessionKey, MetadataFormat.jsonType, value)
        case .publishGlobal(let global):
            effects.publish(0, MetadataFormat.globalKey, MetadataFormat.jsonType, MetadataFormat.global(global).description)
        case .publishPlayer(let node, let player):
            effects.publish(node.raw, MetadataFormat.mprisKey, MetadataFormat.jsonType, player.map { MetadataFormat.mpris(player: $0).description })
        case .scheduleTimer(let token, let milliseconds):
            effects.scheduleTimer(token, milliseconds)
        case .switchSet(let client, let s, let on):
            effects.log(.info, "\(client) sets \(SwitchRequest.key(s)) \(on ? "on" : "off")")
        case .switchRefused(let client, let s, let reason):
            effects.log(.warn, "\(client) may not set \(SwitchRequest.key(s)): \(reason.sentence)")
        case .playerReportRefused(let client):
            effects.log(.warn, "\(client) may not report MPRIS players: only a client of the daemon's user that is not sandboxed may")
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

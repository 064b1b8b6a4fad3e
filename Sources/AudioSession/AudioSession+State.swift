import PipeWirePorts  // Port.from: a node's properties read as a port, as the module reads them
import FoundationEssentials
import Synchronization

/// One `setActive` waiting for its `activation` answer.
struct ActivationWaiter {
    var id: UInt64
    var continuation: CheckedContinuation<Result<ActivationWarning?, SessionError>, Never>
}

/// Everything the session knows; guarded by `AudioSession.state`.
struct SessionClientState: ~Copyable {
    var declaration = Declaration()
    /// A declaration was made (setCategory or setActive): publish `audio.session.*`.
    var declared = false
    var requestedActive: Bool?
    /// Bumped on every setActive: `audio.session.activation-request`, so that asking
    /// again for the same value is a new request the policy answers.
    var activationRequests: UInt64 = 0
    var notifyOnDeactivation = false
    var control: [String: String] = [:]
    var outputOverride: PortOverride = .none
    /// The endpoint (node name) of `.speaker` while overridden: `audio.session.output-override`
    /// ("" once the override is withdrawn: client properties can be changed, not removed).
    var outputOverrideTarget: String?
    var outputOverrideUsed = false
    var preferredInput: SessionPort?

    var connected = false
    var connectSeq: Int32?
    var replaySeq: Int32?
    var synced = false
    var clientID: UInt32?
    var policyPresent = false
    /// The metadata's existing keys have been replayed (round trip after bind).
    var replayDone = false
    var lost = false
    var reconnecting = false
    var closed = false

    var session: SessionState?
    var global: GlobalState?
    var sessions: [UInt32: SessionState] = [:]
    var nodes: [UInt32: [String: String]] = [:]
    /// Client globals by id, with their registry properties.
    var clients: [UInt32: [String: String]] = [:]
    /// `audio-session.mpris`: stream node id -> the MPRIS player governing it.
    var players: [UInt32: String] = [:]
    var lastSequence: Int64 = -1

    var waiters: [ActivationWaiter] = []
    var nextWaiter: UInt64 = 0
    var subscribers: [UInt64: AsyncStream<AudioSessionNotification>.Continuation] = [:]
    var eventSubscribers: [UInt64: AsyncStream<PolicyEvent>.Continuation] = [:]
    var observers: [UInt64: @Sendable (AudioSessionNotification) -> Void] = [:]
    var nextSubscriber: UInt64 = 0

    var isReady: Bool { connected && synced && clientID != nil && policyPresent && replayDone }

    /// The client properties that carry the declaration (pw_core_update_properties; unmodified programs get them from PIPEWIRE_PROPS or PULSE_PROP).
    func clientProperties() -> [String: String] {
        var p = control
        // The policy leaves resuming to this library (R15), which reports ended+shouldResume.
        p[DeclarationKey.library] = "1"
        guard declared else { return p }
        let d = declaration
        p[DeclarationKey.category] = d.category.rawValue
        p[DeclarationKey.mode] = d.mode.rawValue
        p[DeclarationKey.options] = d.options.names.joined(separator: ",")
        p[DeclarationKey.prefersNoInterruptionsFromSystemAlerts] = d.prefersNoInterruptionsFromSystemAlerts ? "true" : "false"
        p[DeclarationKey.prefersInterruptionOnRouteDisconnect] = d.prefersInterruptionOnRouteDisconnect ? "true" : "false"
        // R33: the policy reports the override to the session as routeChange(override).
        if outputOverrideUsed { p[DeclarationKey.outputOverride] = outputOverrideTarget ?? "" }
        if let a = requestedActive {
            p[DeclarationKey.active] = a ? "true" : "false"
            p[DeclarationKey.activationRequest] = String(activationRequests)
            if !a { p[DeclarationKey.deactivation] = notifyOnDeactivation ? DeclarationKey.notifyOthersOnDeactivation : "none" }
        }
        return p
    }

    /// Sinks (or sources) of the graph, as ports. The registry carries few of a node's
    /// properties (no `device.form-factor`, no device properties): the port the policy
    /// published for the same node (from its full properties) wins.
    func endpoints(sink: Bool) -> [(id: UInt32, port: SessionPort)] {
        // A virtual source (a filter's, or one made by hand) is an input like a microphone.
        let classes: Set<String> = sink ? ["Audio/Sink"] : ["Audio/Source", "Audio/Source/Virtual"]
        let published = (sink ? global?.currentRoute.outputs : global?.currentRoute.inputs) ?? []
        return nodes.sorted { $0.key < $1.key }.compactMap { id, props in
            guard let cls = props["media.class"], classes.contains(cls) else { return nil }
            let port = SessionPort.from(props, kind: sink ? .sink : .source)
            return (id, published.first { $0.uid == port.uid }?.port ?? port)
        }
    }

    /// This connection's stream nodes of a direction ("Output" or "Input").
    func ownStreams(direction: String) -> [UInt32] {
        guard let c = clientID else { return [] }
        return nodes.sorted { $0.key < $1.key }.compactMap { id, props in
            props["client.id"] == String(c) && props["media.class"] == "Stream/\(direction)/Audio" ? id : nil
        }
    }
}

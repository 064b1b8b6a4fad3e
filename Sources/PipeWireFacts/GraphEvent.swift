import SessionPolicy

/// What the module reports about the graph, in PipeWire's terms: objects with their
/// property sets as PipeWire gives them. The module core works on these (bounds,
/// identity, routes, debouncing) and hands the policy their translation
/// (`translated(endpointKind:)`): typed facts, no PipeWire property.
public enum GraphEvent: Sendable, Equatable {
    /// A client connected (`global_added` of a `pw_impl_client`).
    case clientAdded(ClientID, Properties)
    /// The client updated its properties (`pw_core_update_properties`): the full new set.
    case clientChanged(ClientID, Properties)
    case clientRemoved(ClientID)
    /// A stream node appeared. `direction` is `output` for `Stream/Output/Audio`.
    case streamAdded(NodeID, client: ClientID, direction: StreamDirection, Properties)
    /// The stream's properties changed (`pw_stream_update_properties`): the full new set.
    case streamChanged(NodeID, Properties)
    /// The node's state became running (`true`) or left it (`false`): legacy activation (§1).
    case streamRunning(NodeID, Bool)
    /// The owner re-activated a node the policy had paused (R16).
    case streamActivationRequested(NodeID)
    /// The stream's program has paused itself after the policy paused the stream (an
    /// MPRIS player whose PlaybackStatus became Paused, reported by the MPRIS bridge):
    /// the policy lets go of its pause; the program's own start is a new activation (R16).
    case streamReleasedToProgram(NodeID)
    case streamRemoved(NodeID)
    /// A sink or source appeared, with its node and device properties merged, and its
    /// device's active route when the module has read it.
    case endpointAdded(NodeID, kind: EndpointKind, Properties, route: ActiveRoute? = nil)
    case endpointChanged(NodeID, Properties, route: ActiveRoute? = nil)
    /// The endpoint node is gone: for a private sink, a loss (R30).
    case endpointRemoved(NodeID)
    /// Jack unplug: the node stays, its device switched away from the headphone port (R30).
    case endpointPortLost(NodeID)
    /// Jack back: `newDeviceAvailable` (R32); no automatic resume (R31).
    case endpointPortRestored(NodeID, Properties, route: ActiveRoute? = nil)
    /// The source's mute (user or mic-mute key) changed (R19).
    case endpointMuteChanged(NodeID, muted: Bool)
    /// A link from an output node to an input node (stream -> sink, source -> capture stream).
    case linkAdded(LinkID, output: NodeID, input: NodeID)
    case linkRemoved(LinkID)
    /// The timer of `Effect.scheduleTimer(token:milliseconds:)` ran out.
    case timerFired(UInt64)
}

extension GraphEvent {
    /// The event as the policy takes it. `endpointKind` tells a known endpoint's kind
    /// (a changed endpoint's port type depends on it); a sink when unknown.
    public func translated(endpointKind: (NodeID) -> EndpointKind?) -> Event {
        switch self {
        case .clientAdded(let c, let p): return .clientAdded(c, ClientFacts(pipeWire: p))
        case .clientChanged(let c, let p): return .clientChanged(c, ClientFacts(pipeWire: p))
        case .clientRemoved(let c): return .clientRemoved(c)
        case .streamAdded(let n, let c, let d, let p): return .streamAdded(n, client: c, direction: d, StreamFacts(pipeWire: p))
        case .streamChanged(let n, let p): return .streamChanged(n, StreamFacts(pipeWire: p))
        case .streamRunning(let n, let r): return .streamRunning(n, r)
        case .streamActivationRequested(let n): return .streamActivationRequested(n)
        case .streamReleasedToProgram(let n): return .streamReleasedToProgram(n)
        case .streamRemoved(let n): return .streamRemoved(n)
        case .endpointAdded(let n, let k, let p, let r): return .endpointAdded(n, kind: k, EndpointFacts(pipeWire: p, kind: k, route: r))
        case .endpointChanged(let n, let p, let r):
            return .endpointChanged(n, EndpointFacts(pipeWire: p, kind: endpointKind(n) ?? .sink, route: r))
        case .endpointRemoved(let n): return .endpointRemoved(n)
        case .endpointPortLost(let n): return .endpointPortLost(n)
        case .endpointPortRestored(let n, let p, let r):
            return .endpointPortRestored(n, EndpointFacts(pipeWire: p, kind: endpointKind(n) ?? .sink, route: r))
        case .endpointMuteChanged(let n, let m): return .endpointMuteChanged(n, muted: m)
        case .linkAdded(let l, let o, let i): return .linkAdded(l, output: o, input: i)
        case .linkRemoved(let l): return .linkRemoved(l)
        case .timerFired(let t): return .timerFired(t)
        }
    }
}

/// What the module reports about the graph: the only input of the policy.
///
/// Time never arrives implicitly: the core has no clock. The module turns
/// `pw_context` / `pw_impl_node` / `pw_impl_device` listener callbacks into
/// these values, in the order it hears of them.
public enum Event: Sendable, Equatable {
    /// A client connected (`global_added` of a `pw_impl_client`).
    case clientAdded(ClientID, ClientFacts)
    /// The client updated its properties (`pw_core_update_properties`): the full new set.
    case clientChanged(ClientID, ClientFacts)
    case clientRemoved(ClientID)
    /// A stream node appeared. `direction` is `output` for `Stream/Output/Audio`.
    case streamAdded(NodeID, client: ClientID, direction: StreamDirection, StreamFacts)
    /// The stream's properties changed (`pw_stream_update_properties`): the full new set.
    case streamChanged(NodeID, StreamFacts)
    /// The node's state became running (`true`) or left it (`false`): legacy activation (§1).
    case streamRunning(NodeID, Bool)
    /// The owner re-activated a node the policy had paused (R16).
    case streamActivationRequested(NodeID)
    /// The stream's program has paused itself after the policy paused the stream (an
    /// MPRIS player whose PlaybackStatus became Paused, reported by the MPRIS bridge):
    /// the policy lets go of its pause; the program's own start is a new activation (R16).
    case streamReleasedToProgram(NodeID)
    case streamRemoved(NodeID)
    /// A sink or source appeared (its node and device properties read together).
    case endpointAdded(NodeID, kind: EndpointKind, EndpointFacts)
    case endpointChanged(NodeID, EndpointFacts)
    /// The endpoint node is gone: for a private sink, a loss (R30).
    case endpointRemoved(NodeID)
    /// Jack unplug: the node stays, its device switched away from the headphone port (R30).
    case endpointPortLost(NodeID)
    /// Jack back: `newDeviceAvailable` (R32); no automatic resume (R31).
    case endpointPortRestored(NodeID, EndpointFacts)
    /// The source's mute (user or mic-mute key) changed (R19).
    case endpointMuteChanged(NodeID, muted: Bool)
    /// A link from an output node to an input node (stream -> sink, source -> capture stream).
    case linkAdded(LinkID, output: NodeID, input: NodeID)
    case linkRemoved(LinkID)
    /// A client asks to set the global switches, silent mode and screen lock (R20): one
    /// event for one update of its own properties, whichever switches it sets. The policy
    /// decides whether the client may (`PolicyStep+Switches.swift`).
    case switchesRequested(ClientID, SwitchRequest)
    /// The timer of `Effect.scheduleTimer(token:milliseconds:)` ran out.
    case timerFired(UInt64)
}

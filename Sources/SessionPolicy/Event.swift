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
    /// The node was made active by someone other than the module (its owner: `pw_stream`,
    /// pipewire-pulse on uncork). The policy decides whether that is an activation request
    /// (R16): it is when the policy holds the stream paused, or when the module's pause
    /// still holds the node after the policy let go of it (`streamReleasedToProgram`).
    case streamActivatedByOwner(NodeID)
    /// The stream's program has paused itself after the policy paused the stream (an
    /// MPRIS player whose PlaybackStatus became Paused, reported by the MPRIS bridge):
    /// the policy lets go of its pause; the program's own start is a new activation (R16).
    case streamReleasedToProgram(NodeID)
    /// The fade to silence of `Effect.fade(node, gain: 0, …)` has reached the stream
    /// (R42): the policy pauses it now.
    case streamFadedOut(NodeID)
    /// The output stream the module listens to (`Effect.listen`) carried sound (R43): a
    /// program that captures a microphone while this plays is in a call.
    case streamHeard(NodeID)
    case streamRemoved(NodeID)
    /// A sink or source appeared (its node and device properties read together).
    case endpointAdded(NodeID, kind: EndpointKind, EndpointFacts)
    case endpointChanged(NodeID, EndpointFacts)
    /// The endpoint node is gone: for a private sink, a loss (R30).
    case endpointRemoved(NodeID)
    /// The routes of the endpoint's device were read (a jack went in or out, the user chose
    /// a port): the policy decides whether its port was lost (R30), chosen (R33) or is back
    /// (R32). Also before `endpointAdded`, when the routes were read before the node existed.
    case endpointRoutesRead(NodeID, RouteReading)
    /// The device's active profile was read (whenever its params change). For a Bluetooth
    /// headset whose sink just went, it tells a profile switch from a loss (R35).
    case deviceProfileRead(DeviceID, DeviceProfile)
    /// The device is gone (a Bluetooth headset disconnected or out of range).
    case deviceRemoved(DeviceID)
    /// The source's mute (user or mic-mute key) changed (R19).
    case endpointMuteChanged(NodeID, muted: Bool)
    /// A link from an output node to an input node (stream -> sink, source -> capture stream).
    case linkAdded(LinkID, output: NodeID, input: NodeID)
    case linkRemoved(LinkID)
    /// A client asks to set the global switches, silent mode and screen lock (R20): one
    /// event for one update of its own properties, whichever switches it sets. The policy
    /// decides whether the client may (`PolicyStep+Switches.swift`).
    case switchesRequested(ClientID, SwitchRequest)
    /// The MPRIS bridge's report on its own connection changed (docs/mpris.md).
    case playerReportChanged(ClientID, PlayerReport)
    /// The module is going away: the policy undoes its pauses (R41) and decides nothing after.
    case moduleUnloading
    /// The timer of `Effect.scheduleTimer(token:milliseconds:)` ran out.
    case timerFired(UInt64)
}

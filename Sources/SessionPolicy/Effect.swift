/// What the policy wants done: the only output of the core. The module runs
/// these in order.
public enum Effect: Sendable, Equatable {
    /// Stop scheduling the node: `pw_impl_node_set_active(node, false)`.
    /// The module reports `streamRunning(node, false)`, which confirms it.
    case pause(NodeID)
    /// Schedule it again: `pw_impl_node_set_active(node, true)`.
    case resume(NodeID)
    /// Ramp the policy's own gain on the node's `softVolumes` to `gain` over
    /// `rampMilliseconds`. The gain multiplies the user's channel volume; it
    /// never replaces it (WirePlumber saves volume, mute and channelVolumes, never softVolumes). `gain` 1 undoes the duck. The module
    /// steps the ramp (no step larger than 3 dB per cycle, §12).
    case duck(NodeID, gain: Float, rampMilliseconds: UInt32)
    /// R42: ramp the policy's own gain on the node (the same gain as `duck`) to `gain` over
    /// `milliseconds` with the interruption fade's shape: to silence (`gain` 0), or from
    /// where it is back to the duck gain. Steps stay audible-small while the audio is
    /// loud and go to silence once it is 42 dB down. A fade to silence is
    /// answered with `Event.streamFadedOut` once the stream has taken its last step.
    case fade(NodeID, gain: Float, milliseconds: UInt32)
    /// R43: start (`true`) or stop listening to an output stream's level. The module answers
    /// with `Event.streamHeard` once the stream carries sound (or at once when it cannot
    /// listen). It keeps nothing of what it hears but that.
    case listen(NodeID, Bool)
    /// Set (`true`) or clear the policy's `softMute` on the node (R20, R21).
    case silence(NodeID, Bool)
    /// Deliver a notification to a session, in order.
    case notify(SessionID, Notification)
    /// Publish a session's state in the `audio-session` metadata; `nil` removes it.
    case publishSession(SessionID, SessionSnapshot?)
    /// The session's published state may have changed (only with
    /// `PolicyConfiguration.makesPublishedStateWhenWritten`): what to write for it is what
    /// `SessionPolicy.settledSnapshot(_:)` returns when it is written (nil removes it).
    case sessionChanged(SessionID)
    /// Publish the global state (route, silent mode, `isOtherAudioPlaying`, hint).
    case publishGlobal(GlobalSnapshot)
    /// Call back with `Event.timerFired(token)` after `milliseconds` (a held resume, R7).
    case scheduleTimer(token: UInt64, milliseconds: UInt32)
    /// Publish the MPRIS player that governs a legacy stream (`audio-session.mpris` on the
    /// stream's subject); nil removes it.
    case publishPlayer(NodeID, player: String?)
    /// The client's MPRIS report is not accepted: only a client of the daemon's user that is
    /// not sandboxed may report players. For the module's log.
    case playerReportRefused(ClientID)
    /// The client set a global switch (R20) it had not asked for before. For the module's log.
    case switchSet(ClientID, GlobalSwitch, Bool)
    /// The client may not set the switch it asked for (R20): nothing changed. For the
    /// module's log.
    case switchRefused(ClientID, GlobalSwitch, reason: SwitchRefusal)
}

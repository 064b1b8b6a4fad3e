/// The policy's truth: the graph as the module reported it, and the policy's own records
/// of what it decided. Everything else the policy keeps (`PolicyIndex`) is derived from
/// this and can be rebuilt from it; `SessionPolicy.snapshot()` returns it and
/// `SessionPolicy(restoring:)` continues from it.
public struct PolicyModel: Sendable, Equatable {
    // The graph, as reported (with the policy's decisions on each stream: its pause, gains).
    public internal(set) var clients: [ClientID: ClientInfo] = [:]
    public internal(set) var streams: [NodeID: StreamInfo] = [:]
    public internal(set) var endpoints: [NodeID: EndpointInfo] = [:]
    public internal(set) var links: [LinkID: LinkInfo] = [:]
    /// Output streams of virtual sinks (see `RelayInfo`): not application streams.
    public internal(set) var relays: [NodeID: RelayInfo] = [:]
    public internal(set) var silentMode = false
    public internal(set) var screenLocked = false
    /// Capture streams that record a sink's monitor: observation, no session; nothing that
    /// happens to them reaches the rules.
    public internal(set) var monitors: Set<NodeID> = []
    /// Route readings of endpoints not added yet: their `endpointAdded` takes them.
    public internal(set) var earlyRoutes: [NodeID: RouteReading] = [:]
    /// The MPRIS bridge's reports accepted, by the client that made them.
    public internal(set) var playerReports: [ClientID: PlayerReport] = [:]
    /// The switches each client last asked for, granted or not: an unchanged request is
    /// not asked again.
    public internal(set) var switchRequests: [ClientID: SwitchRequest] = [:]
    /// Each device's active profile, as last read (devices whose profile was read).
    public internal(set) var devices: [DeviceID: DeviceProfile] = [:]

    // The policy's own records.
    /// Each session's activity, interruption and what it was told.
    public internal(set) var marks: [SessionID: SessionMarks] = [:]
    /// Interruptions and ducks whose cause went, held for the grace period (R7).
    var held: [UInt64: HeldEnd] = [:]
    /// Bluetooth headsets whose sink went while the device stayed: a profile switch until
    /// shown to be a loss (R35).
    public internal(set) var profileSwitches: [DeviceID: ProfileSwitch] = [:]
    var lastTimerToken: UInt64 = 0
    /// What was last published (so only changes are published).
    var published: [SessionID: SessionSnapshot] = [:]
    /// Sessions a decision touched since their published state was last made
    /// (`PolicyConfiguration.makesPublishedStateWhenWritten`): `published` may be behind
    /// for them.
    var unsettled: Set<SessionID> = []
    var lastGlobal: GlobalSnapshot?
    /// `audio-session.mpris` as published, by stream.
    public internal(set) var publishedPlayers: [NodeID: String] = [:]

    public init() {}
}

/// Apple's audio-session rules (R1…R41) as a pure state machine:
/// `(State, Event) -> (State, [Effect])`.
///
/// No clock, no I/O, no Foundation: the module hands in graph events and runs
/// the effects it gets back, in order. Nothing reachable from `handle` traps.
/// Output order is deterministic: whenever it depends on a collection, the
/// collection is walked in sorted order (`SessionID`, `NodeID`).
///
/// Choices where the brief left room (documented here once):
/// - A declared session whose stream starts running without `audio.session.active=true`
///   activates implicitly (iOS activates on play). It stays active until it sets
///   `audio.session.active=false` or goes away; a declared session never deactivates
///   because its streams stop.
/// - An implicit activation (or a legacy stream starting) that arbitration refuses is
///   held back: its streams are paused and it gets `interruptionBegan(.default)`, caused
///   by the session that blocked it, so it hears `ended` when that one leaves. An explicit
///   activation that is refused gets `activationResult(.failure)` instead.
/// - A session that reactivates on its own while interrupted (R16) is first told
///   `interruptionEnded(shouldResume: false)`, so began/ended always alternate.
/// - After `.pause(n)` / `.resume(n)` the core already counts the node as stopped /
///   running; the module's echo `streamRunning` is recognised and ignored.
/// - `streamActivationRequested(n)` that arbitration accepts is confirmed with `.resume(n)`;
///   refused, it is answered with `.pause(n)`.
public struct SessionPolicy: Sendable {
    public let configuration: PolicyConfiguration

    // The graph and the policy's own records (everything `snapshot()` returns).
    var clients: [ClientID: ClientInfo] = [:]
    var streams: [NodeID: StreamInfo] = [:]
    var endpoints: [NodeID: EndpointInfo] = [:]
    var links: [LinkID: LinkInfo] = [:]
    var relays: [NodeID: RelayInfo] = [:]
    var silentMode = false
    var screenLocked = false
    var marks: [SessionID: SessionMarks] = [:]

    // Indexes, derived from the above (rebuilt by `rebuildIndexes`).
    var streamsOfClient: [ClientID: NodeList] = [:]
    /// The client's streams whose own properties carry an `audio.session.*` key (the only
    /// ones that can declare, ask activation or ask to notify others), in node order.
    var declaringStreamsOfClient: [ClientID: NodeList] = [:]
    var linksOfNode: [NodeID: Set<LinkID>] = [:]
    /// The sinks with a `node.link-group`, by group, and the relay of each group.
    var sinksOfGroup: [String: Set<NodeID>] = [:]
    var relayOfGroup: [String: NodeID] = [:]
    /// Each stream's own route (the endpoints its links reach), kept up to date by every
    /// change of links, endpoints or streams (`refreshRoute(ofStream:)`): a session with one
    /// stream publishes it without walking links and endpoints again.
    var streamRoutes: [NodeID: Route] = [:]
    /// The endpoints of each stream's cached route, and for each client how many of its
    /// streams reach each endpoint: a session of many streams publishes its merged route
    /// from these counts, without walking every stream's links.
    var streamEndpoints: [NodeID: StreamEndpoints] = [:]
    var endpointsOfClient: [ClientID: EndpointCounts] = [:]
    /// For a client's session: the gain and silence every one of its output streams is at,
    /// as `refreshGains` last brought them there. Dropped when a stream joins the client or
    /// the session goes; while it holds, a session of many streams is neither re-walked for
    /// its gains nor for its published duckGain and silenced.
    var uniformGains: [ClientID: UniformGains] = [:]
    var declaredClients: Set<ClientID> = []
    var victimsOf: [InterruptionCause: Set<SessionID>] = [:]
    var active: Set<SessionID> = []
    var activeNonMixable: Set<SessionID> = []
    var activeCalls: Set<SessionID> = []
    var activeDuckers: Set<SessionID> = []
    var activeRecorders: Set<SessionID> = []
    var activeNoAlerts: Set<SessionID> = []
    var playing: Set<SessionID> = []
    var primary: Set<SessionID> = []
    /// Which of the sets above each session is in (one lookup decides what to change).
    var membership: [SessionID: Membership] = [:]
    /// Each session's traits as its properties make them, recomputed only when the
    /// properties, declarations or stream set of its client change (`refreshDerived(ofClient:)`).
    var derived: [SessionID: DerivedTraits] = [:]
    /// The keys read from each client's properties when they last came (`clientAdded`,
    /// `clientChanged`); a client without an entry has its properties read again.
    var clientKeys: [ClientID: ClientKeys] = [:]

    // What was last published (so only changes are published).
    var published: [SessionID: SessionSnapshot] = [:]
    var lastGlobal: GlobalSnapshot?
    var availableRoute: Route?

    // Scratch of the event being handled.
    var fx: [Effect] = []
    var touched: Set<SessionID> = []
    var refreshAll = false
    var hintDirty = false
    /// Interruptions and ducks whose cause went, held for the grace period (R7).
    var held: [UInt64: HeldEnd] = [:]
    var lastTimerToken: UInt64 = 0
    var justActivated: Set<SessionID> = []

    public init(configuration: PolicyConfiguration = PolicyConfiguration()) {
        self.configuration = configuration
    }

    /// Handles one event and returns the effects, in the order the module must run them.
    public mutating func handle(_ event: Event) -> [Effect] {
        // Effects are returned, so a new array each event (room for a typical decision); the
        // scratch sets keep their storage unless a fan-out made them large.
        fx = []
        fx.reserveCapacity(16)
        Self.clear(&touched)
        refreshAll = false
        hintDirty = false
        Self.clear(&justActivated)
        switch event {
        case .clientAdded(let c, let props): clientAdded(c, props)
        case .clientChanged(let c, let props): clientChanged(c, props)
        case .clientRemoved(let c): clientRemoved(c)
        case .streamAdded(let n, let c, let direction, let props): streamAdded(n, client: c, direction: direction, props)
        case .streamChanged(let n, let props): streamChanged(n, props)
        case .streamRunning(let n, let running): streamRunning(n, running)
        case .streamActivationRequested(let n): streamActivationRequested(n)
        case .streamReleasedToProgram(let n): streamReleasedToProgram(n)
        case .streamRemoved(let n): streamRemoved(n)
        case .endpointAdded(let e, let kind, let props): endpointAdded(e, kind: kind, props)
        case .endpointChanged(let e, let props): endpointChanged(e, props)
        case .endpointRemoved(let e): endpointRemoved(e)
        case .endpointPortLost(let e): endpointPortLost(e)
        case .endpointPortRestored(let e, let props): endpointPortRestored(e, props)
        case .endpointMuteChanged(let e, let muted): endpointMuteChanged(e, muted: muted)
        case .linkAdded(let l, let output, let input): linkAdded(l, output: output, input: input)
        case .linkRemoved(let l): linkRemoved(l)
        case .userRouteChoice(let n, let e): userRouteChoice(stream: n, endpoint: e)
        case .switchesRequested(let c, let request): switchesRequested(c, request)
        case .snapshot(let graph): rebuild(from: graph)
        case .timerFired(let token): heldEndExpired(token)
        }
        finish()
        let out = fx
        fx = []
        Self.clear(&touched)
        return out
    }

    /// The graph as the policy knows it, with the policy's own marks.
    /// `SessionPolicy(configuration:)` + `.snapshot(snapshot())` reaches the same state.
    /// Whether the policy tracks this stream node.
    public func hasStream(_ n: NodeID) -> Bool { streams[n] != nil }

    /// Whether the policy holds this stream paused (its `pausedByPolicy`).
    public func holdsPaused(_ n: NodeID) -> Bool { streams[n]?.pausedByPolicy == true }

    public func snapshot() -> GraphSnapshot {
        var policy = PolicyMarks()
        policy.sessions = marks
        return GraphSnapshot(
            clients: clients, streams: streams, endpoints: endpoints, links: links, relays: relays,
            silentMode: silentMode, screenLocked: screenLocked, policy: policy)
    }

    /// Every managed session and its current state (read access for tests and tools).
    public var sessions: [SessionID: SessionSnapshot] {
        var out: [SessionID: SessionSnapshot] = [:]
        for s in allSessions() {
            if let snap = sessionSnapshot(s) { out[s] = snap }
        }
        return out
    }

    /// The session stream `n` belongs to now (its client's when the client declares).
    public func session(ofStream n: NodeID) -> SessionID? { sessionOf(n) }

    /// Whether the endpoint is a sink or a source; nil for an unknown node.
    public func endpointKind(_ n: NodeID) -> EndpointKind? { endpoints[n]?.kind }

    /// The global state as it would be published now.
    public var global: GlobalSnapshot {
        var copy = self
        return copy.globalSnapshot()
    }

    /// What is published now, as the effects that publish it: the global state, then every
    /// session's, in session order. For a module whose metadata object was destroyed and
    /// created again: the new object starts empty and must carry the same state.
    public func publishedState() -> [Effect] {
        var out: [Effect] = [.publishGlobal(lastGlobal ?? global)]
        for s in published.keys.sorted() {
            if let snap = published[s] { out.append(.publishSession(s, snap)) }
        }
        return out
    }

    /// The end of every event: membership of the derived sets, gains, hints, publishing.
    mutating func finish() {
        for s in touched { updateMembership(s) }
        // A sorted array, not a copy of `touched`: `refreshGains` inserts into `touched`, and a
        // copy still alive would make that insert duplicate the whole set.
        let targets = refreshAll ? touched.union(active).sorted() : touched.sorted()
        for s in targets { refreshGains(s) }
        refreshHints()
        for s in touched.sorted() { publish(s) }
        let g = globalSnapshot()
        if g != lastGlobal {
            lastGlobal = g
            fx.append(.publishGlobal(g))
        }
    }

    static func clear(_ set: inout Set<SessionID>) {
        if set.capacity > 64 { set = [] } else { set.removeAll(keepingCapacity: true) }
    }

    /// Changes a value in place (e.g. `edit(&marks[s, default: SessionMarks()]) { ... }`:
    /// one lookup, and no copy of the mark to write back).
    static func edit<Value>(_ value: inout Value, _ body: (inout Value) -> Void) { body(&value) }

    mutating func emit(_ e: Effect) { fx.append(e) }
    mutating func notify(_ s: SessionID, _ n: Notification) { fx.append(.notify(s, n)) }
}

import FoundationEssentials
import Synchronization

/// `AVAudioSession.SetActiveOptions`.
public struct SetActiveOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Ends the interruptions this session caused with shouldResume (R7).
    public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
}

/// `AVAudioSession.PortOverride`.
public enum PortOverride: String, Sendable {
    case none, speaker
}

/// The audio session of this process: `AVAudioSession` for PipeWire.
///
/// A session is one PipeWire connection (a `pw_core` on a `pw_thread_loop`
/// the library owns). Its declaration (category, mode, options, the two
/// preferences) is published as client properties with
/// `pw_core_update_properties`; the policy module answers in the
/// `audio-session` metadata, which the library reads.
///
/// Streams made with ``AudioOutput`` use the same connection and belong to
/// the session. Programs with their own `pw_stream`, GStreamer or libpulse
/// declare with stream properties instead (docs/cli.md, "Joining a session").
public final class AudioSession: Sendable {
    public struct Configuration: Sendable {
        /// `application.name` of the connection (default: PipeWire's, from the program name).
        public var applicationName: String?
        /// How long `setActive` waits for the policy's answer (and for the policy to appear).
        public var activationTimeout: Duration
        /// How often the library tries to reconnect after PipeWire went away (R40).
        public var reconnectInterval: Duration
        /// Publish a declaration (false: only observe the policy, as `pw-session status` does).
        public var declares: Bool
        public init(applicationName: String? = nil, activationTimeout: Duration = .seconds(3),
                    reconnectInterval: Duration = .milliseconds(250), declares: Bool = true) {
            self.applicationName = applicationName
            self.activationTimeout = activationTimeout
            self.reconnectInterval = reconnectInterval
            self.declares = declares
        }
    }

    /// `AVAudioSession.sharedInstance()`.
    public static let shared = AudioSession()

    public let configuration: Configuration
    let connection: PipeWireConnection?
    let state: Mutex<SessionClientState>

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        connection = try? PipeWireConnection(name: "audio-session")
        state = Mutex(SessionClientState())
        if !connect() { scheduleReconnect() }
    }

    deinit {
        // On the PipeWire thread (the application let go of the session in a notification
        // handler) the connection is not torn down here, under libpipewire's dispatch of
        // its own events: the connection's deinit, which follows, does it on another thread.
        if let c = connection, !c.isLoopThread { c.disconnect() }
        state.withLock { s in
            s.closed = true
            for sub in s.subscribers.values { sub.finish() }
            for sub in s.eventSubscribers.values { sub.finish() }
        }
    }

    // MARK: Category and mode

    /// `AVAudioSession.category`.
    public var category: Category { state.withLock { $0.declaration.category } }
    /// `AVAudioSession.mode`.
    public var mode: Mode { state.withLock { $0.declaration.mode } }
    /// `AVAudioSession.categoryOptions` (as declared).
    public var categoryOptions: CategoryOptions { state.withLock { $0.declaration.options } }
    /// `AVAudioSession.availableCategories`.
    public var availableCategories: [Category] { Category.allCases }
    /// `AVAudioSession.availableModes`: the modes valid for the current category (§3).
    public var availableModes: [Mode] {
        let c = category
        return Mode.allCases.filter { $0.acceptedCategories.contains(c) && !($0 == .voicePrompt && c == .playAndRecord) }
    }

    /// `AVAudioSession.setCategory(_:mode:options:)`. An invalid combination
    /// throws `incompatibleCategory` (§3, 4) and nothing is sent.
    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = []) throws(SessionError) {
        try declare { d in
            d.category = category
            d.mode = mode
            d.options = options
        }
    }

    /// `AVAudioSession.setMode(_:)`.
    public func setMode(_ mode: Mode) throws(SessionError) {
        try declare { $0.mode = mode }
    }

    /// `AVAudioSession.setPrefersNoInterruptionsFromSystemAlerts(_:)` (R17).
    public func setPrefersNoInterruptionsFromSystemAlerts(_ value: Bool) throws(SessionError) {
        try declare { $0.prefersNoInterruptionsFromSystemAlerts = value }
    }

    /// `AVAudioSession.setPrefersInterruptionOnRouteDisconnect(_:)` (R31).
    public func setPrefersInterruptionOnRouteDisconnect(_ value: Bool) throws(SessionError) {
        try declare { $0.prefersInterruptionOnRouteDisconnect = value }
    }

    public var prefersNoInterruptionsFromSystemAlerts: Bool { state.withLock { $0.declaration.prefersNoInterruptionsFromSystemAlerts } }
    public var prefersInterruptionOnRouteDisconnect: Bool { state.withLock { $0.declaration.prefersInterruptionOnRouteDisconnect } }

    private func declare(_ change: (inout Declaration) -> Void) throws(SessionError) {
        var d = state.withLock { $0.declaration }
        change(&d)
        if let e = d.validate() { throw e }
        let props = state.withLock { s -> [String: String] in
            s.declaration = d
            s.declared = true
            return s.clientProperties()
        }
        connection?.updateClientProperties(props)
    }

    // MARK: Activation

    /// `AVAudioSession.setActive(_:options:)`.
    ///
    /// Publishes `audio.session.active` and waits for the policy's `activation`
    /// answer for this session. Throws `insufficientPriority` or
    /// `cannotInterruptOthers` (R6), `mediaServicesFailed` when no policy
    /// answers within `configuration.activationTimeout`, `badParam` on a bad
    /// declaration. Returns `.isBusy` when deactivating with running streams (R8).
    @discardableResult
    public func setActive(_ active: Bool, options: SetActiveOptions = []) async throws(SessionError) -> ActivationWarning? {
        let deadline = ContinuousClock.now + configuration.activationTimeout
        // The policy must be there: connected, our client id known, its metadata bound.
        while !state.withLock({ $0.isReady }) {
            if ContinuousClock.now >= deadline {
                throw SessionError(code: .mediaServicesFailed,
                                   message: "no audio-session policy reachable (is PipeWire running with libpipewire-module-audio-session?)")
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let notify = options.contains(.notifyOthersOnDeactivation)
        let alreadyThere = state.withLock { s -> Bool in
            s.declared = true
            s.notifyOnDeactivation = notify
            // Already requested and the policy agrees: nothing to ask.
            return s.requestedActive == active && (s.session?.active ?? false) == active
        }
        if alreadyThere { return nil }

        let id = state.withLock { s -> UInt64 in s.nextWaiter &+= 1; return s.nextWaiter }
        let timeout = configuration.activationTimeout
        let result: Result<ActivationWarning?, SessionError> = await withCheckedContinuation { cont in
            let props: [String: String] = state.withLock { s in
                s.waiters.append(ActivationWaiter(id: id, continuation: cont))
                s.requestedActive = active
                s.activationRequests &+= 1
                return s.clientProperties()
            }
            connection?.updateClientProperties(props)
            Task.detached { [weak self] in
                try? await Task.sleep(for: timeout)
                self?.expireWaiter(id)
            }
        }
        switch result {
        case .success(let w): return w
        case .failure(let e): throw e
        }
    }

    private func expireWaiter(_ id: UInt64) {
        let w = state.withLock { s -> ActivationWaiter? in
            guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: i)
        }
        w?.continuation.resume(returning: .failure(SessionError(
            code: .mediaServicesFailed, message: "the audio-session policy did not answer within \(configuration.activationTimeout)")))
    }

    /// Whether the policy reports this session active.
    public var isActive: Bool { state.withLock { $0.session?.active ?? false } }
    /// Whether the policy reports this session interrupted.
    public var isInterrupted: Bool { state.withLock { $0.session?.interrupted ?? false } }

    // MARK: Route and hints

    /// `AVAudioSession.currentRoute`: where this session's streams go, or the
    /// system's current route when it has none.
    public var currentRoute: Route {
        state.withLock { s in
            if let r = s.session?.route, !(r.inputs.isEmpty && r.outputs.isEmpty) { return r.route }
            return s.global?.currentRoute.route ?? .empty
        }
    }

    /// `AVAudioSession.isOtherAudioPlaying` (R22): another session plays output.
    public var isOtherAudioPlaying: Bool {
        state.withLock { s in
            guard let g = s.global else { return false }
            let mine = (s.session?.playing ?? false) ? 1 : 0
            return g.playingSessions - mine > 0
        }
    }

    /// `AVAudioSession.secondaryAudioShouldBeSilencedHint` (R22).
    public var secondaryAudioShouldBeSilencedHint: Bool {
        state.withLock { s in
            s.session?.secondaryAudioShouldBeSilencedHint ?? s.global?.secondaryAudioShouldBeSilencedHint ?? false
        }
    }

    /// The policy's published state of this session (nil before it has one).
    public var policyState: SessionState? { state.withLock { $0.session } }

    /// This connection's PipeWire client id (the session's id in the metadata).
    public var clientID: UInt32? { state.withLock { $0.clientID } }

    /// `AVAudioSession.overrideOutputAudioPort(_:)`: `.speaker` moves this
    /// session's output streams to the built-in speaker (`target.object` in
    /// the `default` metadata, which the session manager follows); `.none`
    /// gives them back to the session manager's choice. A declared session
    /// also tells the policy (`audio.session.output-override`), which answers
    /// with `routeChange(.override)` (R33).
    public func overrideOutputAudioPort(_ port: PortOverride) throws(SessionError) {
        let (target, streams, props) = try state.withLock { s throws(SessionError) -> (String?, [UInt32], [String: String]?) in
            let speaker = s.endpoints(sink: true).first { $0.port.type == .builtInSpeaker }?.port.uid
            if port == .speaker && speaker == nil {
                // Refused: the previous override stays.
                throw SessionError(code: .badParam, message: "There is no built-in speaker to send the output to. [R34]")
            }
            s.outputOverride = port
            let target = port == .speaker ? speaker : nil
            let changed = s.outputOverrideTarget != target || !s.outputOverrideUsed
            s.outputOverrideTarget = target
            s.outputOverrideUsed = true
            return (target, s.ownStreams(direction: "Output"), s.declared && changed ? s.clientProperties() : nil)
        }
        // The policy hears of the override first, so that the route it reports as previous
        // is the one before the session manager moves the streams.
        if let props { connection?.updateClientProperties(props) }
        for n in streams { connection?.setMetadata("default", subject: n, key: "target.object", type: nil, value: target) }
    }

    /// `AVAudioSession.setPreferredInput(_:)`: moves this session's capture
    /// streams to `port` (nil: the session manager's choice).
    public func setPreferredInput(_ port: SessionPort?) throws(SessionError) {
        let streams = try state.withLock { s throws(SessionError) -> [UInt32] in
            if let port, !s.endpoints(sink: false).contains(where: { $0.port.uid == port.uid }) {
                // Refused: the previous preference stays.
                throw SessionError(code: .badParam, message: "There is no input named \(port.uid): pick one of availableInputs. [§8]")
            }
            s.preferredInput = port
            return s.ownStreams(direction: "Input")
        }
        for n in streams { connection?.setMetadata("default", subject: n, key: "target.object", type: nil, value: port?.uid) }
    }

    /// `AVAudioSession.preferredInput`.
    public var preferredInput: SessionPort? { state.withLock { $0.preferredInput } }
    /// `AVAudioSession.availableInputs`: the sources of the graph.
    public var availableInputs: [SessionPort] { state.withLock { $0.endpoints(sink: false).map(\.port) } }

    // MARK: Global switches (pw-session silent|lock)

    /// Sets silent mode (the ring/silent switch, R20) through this connection's
    /// `audio.session.control.silent-mode` property. Not permitted to sandboxed clients.
    public func setSilentMode(_ on: Bool) {
        let p = state.withLock { s -> [String: String] in
            s.control["audio.session.control.silent-mode"] = on ? "true" : "false"
            return s.clientProperties()
        }
        connection?.updateClientProperties(p)
    }

    /// Sets the screen lock (R20) through `audio.session.control.screen-lock`.
    public func setScreenLocked(_ on: Bool) {
        let p = state.withLock { s -> [String: String] in
            s.control["audio.session.control.screen-lock"] = on ? "true" : "false"
            return s.clientProperties()
        }
        connection?.updateClientProperties(p)
    }

    /// The MPRIS bridge's reports (`pw-session mpris-bridge`, docs/mpris.md), as this
    /// connection's `audio.session.control.mpris` (stream -> player it governs) and
    /// `audio.session.control.mpris-released` (streams whose player paused itself after
    /// the bridge paused it). The policy accepts them from a client of its own user
    /// that is not sandboxed.
    public func reportMPRISPlayers(governed: [UInt32: String], released: Set<UInt32>) {
        let p = state.withLock { s -> [String: String] in
            s.control[DeclarationKey.mprisGoverned] = governed.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            s.control[DeclarationKey.mprisReleased] = released.sorted().map(String.init).joined(separator: " ")
            return s.clientProperties()
        }
        connection?.updateClientProperties(p)
    }

    // MARK: Policy observation (pw-session status|monitor)

    /// Everything the policy publishes, as last seen.
    public var policySnapshot: PolicySnapshot {
        state.withLock { s in
            PolicySnapshot(global: s.global, sessions: s.sessions.values.sorted { $0.session.id < $1.session.id },
                           nodes: s.nodes, clients: s.clients, players: s.players)
        }
    }

    /// The full properties of node `id` (a stream's `application.process.id`, which the
    /// registry does not carry), nil when it does not answer within `timeout` (gone, or no
    /// connection).
    public func nodeProperties(_ id: UInt32, timeout: Duration = .seconds(2)) async -> [String: String]? {
        guard let connection else { return nil }
        struct Pending {
            var continuation: CheckedContinuation<[String: String]?, Never>?
            var query: NodeQuery?
            var answered = false
        }
        let pending = Mutex(Pending())
        // Called once with the answer, by the node's info (on the PipeWire thread, lock held)
        // or by the timeout; the query is freed after, off that thread.
        let resume: @Sendable ([String: String]?) -> Void = { props in
            let (c, q) = pending.withLock { p -> (CheckedContinuation<[String: String]?, Never>?, NodeQuery?) in
                guard !p.answered else { return (nil, nil) }
                p.answered = true
                defer { p.continuation = nil; p.query = nil }
                return (p.continuation, p.query)
            }
            c?.resume(returning: props)
            if let q { Task.detached { connection.finish(q) } }
        }
        return await withCheckedContinuation { c in
            pending.withLock { $0.continuation = c }
            let query = connection.queryNode(id, resume)
            let answered = pending.withLock { p -> Bool in
                if !p.answered { p.query = query }
                return p.answered
            }
            if answered, let query { Task.detached { connection.finish(query) } }
            Task.detached {
                try? await Task.sleep(for: timeout)
                resume(nil)
            }
        }
    }

    /// Whether the `audio-session` metadata has been read completely (after connecting).
    public var isPolicyReachable: Bool { state.withLock { $0.policyPresent && $0.replayDone } }

    /// Waits until the policy's metadata is read (true) or the deadline passes (false).
    public func waitForPolicy(timeout: Duration? = nil) async -> Bool {
        let deadline = ContinuousClock.now + (timeout ?? configuration.activationTimeout)
        while !isPolicyReachable {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}

/// What `pw-session status` shows.
public struct PolicySnapshot: Sendable {
    public var global: GlobalState?
    public var sessions: [SessionState]
    /// Node globals by id, with their registry properties.
    public var nodes: [UInt32: [String: String]]
    /// Client globals by id, with their registry properties (`pipewire.sec.pid` …).
    public var clients: [UInt32: [String: String]] = [:]
    /// Legacy streams governed through MPRIS (`audio-session.mpris`): node id -> bus name.
    public var players: [UInt32: String] = [:]
}

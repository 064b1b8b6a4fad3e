/// Apple's audio-session rules (R1…R41), and what the graph's facts mean (F1…F7), as a
/// pure state machine: `(State, Event) -> (State, [Effect])`. Every decision the module
/// carries out is made here.
///
/// No clock, no I/O, no Foundation: the module hands in graph events and runs
/// the effects it gets back, in order. Nothing reachable from `handle` traps.
/// Output order is deterministic: whenever it depends on a collection, the
/// collection is walked in sorted order (`SessionID`, `NodeID`).
///
/// The state is in parts, each in its own file:
/// - the model (`PolicyModel`): the truth, the graph as reported and the policy's own
///   records; what `snapshot()` returns;
/// - the index (`PolicyIndex`): everything derived from the model to keep one decision
///   cheap;
/// - the state (`PolicyState`): the model and the index, changed only through its
///   mutators, which keep the index equal to a rebuild from the model;
/// - the step (`PolicyStep`): the state and one event being decided, with its effects
///   and scratch, which `handle` leaves empty. The rules (`PolicyStep+*.swift`) are written on it.
///
/// Choices where the rules left room (documented here once):
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
/// - A pause or resume is a decision (`StreamInfo.pausedByPolicy`); whether the node runs
///   is a fact (`StreamInfo.running`) that only the module's report changes. The module's
///   report of a node the policy paused stopping, or of one it resumed starting, is the
///   confirmation of that decision, not a new event for the rules.
/// - An owner's activation that is a request (F3) and that arbitration accepts is
///   confirmed with `.resume(n)`; refused, it is answered with `.pause(n)`.
public struct SessionPolicy: Sendable {
    public var configuration: PolicyConfiguration { _read { yield state.configuration } }
    /// The step that decides every event, with the model (the truth: the graph and the
    /// policy's own records) and its index in its state. It lives as long as the policy,
    /// and each event starts it from empty scratch (`PolicyStep.endEvent`): no state is
    /// moved, no scratch set allocated, for an event.
    var step: PolicyStep
    var state: PolicyState {
        _read { yield step.state }
        _modify { yield &step.state }
    }
    var model: PolicyModel { _read { yield state.model } }

    public init(configuration: PolicyConfiguration = PolicyConfiguration()) {
        step = PolicyStep(state: PolicyState(configuration: configuration))
    }

    /// A policy that continues from `model` (as `snapshot()` returned it): the index is
    /// rebuilt from it, and the next event is decided as the original policy would.
    public init(configuration: PolicyConfiguration = PolicyConfiguration(), restoring model: PolicyModel) {
        step = PolicyStep(state: PolicyState(configuration: configuration, model: model))
    }

    /// Handles one event and returns the effects, in the order the module must run them.
    public mutating func handle(_ event: Event) -> [Effect] {
        var out: [Effect] = []
        handle(event, into: &out)
        return out
    }

    /// Handles one event; `effects` is emptied and then holds the effects, in the order the
    /// module must run them. The array's storage goes back and forth between the caller and
    /// the policy, so that a caller who passes the same array each time allocates none.
    public mutating func handle(_ event: Event, into effects: inout [Effect]) {
        effects.removeAll(keepingCapacity: true)
        if decide(event) { step.endEvent(into: &effects) }
    }

    /// Decides a stream's stop and its removal in one step, as the daemon reports them when
    /// it destroys a running node (it stops the node first): the stop's rules, then the
    /// removal's, and the state they leave settled once. `effects` is emptied and then holds
    /// what deciding `.streamRunning(n, false)` and then `.streamRemoved(n)` would have,
    /// except what the state between the two would have set and the removal undone (a
    /// publication, a gain).
    public mutating func handleStopAndRemoval(of n: NodeID, into effects: inout [Effect]) {
        effects.removeAll(keepingCapacity: true)
        if decide(.streamRunning(n, false), then: .streamRemoved(n)) { step.endEvent(into: &effects) }
    }

    /// Decides a new stream and its first link in one step, as the module hands them over
    /// when the stream's first link is the next thing that happens to the graph (a stream
    /// carries no sound before it is linked): the addition's rules, the owner's activation
    /// when it came in between (`activated`), then the link's, and the state they leave
    /// settled once. `effects` is emptied and then holds what deciding the events one after
    /// the other would have, except what the state between them would have set and the
    /// next one undone (a publication, a gain).
    public mutating func handleAddAndLink(_ add: Event, activated: Bool, link: Event, into effects: inout [Effect]) {
        effects.removeAll(keepingCapacity: true)
        var activation: Event?
        if activated, case .streamAdded(let n, _, _, _) = add { activation = .streamActivatedByOwner(n) }
        if decide(add, then: activation, then: link) { step.endEvent(into: &effects) }
    }

    /// Decides `events`, in order, in one step, settling the state once: as the module hands
    /// them over when they waited for one another in a quiet graph (a start and a removal
    /// that may wait, `startMayWaitInPlace` and `removalMayWaitInPlace`, then a new stream, its
    /// owner's activation and its first link). `effects` is emptied and then holds what
    /// deciding the events one after the other would have, except what the state between
    /// them would have set and the next one undone (a publication, a gain).
    public mutating func handleInOneStep(_ events: [Event], into effects: inout [Effect]) {
        effects.removeAll(keepingCapacity: true)
        if decide(all: events) { step.endEvent(into: &effects) }
    }

    /// Decides one event into the step's effects; false when it is answered with nothing.
    mutating func decide(_ event: Event) -> Bool {
        // Most events of a busy graph change nothing the rules read: answered here, without
        // a step (a program starting its own stream reports its activation before it runs).
        if asksNothing(event) { return false }
        return decide(event, then: nil)
    }

    /// Decides `event`, and `next` and `last` after it in the same step, settling the state once.
    mutating func decide(_ event: Event, then next: Event?, then last: Event? = nil) -> Bool {
        step.privateOutputBefore = !step.index.privateOutputs.isEmpty
        var finishes = apply(event)
        if let next { finishes = apply(next) && finishes }
        if let last { finishes = apply(last) && finishes }
        settle(finishes)
        return true
    }

    /// Decides `events`, in order, in one step, settling the state once.
    mutating func decide(all events: [Event]) -> Bool {
        step.privateOutputBefore = !step.index.privateOutputs.isEmpty
        var finishes = true
        for e in events { finishes = apply(e) && finishes }
        settle(finishes)
        return true
    }

    /// Settles what the step's events left (unless the module is unloading: `finishes` false).
    mutating func settle(_ finishes: Bool) {
        if finishes {
            // R43: a call the graph made in this event may pause another program's capture;
            // that program's outputs are then reviewed, and its own call may end. Each round
            // settles what the last one changed; the bound keeps it finite whatever happens.
            var rounds = 0
            repeat {
                step.reviewListening()
                step.applyProgramChanges()
                rounds += 1
            } while rounds < 4 && step.state.hasProgramWork
            step.state.dropProgramWork()
            step.finish()
        }
    }

    /// Applies one event's rules to the step; false when nothing is to be settled after
    /// it (the module is unloading).
    mutating func apply(_ event: Event) -> Bool {
        // The event goes to its rule (`PolicyStep+*.swift`); what reaches the rules is
        // admitted here: a declaration within its limits (DeclarationLimits), a client's
        // identity as it connected, nothing of a monitor recorder.
        var finishes = true
        switch event {
        case .clientAdded(let c, let facts):
            var f = facts
            let refusal = step.keepWithinLimits(&f.declaration, previous: step.model.clients[c]?.facts.declaration)
            step.clientAdded(c, f)
            if let refusal { step.notify(.client(c), .declarationRefused(refusal)) }
            if let report = facts.playerReport { step.playerReportChanged(c, report) }
        case .clientChanged(let c, let facts):
            var f = facts
            let refusal = step.keepWithinLimits(&f.declaration, previous: step.model.clients[c]?.facts.declaration)
            // Who a client is was established when it connected; a property change cannot
            // change it, and a report is read from the client's own writing only.
            if let known = step.model.clients[c] { f.identity = known.facts.identity }
            f.playerReport = nil
            step.clientChanged(c, f)
            if let refusal { step.notify(.client(c), .declarationRefused(refusal)) }
        case .clientRemoved(let c): step.clientRemoved(c)
        case .streamAdded(let n, let c, let direction, let facts):
            if direction == .input && facts.recordsMonitor {
                step.monitorAdded(n)
                break
            }
            step.state.setMonitor(n, false)
            var f = facts
            let refusal = step.keepWithinLimits(&f.declaration, previous: step.model.streams[n]?.facts.declaration)
            step.streamAdded(n, client: c, direction: direction, f)
            if let refusal { step.notify(step.sessionOf(n) ?? .stream(n), .declarationRefused(refusal)) }
        case .streamChanged(let n, let facts):
            guard !step.model.monitors.contains(n) else { break }
            var f = facts
            let refusal = step.keepWithinLimits(&f.declaration, previous: step.model.streams[n]?.facts.declaration)
            step.streamChanged(n, f)
            if let refusal { step.notify(step.sessionOf(n) ?? .stream(n), .declarationRefused(refusal)) }
        case .streamRunning(let n, let running): step.streamRunning(n, running)
        case .streamActivatedByOwner(let n): step.streamActivatedByOwner(n)
        case .streamReleasedToProgram(let n): step.streamReleasedToProgram(n)
        case .streamFadedOut(let n): step.streamFadedOut(n)
        case .streamHeard(let n): step.streamHeard(n)
        case .streamRemoved(let n):
            if step.state.setMonitor(n, false) { break }
            step.streamRemoved(n)
            if step.model.publishedPlayers[n] != nil { step.refreshPlayers() }
        case .endpointAdded(let e, let kind, let facts): step.endpointAdded(e, kind: kind, facts)
        case .endpointChanged(let e, let facts): step.endpointChanged(e, facts)
        case .endpointRemoved(let e): step.endpointRemoved(e)
        case .endpointRoutesRead(let e, let reading): step.routesRead(e, reading)
        case .endpointMuteChanged(let e, let muted): step.endpointMuteChanged(e, muted: muted)
        case .linkAdded(let l, let output, let input): step.linkAdded(l, output: output, input: input)
        case .linkRemoved(let l): step.linkRemoved(l)
        case .switchesRequested(let c, let request): step.switchesRequested(c, request)
        case .playerReportChanged(let c, let report): step.playerReportChanged(c, report)
        case .moduleUnloading:
            // Nothing is decided after this: no membership, gains or publishing.
            step.moduleUnloading()
            finishes = false
        case .deviceProfileRead(let d, let profile): step.deviceProfileRead(d, profile)
        case .deviceRemoved(let d): step.deviceRemoved(d)
        case .timerFired(let token):
            if !step.profileSwitchWindowEnded(token) { step.heldEndExpired(token) }
        }
        return finishes
    }

    /// Whether deciding `event` now would change nothing and emit nothing: an owner's
    /// activation of a stream the policy does not hold (most of a busy graph's), and the
    /// removal of a link the policy does not know (a removed stream's links leave the
    /// policy with it, before the daemon removes them: one for every stream that goes).
    /// The module skips such an event when nothing else waits to be decided before it.
    public func asksNothing(_ event: Event) -> Bool {
        switch event {
        case .streamActivatedByOwner(let n): return !PolicyStep.activationIsRequest(n, model)
        case .linkRemoved(let l): return model.links[l] == nil
        default: return false
        }
    }

    /// Whether deciding stream `n`'s removal (and its stop) a little later, together with
    /// what follows it, changes nothing another program waits for: the graph is quiet, with
    /// no interruption, duck, call, recording, listening, primary or non-mixable session, no
    /// end held for its grace period and no profile switch; and the stream itself is neither
    /// paused, faded, switched nor cut off by the policy. A stream that leaves such a graph
    /// only changes what is published, and the module may then decide its removal with the
    /// next stream's arrival (`handleInOneStep`). Read in place.
    public mutating func removalMayWaitInPlace(_ n: NodeID) -> Bool {
        state.removalMayWaitInPlace(n)
    }

    /// Whether deciding stream `n`'s start a little later, together with what follows it,
    /// changes nothing another program waits for: the graph is quiet (as for
    /// `removalMayWaitInPlace`), and the stream's session would become active beside the
    /// others without interrupting, ducking or silencing any (a mixable session of normal
    /// priority, no alert, no call), with silent mode off and the screen unlocked (either
    /// silences an ambient stream as it starts). Such a start only changes what is published.
    /// Read in place.
    public mutating func startMayWaitInPlace(_ n: NodeID) -> Bool {
        state.startMayWaitInPlace(n)
    }

    /// `startMayWaitInPlace(_:)` for a reader that holds the policy in a constant.
    public func startMayWait(_ n: NodeID) -> Bool {
        var copy = state
        return copy.startMayWaitInPlace(n)
    }

    /// `removalMayWaitInPlace(_:)` for a reader that holds the policy in a constant.
    public func removalMayWait(_ n: NodeID) -> Bool {
        var copy = state
        return copy.removalMayWaitInPlace(n)
    }

    /// The nodes link `l` joins, as the policy knows it (nil: it does not know the link).
    public mutating func linkInPlace(_ l: LinkID) -> LinkInfo? {
        guard let i = state.model.links.index(forKey: l) else { return nil }
        return state.model.links.values[i]
    }

    /// `asksNothing(_:)` for a caller that keeps the policy in a class's stored property:
    /// asked through a mutating call, the policy is read where it lies; a non-mutating call
    /// on such a property copies the whole policy first (it changes nothing).
    public mutating func asksNothingInPlace(_ event: Event) -> Bool {
        switch event {
        case .streamActivatedByOwner(let n): return !state.activationIsRequestInPlace(n)
        case .linkRemoved(let l): return state.model.links.index(forKey: l) == nil
        default: return false
        }
    }

    /// A step over the current state that only reads (its copies share storage).
    var reader: PolicyStep { step }

    /// The model: the graph as the policy knows it, with the policy's own records.
    /// `SessionPolicy(restoring: snapshot())` continues exactly from here.
    public func snapshot() -> PolicyModel { model }

    /// Whether the policy tracks this stream node.
    public func hasStream(_ n: NodeID) -> Bool { model.streams[n] != nil }

    /// Whether the policy holds this stream paused (its `pausedByPolicy`).
    public func holdsPaused(_ n: NodeID) -> Bool { model.streams[n]?.pausedByPolicy == true }

    /// How many sessions have their state published now.
    public var publishedSessionCount: Int { model.published.count }

    /// How many per-object records the policy keeps beyond the graph itself (monitor
    /// recorders, early route reads, MPRIS reports and the players published, switch
    /// requests): 0 once every object is gone.
    public var recordCount: Int {
        model.monitors.count + model.earlyRoutes.count + model.playerReports.count + model.publishedPlayers.count
            + model.switchRequests.count + model.devices.count + model.profileSwitches.count
    }

    /// Every managed session and its current state (read access for tests and tools).
    public var sessions: [SessionID: SessionSnapshot] {
        let r = reader
        var out: [SessionID: SessionSnapshot] = [:]
        for s in r.allSessions() {
            if let snap = r.sessionSnapshot(s) { out[s] = snap }
        }
        return out
    }

    /// The session stream `n` belongs to now (its client's when the client declares).
    public func session(ofStream n: NodeID) -> SessionID? { reader.sessionOf(n) }

    /// Whether the endpoint is a sink or a source; nil for an unknown node.
    public func endpointKind(_ n: NodeID) -> EndpointKind? { model.endpoints[n]?.kind }

    /// The global state as it would be published now.
    public var global: GlobalSnapshot {
        reader.globalSnapshot()
    }

    /// What the policy last published for the session: nil when nothing is, or the
    /// session's state was removed.
    public func publishedSnapshot(_ s: SessionID) -> SessionSnapshot? { model.published[s] }

    /// The session's state to write now: made when a decision touched the session since
    /// it was last made (`PolicyConfiguration.makesPublishedStateWhenWritten`), and kept
    /// as published; else what was published. Nil: the session publishes nothing.
    public mutating func settledSnapshot(_ s: SessionID) -> SessionSnapshot? {
        state.settle(s)
    }

    /// How many sessions' published states are to be made when they are written.
    public var unsettledSessionCount: Int { model.unsettled.count }

    /// The global state the policy last published (nil before its first decision).
    public var publishedGlobal: GlobalSnapshot? { model.lastGlobal }

    /// The player the policy last published for the stream (nil: none).
    public func publishedPlayer(_ n: NodeID) -> String? { model.publishedPlayers[n] }

    /// What is published now, as the effects that publish it: the global state, then every
    /// session's, in session order. For a module whose metadata object was destroyed and
    /// created again: the new object starts empty and must carry the same state. Every
    /// session's state is made first where a decision touched it since.
    public mutating func publishedState() -> [Effect] {
        for s in model.unsettled.sorted() { _ = state.settle(s) }
        var out: [Effect] = [.publishGlobal(model.lastGlobal ?? global)]
        for s in model.published.keys.sorted() {
            if let snap = model.published[s] { out.append(.publishSession(s, snap)) }
        }
        return out
    }

    /// Whether the index agrees with one rebuilt from the model (tests).
    func indexIsConsistent() -> Bool {
        state.agreesWithRebuild()
    }
}

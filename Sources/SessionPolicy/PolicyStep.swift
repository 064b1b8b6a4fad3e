/// The policy's state and the event being decided: the state it changes (through
/// `PolicyState`'s mutators only), the effects it emits and the scratch of this event
/// alone, which `endEvent` empties for the next. `SessionPolicy` keeps one for its life;
/// every rule (`PolicyStep+*.swift`) is written on it.
struct PolicyStep: PolicyReading {
    var state: PolicyState
    var configuration: PolicyConfiguration { _read { yield state.configuration } }
    /// The model and the index, read-only for the rules.
    var model: PolicyModel { _read { yield state.model } }
    var index: PolicyIndex { _read { yield state.index } }

    /// The effects decided so far, in order.
    var fx: [Effect] = []
    /// The sessions this event changed (membership, gains and publishing are brought up
    /// to date for them at the end).
    var touched = SessionScratch()
    /// Sessions activated by this event (they read the hint, they are not told it).
    var justActivated = SessionScratch()
    /// Every active session's gains are refreshed at the end (a ducker or recorder came or
    /// went, a switch flipped).
    var refreshAll = false
    /// The set of sessions with primary audio changed: every active session's hint is read.
    var hintDirty = false
    /// Faded streams this event let play again (R42): they fade back in at the end of the
    /// event, to the gain the event leaves them with.
    var fadeIns: [NodeID] = []
    /// The client being removed in this event (`clientRemoved`): its sessions' ends are
    /// not held for a follow-up.
    var clientGoing: ClientID?
    /// Whether a private output was present when the event began: when that changes, every
    /// playAndRecord session's preferred output does (`preferredOutput`).
    var privateOutputBefore = false
    /// The sessions whose hint `refreshHints` reads: always empty between two uses, kept for
    /// its storage.
    var hintTargets: [SessionID] = []

    init(state: PolicyState) {
        self.state = state
    }

    /// The end of an event: its effects, moved into `out` (empty; its storage becomes the
    /// next event's), and the step's scratch left empty for the next one (every field above
    /// but `state`). The sets keep their storage unless a fan-out made them large.
    mutating func endEvent(into out: inout [Effect]) {
        swap(&out, &fx)
        if fx.capacity > 256 { fx = [] }
        touched.removeAll()
        justActivated.removeAll()
        refreshAll = false
        hintDirty = false
        fadeIns.removeAll(keepingCapacity: true)
        clientGoing = nil
        privateOutputBefore = false
    }

    /// What a declaration may hold (F5, `DeclarationLimits`): one too large is refused as a
    /// whole, and the last accepted one (`previous`) stays in force. Returns the refusal.
    func keepWithinLimits(_ facts: inout DeclarationFacts, previous: DeclarationFacts?) -> SessionError? {
        guard let refusal = DeclarationLimits.refusal(facts.size) else { return nil }
        facts = previous ?? DeclarationFacts()
        return refusal
    }

    /// R41: the module is going away. Every stream the policy holds paused is resumed, so
    /// no pause outlives the policy; nothing else is decided (no notification, no publishing:
    /// the metadata object goes with the module).
    mutating func moduleUnloading() {
        for n in model.streams.keys.sorted() where model.streams[n]?.pausedByPolicy == true {
            state.updateStream(n) { $0.pausedByPolicy = false }
            fx.append(.resume(n))
        }
    }

    /// The end of every event: membership of the derived sets, gains, hints, publishing.
    mutating func finish() {
        if index.privateOutputs.isEmpty == privateOutputBefore {
            for s in allSessions() where traits(s)?.category == .playAndRecord { touched.insert(s) }
        }
        for s in touched { updateMembership(s) }
        // A sorted array, not a copy of `touched`: `refreshGains` inserts into `touched`, and a
        // copy still alive would make that insert duplicate the whole set. Most events touch
        // one session: it needs no array.
        if refreshAll {
            for s in touched.union(index.active).sorted() { refreshGains(s) }
        } else if touched.count == 1, let only = touched.any {
            refreshGains(only)
        } else if touched.count > 1 {
            for s in touched.sorted() { refreshGains(s) }
        }
        for n in fadeIns { fadeBackIn(n) }
        refreshHints()
        if touched.count == 1, let only = touched.any {
            publish(only)
        } else if touched.count > 1 {
            for s in touched.sorted() { publish(s) }
        }
        // The global state is made and compared only when something it shows changed.
        if let last = model.lastGlobal, globalUnchanged(since: last) { return }
        let g = globalSnapshot()
        if g != model.lastGlobal {
            state.setPublishedGlobal(g)
            fx.append(.publishGlobal(g))
        }
    }

    mutating func emit(_ e: consuming Effect) {
        var resumed: NodeID?
        switch e {
        case .pause(let n), .resume(let n):
            // The policy's own pause or resume takes over from a pause it had let go of (the
            // record changed where it lies, not copied).
            var faded = false
            state.updateStream(n) { st in
                st.pauseReleased = false
                faded = st.fade != .none
            }
            if case .resume = e, faded { resumed = n }
        default: break
        }
        fx.append(e)
        // R42: a faded stream that plays again ramps back in (after its resume, from silence).
        if let resumed { fadeIns.append(resumed) }
    }
    mutating func notify(_ s: SessionID, _ n: Notification) { fx.append(.notify(s, n)) }
}

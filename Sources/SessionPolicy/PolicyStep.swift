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
    var touched: Set<SessionID> = []
    /// Sessions activated by this event (they read the hint, they are not told it).
    var justActivated: Set<SessionID> = []
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
        Self.empty(&touched)
        Self.empty(&justActivated)
        refreshAll = false
        hintDirty = false
        fadeIns.removeAll(keepingCapacity: true)
        clientGoing = nil
        privateOutputBefore = false
    }

    static func empty(_ set: inout Set<SessionID>) {
        // An empty set is left as it is: clearing it would still visit its storage.
        if set.isEmpty { return }
        if set.capacity > 64 { set = Set() } else { set.removeAll(keepingCapacity: true) }
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
        } else if touched.count == 1, let only = touched.first {
            refreshGains(only)
        } else if touched.count > 1 {
            for s in touched.sorted() { refreshGains(s) }
        }
        for n in fadeIns { fadeBackIn(n) }
        refreshHints()
        if touched.count == 1, let only = touched.first {
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

    mutating func emit(_ e: Effect) {
        switch e {
        case .pause(let n), .resume(let n):
            // The policy's own pause or resume takes over from a pause it had let go of.
            if model.streams[n]?.pauseReleased == true { state.updateStream(n) { $0.pauseReleased = false } }
        default: break
        }
        fx.append(e)
        // R42: a faded stream that plays again ramps back in (after its resume, from silence).
        if case .resume(let n) = e, model.streams[n]?.fade != StreamFade.none { fadeIns.append(n) }
    }
    mutating func notify(_ s: SessionID, _ n: Notification) { fx.append(.notify(s, n)) }
}

import AudioSessionCoreABI
import SessionPolicy
import PipeWireFacts

#if canImport(Glibc)
import Glibc
#endif

/// The Swift side of libpipewire-module-audio-session: an adapter. It receives the
/// module's facts already typed by the translation (`Exports.swift`), steps the policy with
/// them, and hands the policy's effects to the module's callback table. It decides nothing
/// and keeps nothing the policy could keep: its only state is the property changes held
/// for one loop turn (debouncing), the graph's port links by the nodes they join (the
/// policy hears of node pairs, `NodeLinks`), the metadata's event counter and the
/// publications held for the publishing interval. One instance per loaded module, used on the PipeWire main
/// loop only.
///
/// Its stored state carries `@exclusivity(unchecked)`: it is used from one thread, and an
/// effect's callback that starts another decision (a node's state reported while its
/// pause is applied) does so between two effects, when no access to the state is under
/// way (`decide` hands the effects' array over first). The runtime's check of each access
/// cost about a twentieth of every decision.
public final class ModuleCore {
    @exclusivity(unchecked) public private(set) var policy: SessionPolicy
    /// The module's effect callbacks (`struct as_core_effects`) and their `data`.
    let effects: as_core_effects
    let data: UnsafeMutableRawPointer?
    /// What `data` points into, kept alive with the core (a test's recorder); nil for the
    /// module, which owns its `struct impl` itself.
    let owner: AnyObject?
    /// Sequence number of the last event published on `audio-session.event`.
    @exclusivity(unchecked) public private(set) var sequence: UInt64 = 0
    /// How often at most a metadata key is written (`PolicyConfiguration.publishIntervalMilliseconds`);
    /// 0 writes every publication at once.
    let publishInterval: UInt32
    /// The keys whose publication waits until an interval has passed since the last write.
    /// Only the key is held: what is written then is what the policy publishes by then
    /// (`currentPublication`), the latest state, without a copy of each state in between.
    @exclusivity(unchecked) var heldKeys: Set<PublishedKey> = []
    /// What the metadata holds for each key the module wrote (kept when publications can be
    /// held: a held value equal to it is not written again).
    @exclusivity(unchecked) var written: [PublishedKey: Publication] = [:]
    /// When the state was last written (ns, `clock`): publications wait until an interval
    /// has passed since. Nil before the first write.
    @exclusivity(unchecked) var lastWrite: UInt64?
    /// New legacy (stream) sessions not written yet, with when their wait ends (ns, `clock`):
    /// `youngHoldFactor` intervals after their first publication. The graph's first event in
    /// the wait's last interval writes them, or the timer one interval after it. A stream's
    /// first moments change its state several times (made without a route, linked, playing),
    /// and a short-lived one (a notification sound, a browser's probe) goes again soon: held,
    /// its state is written once, settled, or never. Declared sessions are not held: their
    /// programs wait for their state.
    @exclusivity(unchecked) var youngKeys: [PublishedKey: UInt64] = [:]
    /// The young keys in the order they came, with their due times (due times grow with it:
    /// the clock is monotonic and the hold is the same for all). An entry whose key went, or
    /// came again with another due time, is passed over.
    @exclusivity(unchecked) var youngQueue: [(key: PublishedKey, due: UInt64)] = []
    @exclusivity(unchecked) var youngQueueHead = 0
    /// New sessions whose wait ended while a change of their stream waited to be decided
    /// (its start or removal, held for what follows it): written once the waiting changes
    /// are decided (a removed stream's session never is), with the state they leave, not
    /// once before with the state they are about to change.
    /// Entries are passed over as the queue's are.
    @exclusivity(unchecked) var youngAfterWaiting: [(key: PublishedKey, due: UInt64)] = []
    /// Whether new sessions wait for nothing more: the changes they waited for are decided.
    var youngAfterWaitingAreFree: Bool { waitingHeld == 0 && !youngAfterWaiting.isEmpty }
    /// The graph's port links by the nodes they join (`NodeLinks`): what the policy hears of links.
    @exclusivity(unchecked) var nodeLinks = NodeLinks()
    /// Legacy sessions' keys whose removal is held (written with the next held keys).
    @exclusivity(unchecked) var heldRemovals: Set<PublishedKey> = []
    /// New legacy sessions wait this many publishing intervals (100 ms at 20 ms).
    static let youngHoldFactor: UInt64 = 5
    /// When the publishing timer is due (ns, `clock`), while it is armed.
    @exclusivity(unchecked) var publishTimerDue: UInt64?
    /// The last write left held publications for the loop's next turn (a burst over many sessions).
    @exclusivity(unchecked) var burstContinues = false
    /// How long held publications wait after a write now (ns): the publishing interval, and
    /// twice as long each time the graph's own events carry a write of what they kept
    /// changing, up to `longestIntervalFactor` intervals. A state that keeps changing (a
    /// stream started and stopped a hundred times a second, a flood of switch flips) is
    /// written ever less often: each write wakes every client that reads the metadata, and
    /// costs the daemon more than deciding the change did. It is one interval again once a
    /// change finds the metadata quiet, or the timer writes what a burst left.
    @exclusivity(unchecked) var holdNanoseconds: UInt64 = 0
    /// Held publications wait at most this many publishing intervals (160 ms at 20 ms).
    static let longestIntervalFactor: UInt64 = 8
    /// The monotonic clock in nanoseconds (the tests' own, to step through intervals).
    let clock: () -> UInt64
    /// The token of the publishing timer, outside the policy's own tokens (counted up from 1).
    public static let publishTimerToken = UInt64.max
    /// At most this many keys are written in one loop turn; the rest follow on the next turns.
    static let publishBatch = 64

    /// `model`: a policy to continue from (`SessionPolicy.snapshot()`), for a benchmark that
    /// builds its graph without the module; nil starts from nothing, as the module does.
    public init(configuration: PolicyConfiguration, effects: as_core_effects, data: UnsafeMutableRawPointer?, owner: AnyObject? = nil,
                clock: @escaping () -> UInt64 = ModuleCore.now, restoring model: PolicyModel? = nil) {
        self.effects = effects
        self.clock = clock
        self.data = data
        self.owner = owner
        var configuration = configuration
        // Nothing may be held for a grace period that no timer would end.
        if !(effects.version >= 3 && effects.schedule_timer != nil) {
            configuration.resumeGraceMilliseconds = 0
            configuration.profileSwitchMilliseconds = 0
            configuration.publishIntervalMilliseconds = 0
        }
        self.publishInterval = configuration.publishIntervalMilliseconds
        // A held key is written with the state as it stands then: the session's state is
        // made then, once, not with every event of the interval.
        configuration.makesPublishedStateWhenWritten = configuration.publishIntervalMilliseconds > 0
        self.holdNanoseconds = UInt64(configuration.publishIntervalMilliseconds) &* 1_000_000
        // Without the fade effect there is no fade: nothing would report its silence.
        if !(effects.version >= 4 && effects.fade != nil) {
            configuration.fadeOutMilliseconds = 0
            configuration.fadeInMilliseconds = 0
        }
        // R43: without the listen effect nothing would report sound: every output counts.
        if !(effects.version >= 5 && effects.listen != nil) { configuration.listensToOutputs = false }
        // MPRIS reports are accepted from the daemon's own user (the policy decides).
        if configuration.daemonUserID == nil { configuration.daemonUserID = Self.currentUserID() }
        self.policy = model.map { SessionPolicy(configuration: configuration, restoring: $0) } ?? SessionPolicy(configuration: configuration)
    }

    /// Whether property changes may wait for `flush()`: the module asks for one on its next
    /// loop turn (`schedule_flush`, since version 2).
    var defersPropertyChanges: Bool { effects.version >= 2 && effects.schedule_flush != nil }

    /// The user the daemon runs as.
    static func currentUserID() -> UInt32? {
        #if canImport(Glibc)
        return UInt32(getuid())
        #else
        return nil
        #endif
    }

    /// Debouncing: property changes not decided on yet, the latest per object, with the
    /// order of each object's last change. Only when the sink defers
    /// (`EffectSink.defersPropertyChanges`: the module flushes on its next loop turn).
    @exclusivity(unchecked) var pendingChanges: [PendingObject: HeldChange] = [:]

    /// A held change and when it came among the others (a struct, not a tuple: a tuple in a
    /// table has its type's metadata looked up at run time on each access).
    struct HeldChange {
        var order: UInt64
        var event: Event
        init(_ order: UInt64, _ event: Event) {
            self.order = order
            self.event = event
        }
    }
    @exclusivity(unchecked) var pendingOrder: UInt64 = 0
    /// The object whose change was held last (`isLastHeld`), read without copying a held
    /// change out of the table (its event's payload retained and released again).
    @exclusivity(unchecked) var lastHeld: PendingObject?

    enum PendingObject: Hashable {
        case client(ClientID), stream(NodeID), endpoint(NodeID)
        /// A stream that stopped running: held like a property change, so that when the
        /// daemon destroys the node next (it stops a running node as it destroys it), the
        /// stop and the removal are decided together, in one step.
        case stopped(NodeID)
        /// A new stream (`holdsNewStreams`): held until its first link, decided with it in
        /// one step, or until any other event, or for `heldWaitNanoseconds` at most.
        /// It carries no sound before it is linked, so nothing it could do waits.
        case added(NodeID)
        /// A stream that left a quiet graph (`SessionPolicy.removalMayWaitInPlace`), after
        /// its stop when that was held (`stoppedBeforeRemoval`): held like a new stream, so
        /// that when its program makes another one next (a player's next track, a browser's
        /// next sound), the removal, the new stream and its first link are one step.
        case removed(NodeID)
        /// A stream that started in a quiet graph, in a session that interrupts, ducks and
        /// silences nothing (`SessionPolicy.startMayWaitInPlace`): held like a removal.
        case started(NodeID)
    }

    /// Whether new streams wait for their first link (`PendingObject.added`), and starts and
    /// removals in a quiet graph for what follows (`PendingObject.started`, `.removed`): only
    /// with the loop's turns and the publishing timer, which decides what nothing came for.
    var holdsNewStreams: Bool { defersPropertyChanges && publishInterval > 0 }
    /// How many of the held changes wait for a link or the timer, not for the loop's next
    /// turn: new streams, starts and removals (`PendingObject.added`, `.started`, `.removed`).
    @exclusivity(unchecked) var waitingHeld = 0
    /// Held new streams whose owner activated them meanwhile: decided after the stream.
    @exclusivity(unchecked) var activatedWhileHeld: Set<NodeID> = []
    /// Held removals whose stream's stop was held before them: decided with it.
    @exclusivity(unchecked) var stoppedBeforeRemoval: Set<NodeID> = []
    /// When the waiting changes are decided at the latest (ns, `clock`): the first one's
    /// wait, `heldWaitNanoseconds`; nil while none is held. They are then decided in one step.
    @exclusivity(unchecked) var heldWaitDue: UInt64?
    /// How long a new stream waits for its first link, and a removal for what follows it, at
    /// most: WirePlumber 0.5 links a new stream 40 to 80 ms after it appears (0.4 in about 10).
    static let heldWaitNanoseconds: UInt64 = 150_000_000

    /// The object whose property change (or stop) `event` is; nil for every other event.
    static func coalescing(_ event: Event) -> PendingObject? {
        switch event {
        case .clientChanged(let c, _): return .client(c)
        case .streamChanged(let n, _): return .stream(n)
        case .endpointChanged(let n, _): return .endpoint(n)
        case .streamRunning(let n, false): return .stopped(n)
        default: return nil
        }
    }

    /// One key of the `audio-session` metadata.
    enum PublishedKey: Hashable {
        case session(SessionID), global, player(NodeID)

        func hash(into hasher: inout Hasher) {
            switch self {
            case .session(let s): hasher.combine(s)
            case .global: hasher.combine(UInt8(0))
            case .player(let n): hasher.combine(n)
            }
        }

        /// The ids' own hash (as the policy's tables use it), not SipHash: keys are ids
        /// the daemon assigns.
        func _rawHashValue(seed: Int) -> Int {
            switch self {
            case .session(let s): return s._rawHashValue(seed: seed)
            case .global: return NodeID(UInt32.max)._rawHashValue(seed: seed ^ 0x5bd1e995)
            case .player(let n): return n._rawHashValue(seed: seed ^ 0x27d4eb2f)
            }
        }
    }

    /// What a key is to say; nil values remove it.
    enum Publication: Equatable {
        case session(SessionID, SessionSnapshot?)
        case global(GlobalSnapshot)
        case player(NodeID, String?)

        var key: PublishedKey {
            switch self {
            case .session(let s, _): return .session(s)
            case .global: return .global
            case .player(let n, _): return .player(n)
            }
        }

        var removes: Bool {
            switch self {
            case .session(_, let snap): return snap == nil
            case .player(_, let p): return p == nil
            case .global: return false
            }
        }
    }

    /// Feeds one event to the policy and runs what it decides, in order.
    ///
    /// A burst of property changes (a client rewriting its declaration, pipewire-pulse
    /// setting a new stream's properties one message at a time) is decided once, on
    /// the settled properties: each change is held until `flush()`, which the module
    /// runs when its loop has handled the messages at hand. Any other event decides
    /// the held changes first, so the policy sees the graph in order, and is itself
    /// decided at once: a pause that keeps audio from leaking never waits.
    public func handle(_ event: Event) {
        if defersPropertyChanges, let object = Self.coalescing(event) {
            // Held new streams, starts and removals do not ask for the loop's next turn: they wait.
            if pendingChanges.count == waitingHeld { effects.schedule_flush?(data) }
            hold(object, event)
            return
        }
        if holdsNewStreams {
            switch event {
            case .streamAdded(let n, _, _, _) where pendingChanges[.added(n)] == nil:
                // A new stream waits for its first link, the next thing that usually happens
                // to it: the two are then decided in one step.
                holdWaiting(.added(n), event)
                return
            case .streamRunning(let n, true) where pendingChanges.count == waitingHeld && pendingChanges[.started(n)] == nil
                && policy.startMayWaitInPlace(n):
                // A stream started in a quiet graph, interrupting, ducking and silencing
                // nothing: only what is published waits for it.
                holdWaiting(.started(n), event)
                return
            case .streamRemoved(let n) where pendingChanges[.removed(n)] == nil && (pendingChanges.count == waitingHeld
                                                || (pendingChanges.count == waitingHeld + 1 && stopIsLastHeld(n)))
                && policy.removalMayWaitInPlace(n):
                // A stream left a quiet graph: nothing waits for its removal but what is
                // published, and its program may make another stream next. The removal
                // waits for it (with the stop held before it).
                if pendingChanges.removeValue(forKey: .stopped(n)) != nil { stoppedBeforeRemoval.insert(n) }
                holdWaiting(.removed(n), event)
                return
            case .linkRemoved(let l) where waitingHeld > 0:
                // A held removal's stream's links leave the policy with it, when it is decided:
                // their removal then asks nothing.
                if let link = policy.linkInPlace(l),
                   pendingChanges[.removed(link.output)] != nil || pendingChanges[.removed(link.input)] != nil {
                    return
                }
            case .streamActivatedByOwner(let n) where isLastHeld(.added(n)):
                // Its owner starts it before it is linked: decided after it, in its step.
                activatedWhileHeld.insert(n)
                return
            case .linkAdded(_, let output, let input):
                let n = isLastHeld(.added(output)) ? output : isLastHeld(.added(input)) ? input : nil
                if let n, let held = pendingChanges.removeValue(forKey: .added(n)) {
                    let started = Self.now()
                    waitingHeld -= 1
                    let activated = activatedWhileHeld.remove(n) != nil
                    if !pendingChanges.isEmpty && pendingChanges.count == waitingHeld {
                        // Only starts, removals and new streams wait before it (a program
                        // replaced one stream with another): all of them and the stream with
                        // its link in one step.
                        var events = takeWaiting()
                        events.append(held.event)
                        if activated { events.append(.streamActivatedByOwner(n)) }
                        events.append(event)
                        decideInOneStep(events)
                    } else {
                        // What was held before the stream, in its order; then the stream and its link together.
                        decideHeldChanges()
                        decideAddAndLink(held.event, activated: activated, link: event)
                    }
                    writeHeldPublicationsIfDue()
                    noteTime(since: started, "deciding \(held.event) and \(event)")
                    return
                }
            default:
                break
            }
        }
        // An event that asks the policy nothing (an owner's activation of a stream it does
        // not hold: one for every stream that starts) is dropped here when no held change
        // waits to be decided before it; a held change may make it a request, so with one
        // waiting it goes the whole way, and the policy answers it after the held changes.
        if pendingChanges.isEmpty && policy.asksNothingInPlace(event) { return }
        // The held changes decided first count towards this event's time in the loop.
        let started = Self.now()
        if case .streamRemoved(let n) = event, stopIsLastHeld(n) {
            // What was held before the stop, in its order; then the stop and the removal together.
            pendingChanges[.stopped(n)] = nil
            decideHeldChanges()
            decideStopAndRemoval(of: n)
        } else {
            decideHeldChanges()
            decide(event)
        }
        writeHeldPublicationsIfDue()
        if case .clientRemoved = event {
            // After a crowd of clients, the tables of what was written give back their room.
            written.shrinkIfSparse()
            heldKeys.shrinkIfSparse()
            youngKeys.shrinkIfSparse()
            heldRemovals.shrinkIfSparse()
        }
        noteTime(since: started, "deciding \(event)")
    }

    /// The longest one decision (an event and its effects) held the daemon's loop, in ns.
    @exclusivity(unchecked) public private(set) var longestDecisionNanoseconds: UInt64 = 0
    /// A decision longer than this (one graph cycle at 1024 frames) is logged as a warning:
    /// the loop that serves every client waited for the policy.
    static let slowDecisionNanoseconds: UInt64 = 21_000_000

    public static func now() -> UInt64 {
        #if canImport(Glibc)
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(max(ts.tv_sec, 0)) &* 1_000_000_000 &+ UInt64(max(ts.tv_nsec, 0))
        #else
        return 0
        #endif
    }

    func noteTime(since started: UInt64, _ what: @autoclosure () -> String) {
        let took = Self.now() &- started
        guard took > longestDecisionNanoseconds else { return }
        longestDecisionNanoseconds = took
        if took > Self.slowDecisionNanoseconds {
            log(.warn, "\(what().prefix(120)) held the daemon's loop for \(took / 1_000_000) ms")
        }
    }

    /// Whether `n`'s stop is held and nothing was held after it: the stop is then the last
    /// thing that happened before its node's removal.
    func stopIsLastHeld(_ n: NodeID) -> Bool {
        isLastHeld(.stopped(n))
    }

    /// Whether `object`'s change is held and nothing was held after it.
    func isLastHeld(_ object: PendingObject) -> Bool {
        lastHeld == object && pendingChanges.index(forKey: object) != nil
    }

    /// Holds `object`'s change, after everything held before it (its latest change replaces
    /// an earlier one's place).
    func hold(_ object: PendingObject, _ event: Event) {
        pendingOrder &+= 1
        lastHeld = object
        pendingChanges[object] = HeldChange(pendingOrder, event)
    }

    /// Holds a new stream, a start or a removal that waits for what follows it
    /// (`waitingHeld`); the first one starts the wait.
    func holdWaiting(_ object: PendingObject, _ event: Event) {
        hold(object, event)
        waitingHeld += 1
        if heldWaitDue == nil {
            let now = clock()
            heldWaitDue = now &+ Self.heldWaitNanoseconds
            settlePublishTimer(at: now)
        }
    }

    /// Decides a new stream and its first link in one step (`SessionPolicy.handleAddAndLink`).
    func decideAddAndLink(_ add: Event, activated: Bool, link: Event) {
        if waitingHeld == 0 { heldWaitDue = nil }
        step { $0.handleAddAndLink(add, activated: activated, link: link, into: &$1) }
    }

    /// Decides events that waited for one another in one step (`SessionPolicy.handleInOneStep`).
    func decideInOneStep(_ events: [Event]) {
        step { $0.handleInOneStep(events, into: &$1) }
    }

    /// Takes every held change, all of them waiting ones (`waitingHeld`), as the events they
    /// stand for, in order: a removal after its held stop, a new stream before its owner's
    /// activation.
    func takeWaiting() -> [Event] {
        let batch = pendingChanges.values.sorted { $0.order < $1.order }
        pendingChanges.removeAll(keepingCapacity: pendingChanges.capacity <= 64)
        waitingHeld = 0
        heldWaitDue = nil
        var events: [Event] = []
        events.reserveCapacity(batch.count + 4)
        for held in batch {
            switch held.event {
            case .streamRemoved(let n):
                if stoppedBeforeRemoval.remove(n) != nil { events.append(.streamRunning(n, false)) }
                events.append(held.event)
            case .streamAdded(let n, _, _, _):
                events.append(held.event)
                if activatedWhileHeld.remove(n) != nil { events.append(.streamActivatedByOwner(n)) }
            default:
                events.append(held.event)
            }
        }
        return events
    }

    /// Decides a stream's stop and its removal in one step (`SessionPolicy.handleStopAndRemoval`).
    func decideStopAndRemoval(of n: NodeID) {
        step { $0.handleStopAndRemoval(of: n, into: &$1) }
    }

    /// Steps the policy once (`decide` hands it the effect array) and runs what it decided,
    /// in order. The array is taken out while its effects run: a decision an effect's
    /// callback starts gets its own.
    @inline(__always)
    func step(_ decide: (inout SessionPolicy, inout [Effect]) -> Void) {
        decisionCount &+= 1
        var effects: [Effect] = []
        swap(&effects, &effectBuffer)
        decide(&policy, &effects)
        runAll(effects)
        effects.removeAll(keepingCapacity: effects.capacity <= 256)
        effectBuffer = effects
    }

    /// Decides the held property changes, in the order of their last change, and writes
    /// the held publications if an interval has passed since the last write.
    public func flush() {
        let started = Self.now()
        let held = pendingChanges.count
        // New streams, starts and removals alone wait for what follows (or the timer), not for the loop's turn.
        if held > waitingHeld { decideHeldChanges() }
        writeHeldPublicationsIfDue()
        noteTime(since: started, "deciding \(held) held property changes")
    }

    func decideHeldChanges() {
        guard !pendingChanges.isEmpty else { return }
        if pendingChanges.count > 1 && pendingChanges.count == waitingHeld {
            // Only starts, removals and new streams wait: they are decided in one step.
            decideInOneStep(takeWaiting())
            return
        }
        // Every held new stream, start and removal is decided here: none waits after this.
        waitingHeld = 0
        heldWaitDue = nil
        // The table keeps its room (a small one's): the next change allocates nothing. A
        // change an effect holds while these are decided waits for the next flush.
        if pendingChanges.count == 1, let only = pendingChanges.first {
            pendingChanges.removeAll(keepingCapacity: true)
            decideHeld(only.value.event)
            return
        }
        let batch = pendingChanges.values.sorted { $0.order < $1.order }
        pendingChanges.removeAll(keepingCapacity: pendingChanges.capacity <= 64)
        for held in batch {
            decideHeld(held.event)
        }
    }

    /// Decides one held change; a new stream's owner's activation while it was held follows
    /// it, and a held removal comes with its stream's held stop.
    func decideHeld(_ event: Event) {
        if case .streamRemoved(let n) = event, stoppedBeforeRemoval.remove(n) != nil {
            decideStopAndRemoval(of: n)
            return
        }
        decide(event)
        if case .streamAdded(let n, _, _, _) = event, activatedWhileHeld.remove(n) != nil {
            let activation = Event.streamActivatedByOwner(n)
            if !policy.asksNothingInPlace(activation) { decide(activation) }
        }
    }

    /// Publishes the current state again (the global state and every session's) into a
    /// metadata object that was created anew after the previous one was destroyed.
    /// Held property changes are decided first, so the state written is the settled one.
    public func republish() {
        decideHeldChanges()
        heldKeys = []
        written = [:]
        youngKeys = [:]
        heldRemovals = []
        youngQueue = []
        youngQueueHead = 0
        youngAfterWaiting = []
        // The new object is empty: all of it is written now, new sessions too.
        writesThrough = true
        notifying = true
        lastWrite = clock()
        runAll(policy.publishedState())
        settlePublishTimer(at: clock())
    }

    /// A timer the module runs out: the publishing timer, or one of the policy's.
    public func timerFired(_ token: UInt64) {
        if token == Self.publishTimerToken {
            publishTimerDue = nil
            let continuing = burstContinues
            burstContinues = false
            let now = clock()
            if let due = heldWaitDue, due <= now {
                // No link came for a new stream in its wait, or nothing followed a start or a removal:
                // they are decided now, with what was held before and after them, in order.
                let started = Self.now()
                decideHeldChanges()
                noteTime(since: started, "deciding new streams and removals that waited")
            }
            let matured = promoteYoungKeys(at: now)
            defer { settlePublishTimer(at: now) }
            guard !heldKeys.isEmpty else { return }  // written meanwhile, with an event
            // Written meanwhile with an event, and held again since: stand by once more.
            // New sessions whose wait ended have waited long enough: they are written now,
            // with what else is held.
            guard continuing || matured || intervalPassed(at: now) else { return }
            let started = Self.now()
            // The events that kept the state changing stopped: the next change waits one
            // interval again (new sessions coming due do not count as changes).
            if !continuing && !matured { holdNanoseconds = intervalNanoseconds }
            writeHeldBatch(at: now)
            noteTime(since: started, "writing the published state")
            return
        }
        handle(.timerFired(token))
    }

    /// The array the policy's effects come in, used again for each decision (it is taken
    /// out while its effects run: a decision an effect's callback starts gets its own).
    @exclusivity(unchecked) var effectBuffer: [Effect] = []

    /// How many steps of the policy the core has run (each decision, whatever it decided).
    @exclusivity(unchecked) public private(set) var decisionCount = 0

    /// Steps the policy with one event and runs what it decides, in order.
    func decide(_ event: Event) {
        step { $0.handle(event, into: &$1) }
    }

    /// Runs the effects of one decision, in order. Nothing waits around an event: what was
    /// held from before it is written first, and the state the decision leaves follows it
    /// at once (a key the decision publishes after the event is written then, with its new
    /// state, and not before the event).
    func runAll(_ effects: [Effect]) {
        // Read where they lie: an element read through the array's subscript is a copy, its
        // payload retained and released again.
        effects.withUnsafeBufferPointer { all in
            // A decision with an event writes every state it leaves, new sessions' too.
            if !notifying {
                for e in all { if case .notify = e { notifying = true; break } }
            }
            for i in all.indices {
                if case .notify = all[i] {
                    // New sessions held from before are written with what was held.
                    if !youngKeys.isEmpty { promoteYoungKeys(at: .max) }
                    if !heldKeys.isEmpty {
                        var later = Set<PublishedKey>()
                        for j in (i + 1)..<all.count {
                            if let k = Self.publishedKey(all[j]) { later.insert(k) }
                        }
                        writeHeldPublications(except: later)
                    }
                    writesThrough = true
                    lastWrite = clock()
                }
                run(all[i])
            }
        }
        writesThrough = false
        notifying = false
    }

    /// The metadata key an effect writes, if it publishes.
    static func publishedKey(_ e: Effect) -> PublishedKey? {
        switch e {
        case .publishSession(let s, _), .sessionChanged(let s): return .session(s)
        case .publishGlobal: return .global
        case .publishPlayer(let n, _): return .player(n)
        default: return nil
        }
    }

    /// Whether the decision being run found the metadata quiet: its publications are
    /// written at once, all of them.
    @exclusivity(unchecked) var writesThrough = false
    /// Whether the decision being run published an event (or the metadata is written anew):
    /// every state it leaves is written at once, new sessions' too, so that a program
    /// reading the event finds the state that goes with it.
    @exclusivity(unchecked) var notifying = false

    /// The publishing interval in nanoseconds.
    var intervalNanoseconds: UInt64 { UInt64(publishInterval) &* 1_000_000 }

    /// Whether held publications have waited long enough since the state was last written
    /// (`holdNanoseconds`).
    func intervalPassed(at now: UInt64) -> Bool {
        guard let last = lastWrite else { return true }
        return now &- last >= holdNanoseconds
    }

    /// Writes `publication` at once when the metadata was quiet (nothing held, nothing
    /// written for the current wait), else holds it: what is held is written, the latest per
    /// key, by the first decision once the wait (an interval; longer while the state keeps
    /// changing, `holdNanoseconds`) has passed since the last write, or at the latest by the
    /// publishing timer an interval after that. A busy graph's own events carry the writes,
    /// and the timer wakes the daemon only when they stop.
    ///
    /// A new legacy session (`youngKeys`) waits longer, unless an event comes with it.
    /// `removes`: the publication removes the key.
    func publish(_ key: PublishedKey, removes: Bool = false, _ publication: () -> Publication) {
        if publishInterval > 0, !notifying || !youngKeys.isEmpty, case .session(.stream) = key {
            if removes {
                // Never written: nothing to remove.
                if youngKeys.removeValue(forKey: key) != nil {
                    if youngKeys.isEmpty {
                        emptyYoungQueue()
                        youngAfterWaiting.removeAll(keepingCapacity: youngAfterWaiting.capacity <= 64)
                    }
                    return
                }
            } else if notifying {
                youngKeys.removeValue(forKey: key)
            } else if holdsYoung(key) {
                return
            }
        }
        guard publishInterval > 0, !writesThrough else {
            if !heldKeys.isEmpty { heldKeys.remove(key) }
            if !heldRemovals.isEmpty { heldRemovals.remove(key) }
            write(publication())
            return
        }
        let now = clock()
        if heldKeys.isEmpty && intervalPassed(at: now) {
            // Quiet: this decision's state is written now; changes in the next interval wait.
            // A state the metadata already says leaves it quiet.
            let p = publication()
            guard remember(p) else { return }
            writesThrough = true
            lastWrite = now
            holdNanoseconds = intervalNanoseconds
            send(p)
            return
        }
        heldKeys.insert(key)
        // A new stream given the same id soon (the daemon reuses ids) writes the removal
        // first (`holdsYoung`), and is new.
        if removes, case .session(.stream) = key { heldRemovals.insert(key) }
    }

    /// Whether `key` is a new legacy session's, never written, whose wait is not over: its
    /// publication is held. The first publication starts the wait; a held removal of the
    /// session that had the id before is written first.
    func holdsYoung(_ key: PublishedKey) -> Bool {
        guard case .session(.stream(let node)) = key else { return false }
        if !heldRemovals.isEmpty, heldRemovals.remove(key) != nil, heldKeys.remove(key) != nil {
            // The session that had this id went and its removal is held: this one is new.
            write(.session(.stream(node), nil))
        }
        if let due = youngKeys[key] {
            if clock() < due { return true }
            // Due, and the timer has not run yet: it is written as any other key now.
            youngKeys.removeValue(forKey: key)
            return false
        }
        // Written before, or held with the others already: not new.
        guard written[key] == nil, !heldKeys.contains(key) else { return false }
        let now = clock()
        let due = now &+ intervalNanoseconds &* Self.youngHoldFactor
        youngKeys[key] = due
        youngQueue.append((key, due))
        return true
    }

    /// Moves the new sessions whose wait is over to the held keys; whether any was.
    @discardableResult
    func promoteYoungKeys(at now: UInt64) -> Bool {
        var promoted = false
        if youngAfterWaitingAreFree {
            for entry in youngAfterWaiting where youngKeys[entry.key] == entry.due {
                youngKeys.removeValue(forKey: entry.key)
                heldKeys.insert(entry.key)
                promoted = true
            }
            youngAfterWaiting.removeAll(keepingCapacity: youngAfterWaiting.capacity <= 64)
        }
        while youngQueueHead < youngQueue.count, youngQueue[youngQueueHead].due <= now {
            let entry = youngQueue[youngQueueHead]
            youngQueueHead += 1
            guard youngKeys[entry.key] == entry.due else { continue }
            if waitingHeld > 0, streamChangeWaits(entry.key) {
                youngAfterWaiting.append(entry)
                continue
            }
            youngKeys.removeValue(forKey: entry.key)
            heldKeys.insert(entry.key)
            promoted = true
        }
        if youngQueueHead == youngQueue.count {
            emptyYoungQueue()
        } else if youngQueueHead > 64 && youngQueueHead * 2 > youngQueue.count {
            youngQueue.removeFirst(youngQueueHead)
            youngQueueHead = 0
        }
        return promoted
    }

    /// Whether `key` is a stream's session whose stream's start or removal is held, waiting
    /// for what follows it: its state is about to change.
    func streamChangeWaits(_ key: PublishedKey) -> Bool {
        guard case .session(.stream(let n)) = key else { return false }
        return pendingChanges.index(forKey: .started(n)) != nil || pendingChanges.index(forKey: .removed(n)) != nil
    }

    /// Forgets the queue's entries (all passed over or stale), keeping a small one's room.
    func emptyYoungQueue() {
        youngQueue.removeAll(keepingCapacity: youngQueue.capacity <= 256)
        youngQueueHead = 0
    }

    /// The due time of the first new session still waiting, if any (entries of keys that
    /// went, or came again since, are passed over).
    func firstYoungDue() -> UInt64? {
        while youngQueueHead < youngQueue.count {
            let entry = youngQueue[youngQueueHead]
            if youngKeys[entry.key] == entry.due { return entry.due }
            youngQueueHead += 1
        }
        if !youngQueue.isEmpty { emptyYoungQueue() }
        return nil
    }

    /// Arms, moves or parks the publishing timer for what waits now; run once at the end of
    /// each decision, write and timer. The graph's next event writes held keys once they
    /// may be written (`holdNanoseconds` after the last write), and new sessions once their
    /// wait is over; the timer is the backstop, one interval after either, for when no event
    /// comes. A busy graph's events leave it nothing to do: each time it fires it wakes the
    /// daemon's loop. With nothing waiting it is parked far ahead, not left to fire for
    /// nothing; a burst over many sessions keeps the timer it set for the loop's next turn.
    func settlePublishTimer(at now: UInt64) {
        guard publishInterval > 0, !burstContinues else { return }
        var due: UInt64?
        if !heldKeys.isEmpty { due = (lastWrite ?? now) &+ holdNanoseconds &+ intervalNanoseconds }
        if let young = firstYoungDue() {
            let backstop = young &+ intervalNanoseconds
            due = min(due ?? backstop, backstop)
        }
        if let waiting = heldWaitDue { due = min(due ?? waiting, waiting) }
        // New sessions that waited for their streams' changes, decided since: written now.
        if youngAfterWaitingAreFree { due = now }
        guard let due else {
            if publishTimerDue != nil {
                publishTimerDue = nil
                effects.schedule_timer?(data, Self.publishTimerToken, Self.parkedMilliseconds)
            }
            return
        }
        if publishTimerDue != due { startPublishTimer(due: due, now: now) }
    }

    /// A parked publishing timer's delay (49 days): it fires only if nothing moves it first,
    /// and finds nothing to do then.
    public static let parkedMilliseconds = UInt32.max

    func startPublishTimer(due: UInt64, now: UInt64) {
        publishTimerDue = due
        let left = due > now ? due - now : 0
        // Whole milliseconds, rounded up: never before the due time.
        let ms = (left / 1_000_000) + (left % 1_000_000 == 0 ? 0 : 1)
        effects.schedule_timer?(data, Self.publishTimerToken, UInt32(min(ms, UInt64(UInt32.max))))
    }

    /// After a decision: the held publications are written when they have waited long
    /// enough since the last write. The graph's own events carried this write of a state
    /// they keep changing: the next changes wait twice as long.
    func writeHeldPublicationsIfDue() {
        let now = clock()
        defer { settlePublishTimer(at: now) }
        // New sessions whose wait is over, or ends within the next interval, are written
        // now, with what else is held: the graph's event carries them, and the timer that
        // would write them one interval after their wait does not wake the daemon.
        var matured = false
        let soon = now &+ intervalNanoseconds
        if (youngQueueHead < youngQueue.count && youngQueue[youngQueueHead].due <= soon)
            || youngAfterWaitingAreFree {
            matured = promoteYoungKeys(at: soon)
        }
        guard !heldKeys.isEmpty else { return }
        let passed = intervalPassed(at: now)
        guard passed || matured else { return }
        writeHeldBatch(at: now)
        if passed { holdNanoseconds = min(holdNanoseconds &* 2, intervalNanoseconds &* Self.longestIntervalFactor) }
    }

    /// Writes one batch of the held publications; a burst over many sessions goes on with
    /// the rest on the loop's next turn.
    func writeHeldBatch(at now: UInt64) {
        lastWrite = now
        writeHeldPublications(limit: Self.publishBatch)
        burstContinues = !heldKeys.isEmpty
        if burstContinues { startPublishTimer(due: now, now: now) }
    }

    /// Writes the held publications that change what the metadata says, sessions in id order.
    func writeHeldPublications(limit: Int = .max, except later: Set<PublishedKey> = []) {
        guard !heldKeys.isEmpty else { return }
        // The keys' array is used again for each write (taken out while it is in use).
        var keys: [PublishedKey] = []
        swap(&keys, &heldKeyOrder)
        keys.removeAll(keepingCapacity: true)
        if later.isEmpty {
            keys.append(contentsOf: heldKeys)
        } else {
            for key in heldKeys where !later.contains(key) { keys.append(key) }
        }
        if keys.count > 1 { keys.sort(by: Self.writeOrder) }
        for key in keys.prefix(limit) {
            if !heldRemovals.isEmpty { heldRemovals.remove(key) }
            guard heldKeys.remove(key) != nil, let p = currentPublication(key) else { continue }
            write(p)
        }
        keys.removeAll(keepingCapacity: keys.capacity <= Self.publishBatch)
        heldKeyOrder = keys
    }

    /// The held keys in the order they are written (`writeHeldPublications`), kept between writes.
    @exclusivity(unchecked) var heldKeyOrder: [PublishedKey] = []

    /// What the policy publishes for `key` now.
    func currentPublication(_ key: PublishedKey) -> Publication? {
        switch key {
        case .session(let s): return .session(s, policy.settledSnapshot(s))
        case .global: return policy.publishedGlobal.map { .global($0) }
        case .player(let n): return .player(n, policy.publishedPlayer(n))
        }
    }

    /// The global state first, then sessions (in the policy's order), then players by id.
    static func writeOrder(_ a: PublishedKey, _ b: PublishedKey) -> Bool {
        switch (a, b) {
        case (.global, .global): return false
        case (.global, _): return true
        case (_, .global): return false
        case (.session(let x), .session(let y)): return x < y
        case (.session, .player): return true
        case (.player, .session): return false
        case (.player(let x), .player(let y)): return x.raw < y.raw
        }
    }

    /// Writes `publication` unless the metadata already says it (when publications can be held).
    func write(_ publication: Publication) {
        if publishInterval > 0 && !remember(publication) { return }
        send(publication)
    }

    /// Records `publication` as what the metadata says (when publications can be held);
    /// false when it says that already, and nothing is to be written.
    func remember(_ publication: Publication) -> Bool {
        let key = publication.key
        if publication.removes {
            // Never written (a session that came and went within one interval): nothing to remove.
            return written.removeValue(forKey: key) != nil
        }
        if written[key] == publication { return false }
        written[key] = publication
        return true
    }

    /// Writes `publication` into the metadata.
    func send(_ publication: Publication) {
        switch publication {
        case .session(let session, let snapshot):
            publish(MetadataFormat.subject(of: session), MetadataFormat.sessionKey,
                    snapshot.map { MetadataFormat.sessionWriter(session, $0).cString() })
        case .global(let global):
            publish(0, MetadataFormat.globalKey, MetadataFormat.globalWriter(global).cString())
        case .player(let node, let player):
            publish(node.raw, MetadataFormat.mprisKey, player.map { MetadataFormat.mprisWriter(player: $0).cString() })
        }
    }

    /// How many property changes wait for `flush()`.
    public var pendingChangeCount: Int { pendingChanges.count }

    /// How many metadata keys wait for the publishing timer (new legacy sessions included).
    public var pendingPublicationCount: Int { heldKeys.count + youngKeys.count }

    /// How many per-object records the module core and the policy hold beyond the graph
    /// itself (held changes, monitor recorders, early route reads, MPRIS reports and
    /// players, switch requests): 0 once every object is gone.
    public var recordCount: Int {
        pendingChanges.count + policy.recordCount + heldKeys.count + youngKeys.count + heldRemovals.count + written.keys.count { $0 != .global }
    }

    /// A client wrote its own properties on its own connection (`pw_core_update_properties`):
    /// the MPRIS bridge's report and the global switch requests are read from this writing
    /// only, so that properties another client wrote onto this one never count. Held
    /// property changes are decided first only when the update carries a request, so a
    /// burst of declaration rewrites is still decided once.
    public func ownPropertiesWritten(_ client: ClientID, _ props: Properties) {
        if let report = PlayerReport(pipeWire: props) {
            handle(.playerReportChanged(client, report))
        }
        let request = SwitchRequest(pipeWire: props)
        guard !request.isEmpty else { return }
        handle(.switchesRequested(client, request))
    }

    /// A client connected: what it brings is its own (nobody else can reach it before it is
    /// registered), so the switches it asks for count as its request.
    public func clientAdded(_ client: ClientID, _ props: Properties, identity: ClientIdentity) {
        handle(.clientAdded(client, props, identity: identity))
        let request = SwitchRequest(pipeWire: props)
        if !request.isEmpty { handle(.switchesRequested(client, request)) }
    }

    /// The module is going away: what the policy undoes (its pauses) is run; nothing is
    /// decided after this.
    public func unload() {
        handle(.moduleUnloading)
    }

    /// Carries out one effect through the module's callbacks.
    func run(_ effect: Effect) {
        switch effect {
        case .pause(let node):
            effects.pause?(data, node.raw)
        case .resume(let node):
            effects.resume?(data, node.raw)
        case .duck(let node, let gain, let ramp):
            effects.duck?(data, node.raw, gain, ramp)
        case .fade(let node, let gain, let milliseconds):
            // Never decided without the callback: `init` turns the fades off then.
            if effects.version >= 4 { effects.fade?(data, node.raw, gain, milliseconds) }
        case .listen(let node, let on):
            // Never decided without the callback: `init` turns listening off then.
            if effects.version >= 5 { effects.listen?(data, node.raw, on) }
        case .silence(let node, let on):
            effects.silence?(data, node.raw, on)
        case .notify(let session, let notification):
            // `runAll` wrote what was held and writes the decision's state through.
            sequence &+= 1
            let value = MetadataFormat.eventWriter(sequence: sequence, session: session, notification: notification).cString()
            publish(0, MetadataFormat.eventKey, value)
            // The text without its NUL.
            log(.info, "\(session): \(String(decoding: value.dropLast(), as: UTF8.self))")
        case .publishSession(let session, let snapshot):
            publish(.session(session), removes: snapshot == nil) { .session(session, snapshot) }
        case .sessionChanged(let session):
            publish(.session(session)) { .session(session, self.policy.settledSnapshot(session)) }
        case .publishGlobal(let global):
            publish(.global) { .global(global) }
        case .publishPlayer(let node, let player):
            publish(.player(node)) { .player(node, player) }
        case .scheduleTimer(let token, let milliseconds):
            if effects.version >= 3 { effects.schedule_timer?(data, token, milliseconds) }
        case .switchSet(let client, let s, let on):
            log(.info, "\(client) sets \(SwitchRequest.key(s)) \(on ? "on" : "off")")
        case .switchRefused(let client, let s, let reason):
            log(.warn, "\(client) may not set \(SwitchRequest.key(s)): \(reason.sentence)")
        case .playerReportRefused(let client):
            log(.warn, "\(client) may not report MPRIS players: only a client of the daemon's user that is not sandboxed may")
        }
    }

    /// Writes (`value` non-nil: UTF-8 JSON text and a NUL, `JSONWriter.cString()`) or
    /// removes a key of the `audio-session` metadata.
    func publish(_ subject: UInt32, _ key: String, _ value: [UInt8]?) {
        guard let publish = effects.publish else { return }
        key.withCString { k in
            MetadataFormat.jsonType.withCString { t in
                guard var text = value else {
                    publish(data, subject, k, t, nil)
                    return
                }
                // Made with its NUL: nothing to copy.
                if text.last != 0 { text.append(0) }
                text.withUnsafeBufferPointer { b in
                    b.withMemoryRebound(to: CChar.self) { publish(data, subject, k, t, $0.baseAddress) }
                }
            }
        }
    }

    func log(_ level: LogLevel, _ message: String) {
        guard let log = effects.log else { return }
        let c: as_log_level
        switch level {
        case .error: c = AS_LOG_ERROR
        case .warn: c = AS_LOG_WARN
        case .info: c = AS_LOG_INFO
        case .debug: c = AS_LOG_DEBUG
        }
        message.withCString { log(data, c, $0) }
    }
}

public enum LogLevel: Sendable { case error, warn, info, debug }

/// What the policy reads: the model, its index and the configuration. The rules
/// (`PolicyStep`) and the state's own upkeep (`PolicyState`) read through it; the read
/// helpers that both need (traits, routes, links) are written once on it.
protocol PolicyReading {
    var configuration: PolicyConfiguration { get }
    var model: PolicyModel { get }
    var index: PolicyIndex { get }
}

/// Makes the struct that holds it address-only, so that the compiler passes it by address.
/// The state and the step that holds it (over 500 bytes each: the model's and the index's
/// tables inline) are what every read helper (`PolicyReading`'s methods) is called on, from
/// the rules' mutating methods. A struct Swift can load whole is passed to a method by
/// value, and one this large goes through a copy on the stack: about 15 copies of 500 to
/// 600 bytes in the decision on a stream that starts or stops, nearly half of the data
/// lines the decision writes (`scripts/footprint.py`: 147 lines written per decision
/// before, about 90 after). An address-only value is read where it lies. The optional
/// existential is what makes it so: its layout is known only at run time. It is always
/// nil and costs 32 bytes.
struct InPlace: Sendable {
    private let never: (any Sendable)? = nil
}

/// The policy's state: the model (the truth) and its index (everything derived from it).
/// Both change only through the mutators in this file, each of which keeps the index in
/// step with the model it changes; a rule never writes the index. The index always equals
/// one rebuilt from the model (`agreesWithRebuild`), which the tests check after every event.
struct PolicyState: PolicyReading {
    let configuration: PolicyConfiguration
    /// Keeps the state, and the step that holds it, in place when a rule reads it (see `InPlace`).
    private let inPlace = InPlace()
    private(set) var model: PolicyModel
    private(set) var index = PolicyIndex()
    /// Sessions whose traits the graph changed (R43, `refreshProgram`) and their traits
    /// before, since the step last took them: the rules apply the change. Not part of the
    /// index: a step always leaves it empty.
    private(set) var traitChanges: [SessionID: SessionTraits] = [:]
    /// Programs whose activity or streams changed since the step last took them (R43): the
    /// rules review which of their outputs the module listens to. Not part of the index: a
    /// step always leaves it empty.
    private(set) var programsToReview: Set<ProgramKey> = []

    /// An empty state (an empty model's index is empty).
    init(configuration: PolicyConfiguration) {
        self.configuration = configuration
        self.model = PolicyModel()
    }

    /// The state of `model`, its index rebuilt.
    init(configuration: PolicyConfiguration, model: PolicyModel) {
        self.configuration = configuration
        self.model = model
        rebuildIndex()
    }

    // MARK: the graph

    /// A client's record: added, replaced (its facts or declaration in force changed) or
    /// removed (nil; its streams must be gone first).
    mutating func setClient(_ c: ClientID, _ info: ClientInfo?) {
        guard let info else {
            model.clients[c] = nil
            model.switchRequests[c] = nil
            index.derived[.client(c)] = nil
            // A client's streams and sessions went before it: after a crowd of clients,
            // the tables give back the room they no longer use.
            model.shrinkIfSparse()
            index.shrinkIfSparse()
            return
        }
        let old = model.clients.updateValue(info, forKey: c)
        if let old, old.facts.processID != info.facts.processID {
            for n in index.streamsOfClient[c]?.nodes ?? [] {
                guard let st = model.streams[n] else { continue }
                let was = program(of: st, processOfClient: old.facts.processID)
                let contribution = activity(of: n, st)
                moveProgram(n, from: (was, contribution), to: (program(of: st), contribution))
            }
        }
        // The cached traits of the client's sessions read its declaration, identity and name.
        if old == nil || old?.declaration != info.declaration || old?.facts.identity != info.facts.identity
            || old?.facts.applicationName != info.facts.applicationName {
            refreshDerived(ofClient: c)
        }
    }

    /// A stream's record: added, replaced (new facts, or the policy's decisions on it) or
    /// removed (nil; its links must be gone first).
    mutating func setStream(_ n: NodeID, _ info: StreamInfo?) {
        let old: StreamInfo?
        if let info { old = model.streams.updateValue(info, forKey: n) } else { old = model.streams.removeValue(forKey: n) }
        // R43: what the program does (capturing, playing) follows its streams.
        if old?.runs != info?.runs || old?.heard != info?.heard || old?.facts != info?.facts || old == nil || info == nil {
            moveProgram(n, from: old.map { (program(of: $0), activity(of: n, $0)) }, to: info.map { (program(of: $0), activity(of: n, $0)) })
        }
        if old?.listened == true || info?.listened == true { noteListened(n, info?.listened == true) }
        guard let info else {
            guard let old else { return }
            countGains(of: old.client, removing: old, adding: nil)
            forgetRoute(ofStream: n, client: old.client)
            if index.streamsOfClient[old.client]?.remove(n) != nil, index.streamsOfClient[old.client]?.isEmpty == true {
                index.streamsOfClient[old.client] = nil
            }
            noteDeclaring(n, client: old.client)
            refreshDerived(ofClient: old.client, stream: n)
            return
        }
        countGains(of: info.client, removing: old, adding: info)
        guard let old else {
            index.streamsOfClient[info.client, default: []].insert(n)
            noteDeclaring(n, client: info.client)
            refreshRoute(ofStream: n)
            refreshDerived(ofClient: info.client, stream: n)
            return
        }
        if old.facts != info.facts || old.declaration != info.declaration {
            noteDeclaring(n, client: info.client)
            refreshDerived(ofClient: info.client, stream: n)
        }
    }

    /// Changes the policy's decisions on a stream (its pause, gains, lost output, whether it
    /// runs as the module reported): never its facts, so its traits' inputs stay as they are.
    /// The record is changed where it lies (no copy of it, of its strings or of its facts'
    /// box is made): only the plain values the index follows are read before and after.
    /// Returns whether the stream was known (an unknown one is left alone).
    @discardableResult
    mutating func updateStream(_ n: NodeID, _ body: (inout StreamInfo) -> Void) -> Bool {
        guard let i = model.streams.index(forKey: n) else { return false }
        let (before, after, client) = Self.change(&model.streams.values[i], body)
        if after != before { followDecisions(n, at: i, client: client, before: before, after: after) }
        return true
    }

    /// `body` applied to a record reached in place, with the plain values the index follows
    /// before and after, and its client.
    private static func change(_ st: inout StreamInfo, _ body: (inout StreamInfo) -> Void) -> (DecisionShare, DecisionShare, ClientID) {
        let before = DecisionShare(st)
        body(&st)
        return (before, DecisionShare(st), st.client)
    }

    /// `PolicyStep.activationIsRequest`, read where the record lies: a read through the
    /// dictionary's getter copies the record (its strings and facts' box retained and
    /// released again), and most owners' activations ask nothing.
    mutating func activationIsRequestInPlace(_ n: NodeID) -> Bool {
        guard let i = model.streams.index(forKey: n) else { return false }
        return Self.holdsPause(&model.streams.values[i])
    }

    /// `SessionPolicy.removalMayWaitInPlace`: the graph is quiet, and stream `n` is known
    /// and the policy holds nothing on it (no pause, held or let go of, no fade, switch hold,
    /// lost output, silencing, duck or listening). Read where the records lie.
    mutating func removalMayWaitInPlace(_ n: NodeID) -> Bool {
        guard graphIsQuiet, !model.monitors.contains(n), let i = model.streams.index(forKey: n) else { return false }
        return Self.holdsNothing(&model.streams.values[i])
    }

    /// Nothing is interrupted or ducked, no call, recording, primary or non-mixable session is
    /// active, nothing is listened to, no end is held for its grace period and no profile
    /// switch is under way.
    var graphIsQuiet: Bool {
        index.victimsOf.isEmpty && index.activeCalls.isEmpty && index.activeDuckers.isEmpty
            && index.activeRecorders.isEmpty && index.activeNonMixable.isEmpty && index.primary.isEmpty
            && index.listened.isEmpty && model.held.isEmpty && model.profileSwitches.isEmpty
    }

    /// `SessionPolicy.startMayWaitInPlace`: the graph is quiet, silent mode is off, the screen
    /// is not locked (either silences an ambient stream as it starts) and no session prefers
    /// to be spared alerts; the stream is a known output that is not running
    /// and the policy holds nothing on; its program captures nothing (its start cannot make it
    /// a call, R43); and its session is managed, mixable, of normal priority, neither an alert
    /// nor transient, and asks for no duck or spoken-audio interruption.
    mutating func startMayWaitInPlace(_ n: NodeID) -> Bool {
        guard graphIsQuiet, !model.silentMode, !model.screenLocked, index.activeNoAlerts.isEmpty,
              let i = model.streams.index(forKey: n), Self.holdsNothing(&model.streams.values[i]),
              Self.isIdleOutput(&model.streams.values[i]) else { return false }
        let part = ProgramPart(model.streams.values[i])
        if let activity = index.activityOfProgram[program(of: part)], activity.capturing > 0 { return false }
        guard let s = sessionOfInPlace(n), let t = traits(s) else { return false }
        return !t.unmanaged && t.mixable && t.priorityClass == .normal && !t.isAlert && !t.transient && !t.hasInput
            && !t.options.contains(.duckOthers) && !t.options.contains(.interruptSpokenAudioAndMixWithOthers)
            && !ambientWhenOtherAudioPlays(s)
    }

    private static func isIdleOutput(_ st: inout StreamInfo) -> Bool {
        st.direction == .output && !st.running
    }

    private static func holdsNothing(_ st: inout StreamInfo) -> Bool {
        !st.pausedByPolicy && !st.pauseReleased && !st.resumedByPolicy && st.fade == .none && st.switchHold == nil
            && st.lostOutput == nil && !st.silenced && !st.listened && st.duckGain == 1
    }

    private static func holdsPause(_ st: inout StreamInfo) -> Bool {
        st.pausedByPolicy || st.pauseReleased
    }

    /// The stream's session (`PolicyReading.sessionOf`), its client read where the record
    /// lies: a lookup through the dictionary's getter copies the whole record.
    mutating func sessionOfInPlace(_ n: NodeID) -> SessionID? {
        guard let i = model.streams.index(forKey: n) else { return nil }
        let c = Self.client(&model.streams.values[i])
        return index.declaredClients.contains(c) ? .client(c) : .stream(n)
    }

    /// The stream's direction, read where the record lies (nil: no such stream).
    mutating func directionInPlace(_ n: NodeID) -> StreamDirection? {
        guard let i = model.streams.index(forKey: n) else { return nil }
        return Self.direction(&model.streams.values[i])
    }

    private static func client(_ st: inout StreamInfo) -> ClientID { st.client }
    private static func direction(_ st: inout StreamInfo) -> StreamDirection { st.direction }
    private static func programPart(_ st: inout StreamInfo) -> ProgramPart { ProgramPart(st) }

    /// The index brought up to date after the decisions on the stream at `i` changed in
    /// place (its facts as they were), from the plain values.
    private mutating func followDecisions(_ n: NodeID, at i: Dictionary<NodeID, StreamInfo>.Index, client: ClientID,
                                          before: DecisionShare, after: DecisionShare) {
        countGains(of: client, from: before.gains, to: after.gains)
        if before.listened != after.listened { noteListened(n, after.listened) }
        if before.runs != after.runs || before.heard != after.heard {
            // Only what the program's activity reads is taken from the record (its facts'
            // box, its client and direction), and whether the stream takes part is asked
            // once: the facts, and so the answer, are the same before and after.
            let part = Self.programPart(&model.streams.values[i])
            let key = program(of: part)
            let takesPart = takesPartWhenRunning(n, part)
            moveProgram(n, from: (key, activity(of: part, takesPart: takesPart, runs: before.runs, heard: before.heard)),
                        to: (key, activity(of: part, takesPart: takesPart, runs: after.runs, heard: after.heard)),
                        direction: part.direction)
        }
    }

    /// `st` is the stream's record with new decisions (and running state), its facts as
    /// they were: cheaper than `setStream`, which also follows a change of facts.
    mutating func setDecisions(_ n: NodeID, _ st: StreamInfo) {
        if !updateStream(n, { $0 = st }) { setStream(n, st) }
    }

    /// The output stream of a virtual sink (nil: gone; its links must be gone first).
    mutating func setRelay(_ n: NodeID, _ relay: RelayInfo?) {
        if let relay {
            model.relays[n] = relay
            // The relay of a group is its lowest node: the same whatever the order they came in.
            if let known = index.relayOfGroup[relay.linkGroup], known < n {} else { index.relayOfGroup[relay.linkGroup] = n }
            refreshStreams(behindRelay: n)
        } else if let old = model.relays.removeValue(forKey: n) {
            if index.relayOfGroup[old.linkGroup] == n {
                index.relayOfGroup[old.linkGroup] = model.relays.keys.sorted().first { model.relays[$0]?.linkGroup == old.linkGroup }
            }
            for e in (index.sinksOfGroup[old.linkGroup] ?? []).sorted() { refreshRoutes(linkedTo: e) }
        }
    }

    /// A relay's own properties changed (it stays one while its node lives).
    mutating func setRelayFacts(_ n: NodeID, _ facts: StreamFacts) {
        model.relays[n]?.facts = facts
    }

    /// A sink's or source's record: added, replaced (facts, port, mute) or removed (nil;
    /// its links must be gone first). The routes of the streams linked to it follow.
    mutating func setEndpoint(_ e: NodeID, _ info: EndpointInfo?) {
        // R43: a source that comes or goes makes its capture streams microphones or not.
        let kindChanges = model.endpoints[e]?.kind != info?.kind
        let captures = kindChanges ? capturesLinked(to: e) : []
        let old: EndpointInfo?
        if let info { old = model.endpoints.updateValue(info, forKey: e) } else { old = model.endpoints.removeValue(forKey: e) }
        if info == nil { model.earlyRoutes[e] = nil }
        noteSinkGroup(e, old: old, new: info)
        if isPrivateOutput(e) { index.privateOutputs.insert(e) } else if !index.privateOutputs.isEmpty { index.privateOutputs.remove(e) }
        guard old?.port != info?.port || old?.kind != info?.kind || old?.portLost != info?.portLost || old?.facts.linkGroup != info?.facts.linkGroup else {
            return
        }
        index.availableRoute = availableRoute()
        refreshRoutes(linkedTo: e)
        for (n, before) in captures { recountActivity(n, before: before) }
    }

    /// The capture streams linked from `e`, each once (a stereo source links a stream once
    /// per channel), with what each adds to its program now.
    func capturesLinked(to e: NodeID) -> [(NodeID, ProgramActivity)] {
        var out: [(NodeID, ProgramActivity)] = []
        var seen: Set<NodeID> = []
        for l in (index.linksOfNode[e] ?? []).sorted() {
            guard let link = model.links[l], link.output == e, let st = model.streams[link.input], st.direction == .input,
                  seen.insert(link.input).inserted else { continue }
            out.append((link.input, activity(of: link.input, st)))
        }
        return out
    }

    mutating func updateEndpoint(_ e: NodeID, _ body: (inout EndpointInfo) -> Void) {
        guard var ep = model.endpoints[e] else { return }
        body(&ep)
        setEndpoint(e, ep)
    }

    /// A route read for an endpoint not added yet (nil: taken by its `endpointAdded`).
    mutating func setEarlyRoute(_ e: NodeID, _ reading: RouteReading?) {
        model.earlyRoutes[e] = reading
    }

    /// A link (nil: removed). The routes of the streams at both ends follow.
    mutating func setLink(_ l: LinkID, _ link: LinkInfo?) {
        if let old = model.links[l] {
            // R43: whether a capture stream records a microphone follows its links.
            let before = model.streams[old.input].map { activity(of: old.input, $0) }
            model.links[l] = nil
            unindexLink(l, old)
            refreshRoute(ofStream: old.output)
            refreshRoute(ofStream: old.input)
            if model.relays[old.output] != nil { refreshStreams(behindRelay: old.output) }
            if let before { recountActivity(old.input, before: before) }
        }
        guard let link else { return }
        let before = model.streams[link.input].map { activity(of: link.input, $0) }
        model.links[l] = link
        index.linksOfNode[link.output, default: []].insert(l)
        index.linksOfNode[link.input, default: []].insert(l)
        refreshRoute(ofStream: link.output)
        refreshRoute(ofStream: link.input)
        if model.relays[link.output] != nil { refreshStreams(behindRelay: link.output) }
        if let before { recountActivity(link.input, before: before) }
    }

    /// A capture stream that records a sink's monitor (false: no longer, or gone).
    @discardableResult
    mutating func setMonitor(_ n: NodeID, _ on: Bool) -> Bool {
        on ? model.monitors.insert(n).inserted : model.monitors.remove(n) != nil
    }

    // MARK: the policy's records

    /// A session's marks (nil: forgotten). Who interrupted whom (`victimsOf`) follows.
    mutating func setMarks(_ s: SessionID, _ marks: SessionMarks?) {
        let old = marks.map { model.marks.updateValue($0, forKey: s) } ?? model.marks.removeValue(forKey: s)
        moveVictim(s, from: old?.interruption?.cause, to: marks?.interruption?.cause)
    }

    /// Keeps `index.victimsOf` in step with a session whose interruption's cause went from
    /// `before` to `after`.
    private mutating func moveVictim(_ s: SessionID, from before: InterruptionCause?, to after: InterruptionCause?) {
        guard before != after else { return }
        if let before {
            index.victimsOf[before]?.remove(s)
            if index.victimsOf[before]?.isEmpty == true { index.victimsOf[before] = nil }
        }
        if let after { index.victimsOf[after, default: []].insert(s) }
    }

    /// Changes a session's marks in place (a session without marks starts from none): the
    /// record is changed where it lies, not copied out and written back.
    mutating func updateMarks(_ s: SessionID, _ body: (inout SessionMarks) -> Void) {
        guard let i = model.marks.index(forKey: s) else {
            var m = SessionMarks()
            body(&m)
            setMarks(s, m)
            return
        }
        let (before, after) = Self.changeMarks(&model.marks.values[i], body)
        moveVictim(s, from: before, to: after)
    }

    /// R18: the session's own program paused or deactivated it while it was interrupted, so
    /// the interruption's end does not resume it. Changed where it lies; the interruption's
    /// cause stays, and a session without an interruption is left as it is.
    mutating func notePausedItself(_ s: SessionID) {
        guard let i = model.marks.index(forKey: s), model.marks.values[i].interruption != nil else { return }
        model.marks.values[i].interruption?.pausedItself = true
    }

    private static func changeMarks(_ m: inout SessionMarks, _ body: (inout SessionMarks) -> Void)
        -> (InterruptionCause?, InterruptionCause?) {
        let before = m.interruption?.cause
        body(&m)
        return (before, m.interruption?.cause)
    }

    /// `read` applied to a session's marks where they lie (nil: the session has none): a
    /// lookup through the dictionary's getter copies the whole record.
    mutating func readMarks<T>(_ s: SessionID, _ read: (inout SessionMarks) -> T) -> T? {
        guard let i = model.marks.index(forKey: s) else { return nil }
        return read(&model.marks.values[i])
    }

    /// Whether the client's streams form one session (it declares).
    mutating func setDeclared(_ c: ClientID, _ declared: Bool) {
        if declared { index.declaredClients.insert(c) } else { index.declaredClients.remove(c) }
    }

    /// Puts the session in exactly the activity sets of `new`; returns the sets that changed.
    mutating func setMembership(_ s: SessionID, _ new: Membership) -> Membership {
        let old = index.membership[s] ?? []
        guard old != new else { return [] }
        if new.isEmpty { index.membership[s] = nil } else { index.membership[s] = new }
        let changed = old.symmetricDifference(new)
        func apply(_ flag: Membership, _ set: inout Set<SessionID>) {
            guard changed.contains(flag) else { return }
            if new.contains(flag) { set.insert(s) } else { set.remove(s) }
        }
        apply(.active, &index.active)
        apply(.nonMixable, &index.activeNonMixable)
        apply(.call, &index.activeCalls)
        apply(.ducker, &index.activeDuckers)
        apply(.recorder, &index.activeRecorders)
        apply(.noAlerts, &index.activeNoAlerts)
        apply(.playing, &index.playing)
        apply(.primary, &index.primary)
        return changed
    }

    /// Sets a global switch; returns whether it changed.
    mutating func setSwitch(_ s: GlobalSwitch, _ on: Bool) -> Bool {
        switch s {
        case .silentMode:
            guard model.silentMode != on else { return false }
            model.silentMode = on
        case .screenLock:
            guard model.screenLocked != on else { return false }
            model.screenLocked = on
        }
        return true
    }

    /// Remembers the switches a client asked for (granted or not).
    mutating func rememberSwitchRequest(_ c: ClientID, _ asked: SwitchRequest) {
        var kept = model.switchRequests[c] ?? SwitchRequest()
        for s in GlobalSwitch.allCases where asked[s] != nil { kept[s] = asked[s] }
        model.switchRequests[c] = kept
    }

    /// Holds an ended session's interruptions for the grace period; returns its timer token.
    mutating func hold(_ end: HeldEnd) -> UInt64 {
        model.lastTimerToken &+= 1
        model.held[model.lastTimerToken] = end
        return model.lastTimerToken
    }

    /// A new timer token (grace periods and profile-switch windows share the sequence).
    mutating func newTimerToken() -> UInt64 {
        model.lastTimerToken &+= 1
        return model.lastTimerToken
    }

    mutating func setDevice(_ d: DeviceID, _ profile: DeviceProfile?) {
        model.devices[d] = profile
    }

    mutating func setProfileSwitch(_ d: DeviceID, _ s: ProfileSwitch?) {
        model.profileSwitches[d] = s
    }

    /// What `token` held, no longer held.
    mutating func takeHeld(_ token: UInt64) -> HeldEnd? {
        model.held.removeValue(forKey: token)
    }

    /// What was published for a session (nil: removed); returns the previous value.
    @discardableResult
    mutating func setPublished(_ s: SessionID, _ snapshot: SessionSnapshot?) -> SessionSnapshot? {
        guard let snapshot else { return model.published.removeValue(forKey: s) }
        return model.published.updateValue(snapshot, forKey: s)
    }

    /// Marks the session's published state as to be made when it is written.
    mutating func setUnsettled(_ s: SessionID) {
        model.unsettled.insert(s)
    }

    /// The session's published state made now if a decision touched it since it was last
    /// made (stored as published), else what was published.
    mutating func settle(_ s: SessionID) -> SessionSnapshot? {
        guard takeUnsettled(s) else { return model.published[s] }
        let snapshot = sessionSnapshot(s)
        setPublished(s, snapshot)
        return snapshot
    }

    /// Whether the session was unsettled (it no longer is).
    mutating func takeUnsettled(_ s: SessionID) -> Bool {
        model.unsettled.remove(s) != nil
    }

    mutating func setPublishedGlobal(_ g: GlobalSnapshot) {
        model.lastGlobal = g
    }

    /// A client's accepted MPRIS report (nil: none); returns the previous one.
    @discardableResult
    mutating func setPlayerReport(_ c: ClientID, _ report: PlayerReport?) -> PlayerReport? {
        guard let report else { return model.playerReports.removeValue(forKey: c) }
        return model.playerReports.updateValue(report, forKey: c)
    }

    mutating func setPublishedPlayers(_ players: [NodeID: String]) {
        model.publishedPlayers = players
    }
}

// MARK: the index's upkeep

extension PolicyState {
    /// A program to review (R43), if any is left; taken out of the set.
    mutating func takeProgramToReview() -> ProgramKey? {
        programsToReview.popFirst()
    }

    /// Whether the module listens to the stream (the index's `listened`).
    mutating func noteListened(_ n: NodeID, _ on: Bool) {
        if on { index.listened.insert(n) } else { index.listened.remove(n) }
    }

    /// Whether programs wait for review (only while the policy listens to outputs: the
    /// review does nothing otherwise) or sessions for their trait changes (R43).
    var hasProgramWork: Bool {
        (configuration.listensToOutputs && !programsToReview.isEmpty) || !traitChanges.isEmpty
    }

    /// Forgets the programs left to review and the trait changes left to apply: a step
    /// leaves neither behind (the next event's review sees the state as it is).
    mutating func dropProgramWork() {
        // Nothing is done to what is empty and small: most steps leave neither behind.
        if !programsToReview.isEmpty || programsToReview.capacity > 64 { programsToReview = Set() }
        if !traitChanges.isEmpty || traitChanges.capacity > 64 { traitChanges = Dictionary() }
    }

    /// The sessions whose traits the graph changed since the last call, with their traits before.
    mutating func takeTraitChanges() -> [SessionID: SessionTraits] {
        var taken = [SessionID: SessionTraits]()
        if !traitChanges.isEmpty { swap(&taken, &traitChanges) }
        return taken
    }

    /// R43: a stream changed what it adds to its program (`before`, counted until now): the
    /// count follows; when the program starts or stops being in a call every one of its
    /// streams' traits is recomputed, otherwise only this stream's (it may have become or
    /// stopped being a recording).
    mutating func recountActivity(_ n: NodeID, before: ProgramActivity) {
        guard let st = model.streams[n] else { return }
        let key = program(of: st)
        moveProgram(n, from: (key, before), to: (key, activity(of: n, st)))
    }

    /// Moves a stream's share of activity between programs (or within one), and recomputes
    /// the traits that change with it.
    mutating func moveProgram(_ n: NodeID, from old: (ProgramKey, ProgramActivity)?, to new: (ProgramKey, ProgramActivity)?,
                              direction known: StreamDirection? = nil) {
        // R43: a program has outputs to listen to, or to stop listening to, only while it
        // captures (or did until this move): only such a program is reviewed.
        let oldCaptured = old.map { captures($0.0) } ?? false
        let newCaptured = new.map { captures($0.0) } ?? false
        defer {
            if configuration.listensToOutputs {
                if let o = old?.0, o == new?.0 {
                    // The same program before and after (a stream that starts or stops): once.
                    noteReview(n, o, capturedBefore: oldCaptured || newCaptured)
                } else {
                    noteReview(n, old?.0, capturedBefore: oldCaptured)
                    noteReview(n, new?.0, capturedBefore: newCaptured)
                }
            }
        }
        if old?.0 != new?.0 {
            if let old { removeFromProgram(n, old.0) }
            if let new { addToProgram(n, new.0) }
        }
        guard old?.0 != new?.0 || old?.1 != new?.1 else {
            // Its share is the same; a capture stream's own traits may not be (a new link from
            // a microphone makes it a recording before it runs). A playing stream's follow
            // its program's call only.
            if new != nil, (known ?? directionInPlace(n)) == .input { refreshInferred(n) }
            return
        }
        // Whether each program starts or stops being in a call.
        let oldFlipped = old.map { count($0.0, $0.1, sign: -1) } ?? false
        let newFlipped = new.map { count($0.0, $0.1, sign: 1) } ?? false
        if oldFlipped, let key = old?.0 { refreshProgram(key) }
        if newFlipped, let key = new?.0, key != old?.0 || !oldFlipped { refreshProgram(key) }
        let refreshed = (newFlipped || (oldFlipped && new?.0 == old?.0))
        if new != nil, !refreshed, (known ?? directionInPlace(n)) == .input { refreshInferred(n) }
    }

    private static func listenedOrHeard(_ st: inout StreamInfo) -> Bool { st.listened || st.heard }

    /// Whether the program captures a microphone now (R43).
    func captures(_ key: ProgramKey) -> Bool {
        (index.activityOfProgram[key]?.capturing ?? 0) > 0
    }

    /// Notes the program for review (R43) when it captures now or did before the move of
    /// stream `n`, or when `n` is listened to or was heard (it moved out of a capturing
    /// program). A program that captures nothing has no output listened to or heard.
    mutating func noteReview(_ n: NodeID, _ key: ProgramKey?, capturedBefore: Bool) {
        guard let key else { return }
        if capturedBefore || captures(key) {
            programsToReview.insert(key)
            return
        }
        // Two flags read where the record lies: no copy of it.
        guard let i = model.streams.index(forKey: n) else { return }
        if Self.listenedOrHeard(&model.streams.values[i]) { programsToReview.insert(key) }
    }

    /// Adds (`sign` 1) or takes away (-1) a stream's share of its program's activity;
    /// returns whether the program started or stopped being in a call.
    mutating func count(_ key: ProgramKey, _ delta: ProgramActivity, sign: Int) -> Bool {
        guard !delta.isEmpty else { return false }
        var a = index.activityOfProgram[key] ?? ProgramActivity()
        let wasInCall = a.inCall
        a.capturing &+= sign &* delta.capturing
        a.playing &+= sign &* delta.playing
        index.activityOfProgram[key] = a.isEmpty ? nil : a
        return a.inCall != wasInCall
    }

    /// R43: recomputes the cached traits of a program's streams and notes each session whose
    /// traits changed.
    mutating func refreshProgram(_ key: ProgramKey) {
        for n in index.streamsOfProgram[key]?.nodes ?? [] { refreshInferred(n) }
    }

    /// Recomputes one stream's cached traits and notes the change (a stream not derived yet,
    /// being added, is left to `refreshDerived`).
    mutating func refreshInferred(_ n: NodeID) {
        guard configuration.callsFromGraph else { return }
        let s = SessionID.stream(n)
        guard let old = index.derived[s] else { return }
        let new = deriveTraits(s)
        guard new != old else { return }
        index.derived[s] = new
        if traitChanges[s] == nil { traitChanges[s] = old.traits }
    }

    /// The program of a stream whose client had `processOfClient` as its process.
    func program(of st: StreamInfo, processOfClient: UInt32?) -> ProgramKey {
        if let p = st.facts.processID ?? processOfClient { return .process(p) }
        return .client(st.client)
    }

    mutating func addToProgram(_ n: NodeID, _ key: ProgramKey) {
        index.streamsOfProgram[key, default: []].insert(n)
    }

    mutating func removeFromProgram(_ n: NodeID, _ key: ProgramKey) {
        if index.streamsOfProgram[key]?.remove(n) != nil, index.streamsOfProgram[key]?.isEmpty == true {
            index.streamsOfProgram[key] = nil
        }
    }

    /// Recomputes the whole index from the model.
    mutating func rebuildIndex() {
        index = PolicyIndex()
        for (e, ep) in model.endpoints { noteSinkGroup(e, old: nil, new: ep) }
        for (n, r) in model.relays.sorted(by: { $0.key < $1.key }) where index.relayOfGroup[r.linkGroup] == nil {
            index.relayOfGroup[r.linkGroup] = n
        }
        for (n, st) in model.streams {
            if st.listened { index.listened.insert(n) }
            index.streamsOfClient[st.client, default: []].insert(n)
            addToProgram(n, program(of: st))
            noteDeclaring(n, client: st.client)
            countGains(of: st.client, removing: nil, adding: st)
        }
        for (l, link) in model.links {
            index.linksOfNode[link.output, default: []].insert(l)
            index.linksOfNode[link.input, default: []].insert(l)
        }
        for n in model.streams.keys { refreshRoute(ofStream: n) }
        for (n, st) in model.streams {
            let a = activity(of: n, st)
            guard !a.isEmpty else { continue }
            index.activityOfProgram[program(of: st), default: ProgramActivity()].capturing &+= a.capturing
            index.activityOfProgram[program(of: st), default: ProgramActivity()].playing &+= a.playing
        }
        for c in model.clients.keys { refreshDerived(ofClient: c) }
        for n in model.streams.keys where index.derived[.stream(n)] == nil { index.derived[.stream(n)] = deriveTraits(.stream(n)) }
        for (s, m) in model.marks {
            if let i = m.interruption { index.victimsOf[i.cause, default: []].insert(s) }
        }
        index.availableRoute = availableRoute()
        for e in model.endpoints.keys where isPrivateOutput(e) { index.privateOutputs.insert(e) }
        // Which clients declare and each session's activity sets, as the rules keep them
        // (`updateDeclared`, `updateMembership`).
        for c in model.clients.keys where computeDeclared(c) { index.declaredClients.insert(c) }
        for s in model.marks.keys { _ = setMembership(s, membership(s)) }
    }

    /// The index of `model`, computed from nothing else.
    static func rebuilt(from model: PolicyModel, configuration: PolicyConfiguration) -> PolicyIndex {
        PolicyState(configuration: configuration, model: model).index
    }

    /// Whether the index equals one rebuilt from the model: every table, no exemption.
    func agreesWithRebuild() -> Bool {
        let rebuilt = PolicyState.rebuilt(from: model, configuration: configuration)
        guard index == rebuilt else { return false }
        // The merged route from endpoint counts equals a walk of the client's streams.
        for c in index.streamsOfClient.keys where clientRoute(c) != route(.client(c)) { return false }
        return true
    }

    /// Recomputes the cached traits of the client's session and of each of its streams'
    /// legacy sessions (a legacy session reads its client's properties too).
    mutating func refreshDerived(ofClient c: ClientID) {
        index.derived[.client(c)] = model.clients[c] == nil ? nil : deriveTraits(.client(c))
        for n in index.streamsOfClient[c] ?? [] { index.derived[.stream(n)] = deriveTraits(.stream(n)) }
    }

    /// After a change to one stream (added, removed, new properties): the client's session
    /// (its declaration may come from its first stream) and that stream's legacy session.
    mutating func refreshDerived(ofClient c: ClientID, stream n: NodeID) {
        index.derived[.client(c)] = model.clients[c] == nil ? nil : deriveTraits(.client(c))
        index.derived[.stream(n)] = deriveTraits(.stream(n))
    }

    /// Keeps `declaringStreamsOfClient` in step after the stream came, changed or went.
    mutating func noteDeclaring(_ n: NodeID, client c: ClientID) {
        if model.streams[n]?.facts.declaration.declares == true {
            index.declaringStreamsOfClient[c, default: []].insert(n)
        } else if index.declaringStreamsOfClient[c]?.remove(n) != nil, index.declaringStreamsOfClient[c]?.isEmpty == true {
            index.declaringStreamsOfClient[c] = nil
        }
    }

    /// Keeps each client's count of output streams per gain and silence in step.
    mutating func countGains(of c: ClientID, removing old: StreamInfo?, adding new: StreamInfo?) {
        countGains(of: c, from: old.flatMap(DecisionShare.gains), to: new.flatMap(DecisionShare.gains))
    }

    /// Moves one output stream of `c` from the gains `before` to `after` (nil: not an output,
    /// or no stream).
    mutating func countGains(of c: ClientID, from before: UniformGains?, to after: UniformGains?) {
        guard before != after else { return }
        if let before, let i = index.gainsOfClient[c]?.index(forKey: before) {
            if index.gainsOfClient[c]?.values[i] ?? 0 > 1 {
                index.gainsOfClient[c]?.values[i] &-= 1
            } else {
                index.gainsOfClient[c]?.remove(at: i)
                if index.gainsOfClient[c]?.isEmpty == true { index.gainsOfClient[c] = nil }
            }
        }
        if let after { index.gainsOfClient[c, default: [:]][after, default: 0] &+= 1 }
    }

    mutating func noteSinkGroup(_ e: NodeID, old: EndpointInfo?, new: EndpointInfo?) {
        if let o = old, o.kind == .sink, let g = Self.linkGroup(o.facts.linkGroup) {
            index.sinksOfGroup[g]?.remove(e)
            if index.sinksOfGroup[g]?.isEmpty == true { index.sinksOfGroup[g] = nil }
        }
        if let ep = new, ep.kind == .sink, let g = Self.linkGroup(ep.facts.linkGroup) {
            index.sinksOfGroup[g, default: []].insert(e)
        }
    }

    mutating func unindexLink(_ l: LinkID, _ link: LinkInfo) {
        index.linksOfNode[link.output]?.remove(l)
        if index.linksOfNode[link.output]?.isEmpty == true { index.linksOfNode[link.output] = nil }
        index.linksOfNode[link.input]?.remove(l)
        if index.linksOfNode[link.input]?.isEmpty == true { index.linksOfNode[link.input] = nil }
    }

    /// Recomputes the cached route of the node if it is a stream (one of its links changed),
    /// and its client's endpoint counts.
    mutating func refreshRoute(ofStream n: NodeID) {
        guard let st = model.streams[n] else {
            index.streamRoutes[n] = nil
            return
        }
        let (route, reached) = computeStreamRoute(n, st)
        index.streamRoutes[n] = route
        let old = index.streamEndpoints.updateValue(reached, forKey: n) ?? StreamEndpoints()
        if old != reached { countEndpoints(of: st.client, removing: old, adding: reached) }
    }

    /// A stream goes away: its cached route and its share of its client's endpoint counts.
    mutating func forgetRoute(ofStream n: NodeID, client c: ClientID) {
        index.streamRoutes[n] = nil
        if let old = index.streamEndpoints.removeValue(forKey: n) { countEndpoints(of: c, removing: old, adding: StreamEndpoints()) }
    }

    mutating func countEndpoints(of c: ClientID, removing old: StreamEndpoints, adding new: StreamEndpoints) {
        func add(_ counts: inout [NodeID: Int], _ e: NodeID) {
            counts[e, default: 0] &+= 1
        }
        func remove(_ counts: inout [NodeID: Int], _ e: NodeID) {
            guard let i = counts.index(forKey: e) else { return }
            if counts.values[i] > 1 { counts.values[i] &-= 1 } else { counts.remove(at: i) }
        }
        var counts = index.endpointsOfClient.removeValue(forKey: c) ?? EndpointCounts()
        for e in old.outputs { remove(&counts.outputs, e) }
        for e in old.inputs { remove(&counts.inputs, e) }
        for e in new.outputs { add(&counts.outputs, e) }
        for e in new.inputs { add(&counts.inputs, e) }
        if !counts.isEmpty { index.endpointsOfClient[c] = counts }
    }

    /// Recomputes the cached routes of the streams linked to an endpoint whose port changed
    /// (or that appeared or went away).
    mutating func refreshRoutes(linkedTo e: NodeID) {
        for n in streamsLinked(to: e).sorted() { refreshRoute(ofStream: n) }
    }

    /// Recomputes the routes of the streams playing into the relay's sink(s).
    mutating func refreshStreams(behindRelay n: NodeID) {
        guard let r = model.relays[n] else { return }
        for e in (index.sinksOfGroup[r.linkGroup] ?? []).sorted() { refreshRoutes(linkedTo: e) }
    }
}

/// The plain values of a stream's record that the index follows for its decisions: its
/// gains (an output's), whether it is listened to, runs and was heard. Read and compared
/// without touching the record's strings or its facts' box.
struct DecisionShare: Equatable {
    var gains: UniformGains?
    var listened: Bool
    var runs: Bool
    var heard: Bool

    /// Borrowed: an initializer's argument is otherwise the caller's copy, its strings and
    /// facts' box retained and released again.
    init(_ st: borrowing StreamInfo) {
        gains = Self.gains(st)
        listened = st.listened
        runs = st.runs
        heard = st.heard
    }

    /// An output stream's gains; nil for a capture stream.
    static func gains(_ st: StreamInfo) -> UniformGains? {
        st.direction == .output ? UniformGains(gain: st.duckGain, silenced: st.silenced) : nil
    }
}

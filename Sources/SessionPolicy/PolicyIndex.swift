/// Everything the policy derives from its model so that one event costs the same whatever
/// the number of sessions: a client's streams in node order, links by node, each stream's
/// route, cached traits, the activity sets and each session's membership of them.
///
/// Nothing here is truth: `rebuilt(from:)` recomputes all of it from a `PolicyModel`, and
/// `indexAgreesWithRebuild()` (tests) compares the index an event sequence left with that
/// recomputation. The rule for whoever changes the model: a change to a client's or a
/// stream's properties or declaration, or to a client's set of streams, is followed at once
/// (before anything reads `traits`) by `refreshDerived(ofClient:)`; a link, endpoint or
/// stream change by `refreshRoute(ofStream:)`; the activity sets change only through
/// `setMembership`.
struct PolicyIndex: Equatable {
    var streamsOfClient: [ClientID: NodeList] = [:]
    /// The client's streams whose own properties carry an `audio.session.*` key (the only
    /// ones that can declare, ask activation or ask to notify others), in node order.
    var declaringStreamsOfClient: [ClientID: NodeList] = [:]
    var linksOfNode: [NodeID: Set<LinkID>] = [:]
    /// The sinks with a `node.link-group`, by group, and the relay of each group.
    var sinksOfGroup: [LinkGroup: Set<NodeID>] = [:]
    var relayOfGroup: [LinkGroup: NodeID] = [:]
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
    /// its gains nor for its published duckGain and silenced. Optional: a rebuild has none.
    var uniformGains: [ClientID: UniformGains] = [:]
    /// The clients whose streams form one session (they declare).
    var declaredClients: Set<ClientID> = []
    /// The sessions each cause keeps interrupted.
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
    /// Every endpoint present, as the global `currentRoute` publishes it; nil until read
    /// after a change of endpoints. Optional: a rebuild has none.
    var availableRoute: Route?

    /// The index of `model`, computed from nothing else.
    static func rebuilt(from model: PolicyModel, configuration: PolicyConfiguration) -> PolicyIndex {
        var step = PolicyStep(configuration: configuration)
        step.model = model
        step.rebuildIndex()
        return step.index
    }
}

/// A client's streams, kept sorted by node (the order effects are emitted in), so reading
/// them in order needs no sort and no new array.
struct NodeList: Sequence, Equatable, ExpressibleByArrayLiteral {
    private(set) var nodes: [NodeID] = []

    init(arrayLiteral elements: NodeID...) {
        for n in elements { insert(n) }
    }

    var isEmpty: Bool { nodes.isEmpty }
    var first: NodeID? { nodes.first }

    /// The first index whose node is not below `n` (binary search).
    private func lowerBound(_ n: NodeID) -> Int {
        var low = 0
        var high = nodes.count
        while low < high {
            let mid = low + (high - low) / 2
            if nodes[mid] < n { low = mid + 1 } else { high = mid }
        }
        return low
    }

    func contains(_ n: NodeID) -> Bool {
        let i = lowerBound(n)
        return i < nodes.count && nodes[i] == n
    }

    @discardableResult
    mutating func insert(_ n: NodeID) -> Bool {
        let i = lowerBound(n)
        if i < nodes.count && nodes[i] == n { return false }
        nodes.insert(n, at: i)
        return true
    }

    @discardableResult
    mutating func remove(_ n: NodeID) -> NodeID? {
        let i = lowerBound(n)
        guard i < nodes.count && nodes[i] == n else { return nil }
        nodes.remove(at: i)
        return n
    }

    /// Already in order: no sort, no copy of the storage.
    func sorted() -> [NodeID] { nodes }

    func makeIterator() -> IndexingIterator<[NodeID]> { nodes.makeIterator() }
}

/// The activity sets a session belongs to (`active`, `activeNonMixable`, ...).
struct Membership: OptionSet, Equatable {
    var rawValue: UInt8
    static let active = Membership(rawValue: 1 << 0)
    static let nonMixable = Membership(rawValue: 1 << 1)
    static let call = Membership(rawValue: 1 << 2)
    static let ducker = Membership(rawValue: 1 << 3)
    static let recorder = Membership(rawValue: 1 << 4)
    static let noAlerts = Membership(rawValue: 1 << 5)
    static let playing = Membership(rawValue: 1 << 6)
    static let primary = Membership(rawValue: 1 << 7)
}

/// A session's traits as its properties make them (§1-4), cached per session.
struct DerivedTraits: Equatable {
    /// For a legacy session, with its role's own category: a Game's category chosen at
    /// activation (`SessionMarks.adaptiveCategory`) is applied when read.
    var traits: SessionTraits
    /// The options as declared (or as the role gives them), before implied ones.
    var declaredOptions: CategoryOptions
    /// The name published in the session's snapshot.
    var applicationName: String?
    /// §1 Game: ambient when other audio already plays at activation.
    var ambientWhenOtherAudioPlays: Bool

    /// The traits with the category chosen at activation applied (a Game stream's
    /// adaptive category, §1), when it differs from the declared one.
    func adapted(to adaptive: Category?) -> SessionTraits {
        var t = traits
        if let adaptive, adaptive != t.category {
            t.category = adaptive
            t.options = Declaration(category: adaptive, mode: t.mode, options: declaredOptions).effectiveOptions
        }
        return t
    }
}

extension PolicyStep {
    /// Derives a session's traits from the properties and declarations it depends on.
    /// Existence (declared or legacy) is not checked here: `traits(_:)` does that.
    func deriveTraits(_ s: SessionID) -> DerivedTraits? {
        switch s {
        case .client(let c):
            let d = declarationOf(c)
            var pc = PriorityClass.normal
            if d.category == .playAndRecord && (d.mode == .voiceChat || d.mode == .videoChat) && mayClaimCall(c, stream: nil) {
                pc = .call
            } else if d.mode == .voicePrompt {
                pc = .prompt
            }
            let t = SessionTraits(
                client: c, isLegacy: false, unmanaged: false, category: d.category, mode: d.mode,
                options: d.effectiveOptions, priorityClass: pc, priority: configuration.priorityValue(pc),
                isAlert: false, transient: false, exemptFromCalls: false,
                prefersNoAlerts: d.prefersNoInterruptionsFromSystemAlerts,
                prefersRouteInterrupt: d.prefersInterruptionOnRouteDisconnect)
            return DerivedTraits(
                traits: t, declaredOptions: d.options, applicationName: applicationName(c, stream: nil),
                ambientWhenOtherAudioPlays: false)
        case .stream(let n):
            guard let st = model.streams[n] else { return nil }
            let rule = roleRule(n)
            let d = Declaration(category: rule.category, mode: rule.mode, options: rule.options)
            var pc = rule.priority
            if pc == .call && !mayClaimCall(st.client, stream: n) { pc = .normal }
            if pc == .alarm && !mayClaimAlarm(st.client) { pc = .normal }
            let t = SessionTraits(
                client: st.client, isLegacy: true, unmanaged: rule.unmanaged, category: rule.category, mode: rule.mode,
                options: d.effectiveOptions, priorityClass: pc, priority: configuration.priorityValue(pc),
                isAlert: rule.isAlert, transient: rule.transient, exemptFromCalls: rule.exemptFromCalls,
                prefersNoAlerts: false, prefersRouteInterrupt: false)
            return DerivedTraits(
                traits: t, declaredOptions: rule.options, applicationName: applicationName(st.client, stream: n),
                ambientWhenOtherAudioPlays: rule.ambientWhenOtherAudioPlays)
        }
    }

    /// Recomputes the cached traits of the client's session and of each of its streams'
    /// legacy sessions (a legacy session reads its client's properties too).
    mutating func refreshDerived(ofClient c: ClientID) {
        index.derived[.client(c)] = model.clients[c] == nil ? nil : deriveTraits(.client(c))
        for n in index.streamsOfClient[c] ?? [] { index.derived[.stream(n)] = deriveTraits(.stream(n)) }
    }

    /// After a change to one stream (added, removed, new properties): the client's session
    /// (its declaration may come from its first stream) and that stream's legacy session.
    /// The other streams' legacy traits read only their own properties and the client's.
    mutating func refreshDerived(ofClient c: ClientID, stream n: NodeID) {
        index.derived[.client(c)] = model.clients[c] == nil ? nil : deriveTraits(.client(c))
        index.derived[.stream(n)] = deriveTraits(.stream(n))
    }

    /// Puts the session in exactly the activity sets of `new`, touching only the sets
    /// that change; marks what those changes make necessary (gains of everyone, hints).
    mutating func setMembership(_ s: SessionID, _ new: Membership) {
        let old = index.membership[s] ?? []
        guard old != new else { return }
        if new.isEmpty { index.membership[s] = nil } else { index.membership[s] = new }
        let changed = old.symmetricDifference(new)
        if changed.contains(.active) { Self.setMember(&index.active, s, new.contains(.active)) }
        if changed.contains(.nonMixable) { Self.setMember(&index.activeNonMixable, s, new.contains(.nonMixable)) }
        if changed.contains(.call) { Self.setMember(&index.activeCalls, s, new.contains(.call)) }
        if changed.contains(.ducker) {
            Self.setMember(&index.activeDuckers, s, new.contains(.ducker))
            refreshAll = true
        }
        if changed.contains(.recorder) {
            Self.setMember(&index.activeRecorders, s, new.contains(.recorder))
            refreshAll = true
        }
        if changed.contains(.noAlerts) {
            Self.setMember(&index.activeNoAlerts, s, new.contains(.noAlerts))
            refreshAll = true
        }
        if changed.contains(.playing) { Self.setMember(&index.playing, s, new.contains(.playing)) }
        if changed.contains(.primary) {
            Self.setMember(&index.primary, s, new.contains(.primary))
            hintDirty = true
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
            index.streamsOfClient[st.client, default: []].insert(n)
            noteSessionKeys(ofStream: n, client: st.client)
        }
        for (l, link) in model.links {
            index.linksOfNode[link.output, default: []].insert(l)
            index.linksOfNode[link.input, default: []].insert(l)
        }
        for n in model.streams.keys { refreshRoute(ofStream: n) }
        for c in model.clients.keys { refreshDerived(ofClient: c) }
        for n in model.streams.keys where index.derived[.stream(n)] == nil { index.derived[.stream(n)] = deriveTraits(.stream(n)) }
        for c in model.clients.keys where computeDeclared(c) { index.declaredClients.insert(c) }
        for (s, m) in model.marks {
            if let i = m.interruption { index.victimsOf[i.cause, default: []].insert(s) }
        }
        for s in model.marks.keys { updateMembership(s) }
    }

    /// Whether the index equals one rebuilt from the model (which fills neither optional
    /// cache). The two optional caches are checked for what they claim instead: every output stream of a client with uniform
    /// gains is at them, and the available route, when cached, is the endpoints present.
    func indexAgreesWithRebuild() -> Bool {
        let rebuilt = PolicyIndex.rebuilt(from: model, configuration: configuration)
        for (c, u) in index.uniformGains {
            for n in index.streamsOfClient[c] ?? [] {
                guard let st = model.streams[n], st.direction == .output else { continue }
                if st.duckGain != u.gain || st.silenced != u.silenced { return false }
            }
        }
        if let cached = index.availableRoute {
            var fresh = self
            fresh.index.availableRoute = nil
            if fresh.availableRouteCached() != cached { return false }
        }
        var mine = index
        mine.uniformGains = [:]
        mine.availableRoute = nil
        guard mine == rebuilt else { return false }
        // The merged route from endpoint counts equals a walk of the client's streams.
        for c in index.streamsOfClient.keys where clientRoute(c) != route(.client(c)) { return false }
        return true
    }
}
extension SessionPolicy {
    /// The index's members whose description differs from a rebuilt index's, for a failing
    /// test's message (a dictionary's description depends on its order, so this may list
    /// members that are equal; `indexIsConsistent` is the check).
    func indexDifferences() -> [String] {
        let rebuilt = Mirror(reflecting: PolicyIndex.rebuilt(from: model, configuration: configuration)).children
        var out: [String] = []
        for (mine, theirs) in zip(Mirror(reflecting: index).children, rebuilt) where "\(mine.value)" != "\(theirs.value)" {
            out.append("\(mine.label ?? "?"): \(mine.value) vs \(theirs.value)")
        }
        return out
    }
}

/// What the policy keeps derived from its own state so that one event costs the same
/// whatever the number of sessions: cached traits, a client's streams in node order, and
/// each session's membership of the activity sets.
///
/// The rule for whoever changes the state: a change to a client's or a stream's
/// properties or declaration, or to a client's set of streams, is followed at once
/// (before anything reads `traits`) by `refreshDerived(ofClient:)`; the activity sets
/// change only through `setMembership`. `derivedStateIsConsistent()` checks both (tests).

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

extension SessionPolicy {
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
            guard let st = streams[n] else { return nil }
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
        derived[.client(c)] = clients[c] == nil ? nil : deriveTraits(.client(c))
        for n in streamsOfClient[c] ?? [] { derived[.stream(n)] = deriveTraits(.stream(n)) }
    }

    /// After a change to one stream (added, removed, new properties): the client's session
    /// (its declaration may come from its first stream) and that stream's legacy session.
    /// The other streams' legacy traits read only their own properties and the client's.
    mutating func refreshDerived(ofClient c: ClientID, stream n: NodeID) {
        derived[.client(c)] = clients[c] == nil ? nil : deriveTraits(.client(c))
        derived[.stream(n)] = deriveTraits(.stream(n))
    }

    /// Recomputes every cached trait (rebuild).
    mutating func rebuildDerived() {
        derived = [:]
        for c in clients.keys { refreshDerived(ofClient: c) }
        for n in streams.keys where derived[.stream(n)] == nil { derived[.stream(n)] = deriveTraits(.stream(n)) }
    }

    /// Puts the session in exactly the activity sets of `new`, touching only the sets
    /// that change; marks what those changes make necessary (gains of everyone, hints).
    mutating func setMembership(_ s: SessionID, _ new: Membership) {
        let old = membership[s] ?? []
        guard old != new else { return }
        if new.isEmpty { membership[s] = nil } else { membership[s] = new }
        let changed = old.symmetricDifference(new)
        if changed.contains(.active) { Self.setMember(&active, s, new.contains(.active)) }
        if changed.contains(.nonMixable) { Self.setMember(&activeNonMixable, s, new.contains(.nonMixable)) }
        if changed.contains(.call) { Self.setMember(&activeCalls, s, new.contains(.call)) }
        if changed.contains(.ducker) {
            Self.setMember(&activeDuckers, s, new.contains(.ducker))
            refreshAll = true
        }
        if changed.contains(.recorder) {
            Self.setMember(&activeRecorders, s, new.contains(.recorder))
            refreshAll = true
        }
        if changed.contains(.noAlerts) {
            Self.setMember(&activeNoAlerts, s, new.contains(.noAlerts))
            refreshAll = true
        }
        if changed.contains(.playing) { Self.setMember(&playing, s, new.contains(.playing)) }
        if changed.contains(.primary) {
            Self.setMember(&primary, s, new.contains(.primary))
            hintDirty = true
        }
    }

    /// Whether every cache and index agrees with a recomputation from the state (tests).
    func derivedStateIsConsistent() -> Bool {
        for (c, _) in clients where derived[.client(c)] != deriveTraits(.client(c)) { return false }
        for (n, _) in streams where derived[.stream(n)] != deriveTraits(.stream(n)) { return false }
        if streamRoutes.count != streams.count { return false }
        for (n, st) in streams where streamRoutes[n] != computeStreamRoute(n, st).route { return false }
        if streamEndpoints.count != streams.count { return false }
        for (c, u) in uniformGains {
            for n in streamsOfClient[c] ?? [] {
                guard let st = streams[n], st.direction == .output else { continue }
                if st.duckGain != u.gain || st.silenced != u.silenced { return false }
            }
        }
        for (c, nodes) in streamsOfClient where clientRoute(c) != route(.client(c)) || (nodes.isEmpty && endpointsOfClient[c] != nil) {
            return false
        }
        for c in endpointsOfClient.keys where streamsOfClient[c] == nil { return false }
        for (c, keys) in clientKeys where clients[c].map({ ClientKeys($0.facts) }) != keys { return false }
        for (s, _) in derived {
            switch s {
            case .client(let c): if clients[c] == nil { return false }
            case .stream(let n): if streams[n] == nil { return false }
            }
        }
        var byClient: [ClientID: NodeList] = [:]
        for (n, st) in streams { byClient[st.client, default: []].insert(n) }
        if byClient != streamsOfClient.filter({ !$0.value.isEmpty }) { return false }
        var declaring: [ClientID: NodeList] = [:]
        for (n, st) in streams where hasSessionKey(st.facts.sessionKeys) { declaring[st.client, default: []].insert(n) }
        if declaring != declaringStreamsOfClient { return false }
        let sets: [(Membership, Set<SessionID>)] = [
            (.active, active), (.nonMixable, activeNonMixable), (.call, activeCalls), (.ducker, activeDuckers),
            (.recorder, activeRecorders), (.noAlerts, activeNoAlerts), (.playing, playing), (.primary, primary),
        ]
        for (flag, set) in sets {
            let flagged = Set(membership.filter { $0.value.contains(flag) }.map(\.key))
            if flagged != set { return false }
        }
        return true
    }
}

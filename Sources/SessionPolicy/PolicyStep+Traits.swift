/// Who a session is and what its declaration (or `media.role`) makes of it.
struct SessionTraits: Equatable {
    var client: ClientID
    var isLegacy: Bool
    var unmanaged: Bool
    var category: Category
    var mode: Mode
    /// Effective options (declared plus implied).
    var options: CategoryOptions
    var priorityClass: PriorityClass
    var priority: Int
    var isAlert: Bool
    var transient: Bool
    var exemptFromCalls: Bool
    var prefersNoAlerts: Bool
    var prefersRouteInterrupt: Bool

    var mixable: Bool { options.contains(.mixWithOthers) }
    var hasOutput: Bool { category.hasOutput }
    var hasInput: Bool { category.hasInput }
}

extension PolicyReading {
    /// The activity sets the session belongs in now (none when it is inactive or unmanaged).
    func membership(_ s: SessionID) -> Membership {
        guard let t = traits(s), !t.unmanaged, isActive(s) else { return [] }
        var m: Membership = [.active]
        if !t.mixable { m.insert(.nonMixable) }
        if t.priorityClass == .call { m.insert(.call) }
        if t.options.contains(.duckOthers) && t.hasOutput { m.insert(.ducker) }
        if t.category == .record { m.insert(.recorder) }
        if t.prefersNoAlerts { m.insert(.noAlerts) }
        if t.hasOutput && isPlayingOutput(s) {
            m.insert(.playing)
            if !t.mixable { m.insert(.primary) }
        }
        return m
    }

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
            let role = roleRule(n)
            let inferred = inferredRule(n, st, role: role)
            let rule = inferred ?? role
            let d = Declaration(category: rule.category, mode: rule.mode, options: rule.options)
            var pc = rule.priority
            if pc == .call && !(inferred == nil ? mayClaimCall(st.client, stream: n) : mayInferCall(st.client)) { pc = .normal }
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

    /// The session a stream belongs to (§1): its client's when the client declared.
    func sessionOf(_ n: NodeID) -> SessionID? {
        guard let st = model.streams[n] else { return nil }
        return index.declaredClients.contains(st.client) ? .client(st.client) : .stream(n)
    }

    func exists(_ s: SessionID) -> Bool {
        switch s {
        case .client(let c): return index.declaredClients.contains(c)
        case .stream(let n):
            guard let st = model.streams[n] else { return false }
            return !index.declaredClients.contains(st.client)
        }
    }

    func clientOf(_ s: SessionID) -> ClientID? {
        switch s {
        case .client(let c): return c
        case .stream(let n): return model.streams[n]?.client
        }
    }

    /// The session's streams, in node order.
    func streamsOf(_ s: SessionID) -> SessionStreams {
        switch s {
        case .client(let c): return SessionStreams(nodes: index.streamsOfClient[c]?.nodes ?? [])
        case .stream(let n): return SessionStreams(single: model.streams.index(forKey: n) == nil ? nil : n)
        }
    }

    /// Every managed session, in order.
    func allSessions() -> [SessionID] {
        var out: [SessionID] = index.declaredClients.sorted().map { .client($0) }
        for (n, st) in model.streams where !index.declaredClients.contains(st.client) {
            if let t = traits(.stream(n)), !t.unmanaged { out.append(.stream(n)) }
        }
        return out.sorted()
    }

    /// A client declares when its properties or one of its streams' carry `audio.session.*`.
    func computeDeclared(_ c: ClientID) -> Bool {
        if model.clients[c]?.facts.declaration.declares == true { return true }
        return index.declaringStreamsOfClient[c]?.isEmpty == false
    }

    func applicationName(_ c: ClientID, stream: NodeID? = nil) -> String? {
        if let name = model.clients[c]?.facts.applicationName { return name }
        if let n = stream { return model.streams[n]?.facts.applicationName }
        return nil
    }

    /// The identity the module established for the client (trusted when it gave none).
    func identity(_ c: ClientID) -> ClientIdentity {
        model.clients[c]?.facts.identity ?? ClientIdentity()
    }

    /// Call priority is granted, not claimed (R10): to the clients the allow list names by
    /// their identity when there is one, else to every client that is not sandboxed.
    /// What the client calls itself (`application.name`) plays no part.
    func mayClaimCall(_ c: ClientID, stream: NodeID?) -> Bool {
        let id = identity(c)
        if configuration.callPriorityApplications.isEmpty { return !id.sandboxed }
        return id.isNamed(byAnyOf: configuration.callPriorityApplications)
    }

    /// R43: a call recognised from the graph has call priority on the graph's evidence (the
    /// link from a microphone, which a sandbox grants only with the user's permission), so a
    /// sandboxed browser's call is a call too; when `callPriorityApplications` is set, only
    /// the clients it names get it.
    func mayInferCall(_ c: ClientID) -> Bool {
        let list = configuration.callPriorityApplications
        return list.isEmpty || identity(c).isNamed(byAnyOf: list)
    }

    /// Alarm priority (an alert that outranks ordinary audio) is not for sandboxed clients.
    /// The call allow list grants it too.
    func mayClaimAlarm(_ c: ClientID) -> Bool {
        let id = identity(c)
        return !id.sandboxed || id.isNamed(byAnyOf: configuration.callPriorityApplications)
    }

    /// The declaration in force for a declared client session: the client's, else the
    /// first stream's (in node order), else the default (soloAmbient, as on iOS).
    func declarationOf(_ c: ClientID) -> Declaration {
        if let d = model.clients[c]?.declaration { return d }
        // A stream with a declaration in force declares: only those are read, in node
        // order, not every stream of the client.
        for n in index.declaringStreamsOfClient[c] ?? [] {
            if let d = model.streams[n]?.declaration { return d }
        }
        return Declaration()
    }

    func roleRule(_ n: NodeID) -> RoleRule {
        guard let facts = model.streams[n]?.facts else { return configuration.noRoleRule }
        return roleRule(facts)
    }

    func roleRule(_ facts: StreamFacts) -> RoleRule {
        guard let role = facts.role, !role.rawValue.isEmpty else { return configuration.noRoleRule }
        return configuration.roleRule(role) ?? configuration.noRoleRule
    }

    /// The session's traits, `nil` when it does not exist. Read from the per-session cache
    /// (`derived`); a legacy Game's category chosen at activation is applied here.
    func traits(_ s: SessionID) -> SessionTraits? {
        switch s {
        case .client(let c):
            guard index.declaredClients.contains(c) else { return nil }
            return (index.derived[s] ?? deriveTraits(s))?.traits
        case .stream(let n):
            // The cached traits name the stream's client: its record is not read (a copy of it
            // is made by a lookup, its facts' box retained and released).
            if let d = index.derived[s] {
                guard !index.declaredClients.contains(d.traits.client) else { return nil }
                // Only a Game's category adapts: the marks are read for it alone.
                return d.ambientWhenOtherAudioPlays ? d.adapted(to: model.marks[s]?.adaptiveCategory) : d.traits
            }
            guard let client = model.streams[n]?.client, !index.declaredClients.contains(client) else { return nil }
            guard let d = deriveTraits(s) else { return nil }
            return d.adapted(to: model.marks[s]?.adaptiveCategory)
        }
    }

    func isActive(_ s: SessionID) -> Bool { model.marks[s]?.active ?? false }

    /// Output flows: some output stream runs and is not paused by the policy.
    func isPlayingOutput(_ s: SessionID) -> Bool {
        anyStream(of: s) { st in st.direction == .output && st.runs }
    }

    func hasRunningStream(_ s: SessionID) -> Bool {
        anyStream(of: s) { st in st.runs }
    }

    /// Whether one of the session's streams satisfies `test` (no array built).
    func anyStream(of s: SessionID, _ test: (StreamInfo) -> Bool) -> Bool {
        switch s {
        case .client(let c):
            for n in index.streamsOfClient[c] ?? [] {
                if let st = model.streams[n], test(st) { return true }
            }
            return false
        case .stream(let n):
            guard let st = model.streams[n] else { return false }
            return test(st)
        }
    }

    /// §1 Game: the session's category depends on other audio playing at activation.
    func ambientWhenOtherAudioPlays(_ s: SessionID) -> Bool {
        guard case .stream(let n) = s else { return false }
        return (index.derived[s] ?? deriveTraits(s))?.ambientWhenOtherAudioPlays ?? roleRule(n).ambientWhenOtherAudioPlays
    }

    /// Sets membership; returns whether it changed.
    @discardableResult
    static func setMember(_ set: inout Set<SessionID>, _ s: SessionID, _ member: Bool) -> Bool {
        if member { return set.insert(s).inserted }
        return set.remove(s) != nil
    }
}

extension PolicyStep {
    /// Keeps the derived sets in step with one session's state.
    mutating func updateMembership(_ s: SessionID) {
        setMembership(s, membership(s))
    }

    mutating func removeMembership(_ s: SessionID) {
        setMembership(s, [])
    }

    /// Puts the session in exactly the activity sets of `new`, and marks what those changes
    /// make necessary (everyone's gains, the hints).
    mutating func setMembership(_ s: SessionID, _ new: Membership) {
        let changed = state.setMembership(s, new)
        if !changed.isDisjoint(with: [.ducker, .recorder, .noAlerts]) { refreshAll = true }
        if changed.contains(.primary) { hintDirty = true }
    }
}

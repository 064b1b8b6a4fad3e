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

extension SessionPolicy {
    /// The session a stream belongs to (SPEC 1): its client's when the client declared.
    func sessionOf(_ n: NodeID) -> SessionID? {
        guard let st = streams[n] else { return nil }
        return declaredClients.contains(st.client) ? .client(st.client) : .stream(n)
    }

    func exists(_ s: SessionID) -> Bool {
        switch s {
        case .client(let c): return declaredClients.contains(c)
        case .stream(let n):
            guard let st = streams[n] else { return false }
            return !declaredClients.contains(st.client)
        }
    }

    func clientOf(_ s: SessionID) -> ClientID? {
        switch s {
        case .client(let c): return c
        case .stream(let n): return streams[n]?.client
        }
    }

    /// The session's streams, in node order.
    func streamsOf(_ s: SessionID) -> [NodeID] {
        switch s {
        case .client(let c): return (streamsOfClient[c] ?? []).sorted()
        case .stream(let n): return streams[n] == nil ? [] : [n]
        }
    }

    /// Every managed session, in order.
    func allSessions() -> [SessionID] {
        var out: [SessionID] = declaredClients.sorted().map { .client($0) }
        for (n, st) in streams where !declaredClients.contains(st.client) {
            if let t = traits(.stream(n)), !t.unmanaged { out.append(.stream(n)) }
        }
        return out.sorted()
    }

    /// A client declares when its properties or one of its streams' carry `audio.session.*`.
    func computeDeclared(_ c: ClientID) -> Bool {
        if let props = clients[c]?.properties, hasSessionKey(props) { return true }
        for n in streamsOfClient[c] ?? [] {
            if let props = streams[n]?.properties, hasSessionKey(props) { return true }
        }
        return false
    }

    func hasSessionKey(_ props: Properties) -> Bool {
        // `audio.session.control.*` (silent mode, screen lock from pw-session) declares nothing.
        props.keys.contains { $0.hasPrefix(DeclarationKey.prefix) && !$0.hasPrefix(DeclarationKey.controlPrefix) }
    }

    func applicationName(_ c: ClientID, stream: NodeID? = nil) -> String? {
        if let props = clients[c]?.properties {
            if let n = props["application.name"] { return n }
            if let b = props["application.process.binary"] { return b }
        }
        if let n = stream, let props = streams[n]?.properties {
            return props["application.name"] ?? props["application.process.binary"]
        }
        return nil
    }

    /// The application may claim call priority (R10; empty allow list = anyone).
    func mayClaimCall(_ c: ClientID, stream: NodeID?) -> Bool {
        if configuration.callPriorityApplications.isEmpty { return true }
        guard let name = applicationName(c, stream: stream) else { return false }
        return configuration.callPriorityApplications.contains(name)
    }

    /// The declaration in force for a declared client session: the client's, else the
    /// first stream's (in node order), else the default (soloAmbient, as on iOS).
    func declarationOf(_ c: ClientID) -> Declaration {
        if let d = clients[c]?.declaration { return d }
        for n in (streamsOfClient[c] ?? []).sorted() {
            if let d = streams[n]?.declaration { return d }
        }
        return Declaration()
    }

    func roleRule(_ n: NodeID) -> RoleRule {
        guard let role = streams[n]?.properties["media.role"], !role.isEmpty else {
            return configuration.noRoleRule
        }
        return configuration.roleRule(role) ?? configuration.noRoleRule
    }

    func traits(_ s: SessionID) -> SessionTraits? {
        switch s {
        case .client(let c):
            guard declaredClients.contains(c) else { return nil }
            let d = declarationOf(c)
            var pc = PriorityClass.normal
            if d.category == .playAndRecord && (d.mode == .voiceChat || d.mode == .videoChat) && mayClaimCall(c, stream: nil) {
                pc = .call
            } else if d.mode == .voicePrompt {
                pc = .prompt
            }
            return SessionTraits(
                client: c, isLegacy: false, unmanaged: false, category: d.category, mode: d.mode,
                options: d.effectiveOptions, priorityClass: pc, priority: configuration.priorityValue(pc),
                isAlert: false, transient: false, exemptFromCalls: false,
                prefersNoAlerts: d.prefersNoInterruptionsFromSystemAlerts,
                prefersRouteInterrupt: d.prefersInterruptionOnRouteDisconnect)
        case .stream(let n):
            guard let st = streams[n], !declaredClients.contains(st.client) else { return nil }
            let rule = roleRule(n)
            let category = marks[s]?.adaptiveCategory ?? rule.category
            let d = Declaration(category: category, mode: rule.mode, options: rule.options)
            var pc = rule.priority
            if pc == .call && !mayClaimCall(st.client, stream: n) { pc = .normal }
            return SessionTraits(
                client: st.client, isLegacy: true, unmanaged: rule.unmanaged, category: category, mode: rule.mode,
                options: d.effectiveOptions, priorityClass: pc, priority: configuration.priorityValue(pc),
                isAlert: rule.isAlert, transient: rule.transient, exemptFromCalls: rule.exemptFromCalls,
                prefersNoAlerts: false, prefersRouteInterrupt: false)
        }
    }

    func isActive(_ s: SessionID) -> Bool { marks[s]?.active ?? false }

    /// Output flows: some output stream runs and is not paused by the policy.
    func isPlayingOutput(_ s: SessionID) -> Bool {
        for n in streamsOf(s) {
            if let st = streams[n], st.direction == .output, st.running, !st.pausedByPolicy { return true }
        }
        return false
    }

    func hasRunningStream(_ s: SessionID) -> Bool {
        for n in streamsOf(s) {
            if let st = streams[n], st.running, !st.pausedByPolicy { return true }
        }
        return false
    }

    /// Keeps the derived sets in step with one session's state.
    mutating func updateMembership(_ s: SessionID) {
        guard let t = traits(s), !t.unmanaged, isActive(s) else {
            removeMembership(s)
            return
        }
        active.insert(s)
        Self.setMember(&activeNonMixable, s, !t.mixable)
        Self.setMember(&activeCalls, s, t.priorityClass == .call)
        if Self.setMember(&activeDuckers, s, t.options.contains(.duckOthers) && t.hasOutput) { refreshAll = true }
        if Self.setMember(&activeRecorders, s, t.category == .record) { refreshAll = true }
        if Self.setMember(&activeNoAlerts, s, t.prefersNoAlerts) { refreshAll = true }
        let isPlaying = t.hasOutput && isPlayingOutput(s)
        Self.setMember(&playing, s, isPlaying)
        if Self.setMember(&primary, s, isPlaying && !t.mixable) { hintDirty = true }
    }

    mutating func removeMembership(_ s: SessionID) {
        active.remove(s)
        activeNonMixable.remove(s)
        activeCalls.remove(s)
        if activeDuckers.remove(s) != nil { refreshAll = true }
        if activeRecorders.remove(s) != nil { refreshAll = true }
        if activeNoAlerts.remove(s) != nil { refreshAll = true }
        playing.remove(s)
        if primary.remove(s) != nil { hintDirty = true }
    }

    /// Sets membership; returns whether it changed.
    @discardableResult
    static func setMember(_ set: inout Set<SessionID>, _ s: SessionID, _ member: Bool) -> Bool {
        if member { return set.insert(s).inserted }
        return set.remove(s) != nil
    }
}

/// Publishing and rebuilding (R40, R41).
/// `AVAudioSession.mediaServicesWereLostNotification` / `mediaServicesWereResetNotification`.
extension SessionPolicy {
    /// The session's published state. Built in one pass over its streams (gain, silence,
    /// playing), with one lookup of its cached traits and of its marks; the route is cached
    /// (the stream's, or the client's endpoint counts for a session of several streams).
    func sessionSnapshot(_ s: SessionID) -> SessionSnapshot? {
        let mk = marks[s]
        let d: DerivedTraits
        var t: SessionTraits
        var gain: Float = 1
        var silenced = false
        var playingOutput = false
        var route: Route?
        func account(_ st: StreamInfo) {
            guard st.direction == .output else { return }
            gain = min(gain, st.duckGain)
            silenced = silenced || st.silenced
            if st.running && !st.pausedByPolicy { playingOutput = true }
        }
        let nodes: [NodeID]
        switch s {
        case .client(let c):
            guard declaredClients.contains(c), let found = derived[s] ?? deriveTraits(s) else { return nil }
            d = found
            t = d.traits
            guard !t.unmanaged else { return nil }
            nodes = streamsOfClient[c]?.nodes ?? []
            if nodes.count > 1, let u = uniformGains[c] {
                // Every output stream is at `u`: only whether one exists and one plays is read.
                var hasOutput = false
                for n in nodes {
                    guard let st = streams[n], st.direction == .output else { continue }
                    hasOutput = true
                    if st.running && !st.pausedByPolicy {
                        playingOutput = true
                        break
                    }
                }
                if hasOutput {
                    gain = min(gain, u.gain)
                    silenced = u.silenced
                }
            } else {
                for n in nodes {
                    if let st = streams[n] { account(st) }
                }
            }
            route = nodes.count == 1 ? streamRoutes[nodes[0]] : clientRoute(c)
        case .stream(let n):
            guard let st = streams[n], !declaredClients.contains(st.client), let found = derived[s] ?? deriveTraits(s) else { return nil }
            d = found
            guard !d.traits.unmanaged else { return nil }
            t = d.adapted(to: mk?.adaptiveCategory)
            nodes = [n]
            account(st)
            route = streamRoutes[n]
        }
        let m = mk ?? SessionMarks()
        return SessionSnapshot(
            category: t.category, mode: t.mode, options: t.options, active: m.active,
            interrupted: m.interruption != nil, interruptionReason: m.interruption?.reason,
            duckGain: gain, silenced: silenced, isPlaying: m.active && playingOutput,
            streams: nodes, route: route ?? self.route(s),
            isLegacy: t.isLegacy, applicationName: d.applicationName, priority: t.priorityClass,
            prefersNoInterruptionsFromSystemAlerts: t.prefersNoAlerts,
            prefersInterruptionOnRouteDisconnect: t.prefersRouteInterrupt,
            secondaryAudioShouldBeSilencedHint: m.hintTold,
            preferredOutputPortType: preferredOutput(t))
    }

    /// Publishes the session's state when it differs from what was last published.
    mutating func publish(_ s: SessionID) {
        if let snap = sessionSnapshot(s) {
            if let old = published.updateValue(snap, forKey: s), old == snap { return }
            emit(.publishSession(s, snap))
        } else if published.removeValue(forKey: s) != nil {
            emit(.publishSession(s, nil))
        }
    }

    mutating func globalSnapshot() -> GlobalSnapshot {
        GlobalSnapshot(
            currentRoute: availableRouteCached(), silentMode: silentMode, screenLocked: screenLocked,
            isOtherAudioPlaying: !playing.isEmpty, secondaryAudioShouldBeSilencedHint: !primary.isEmpty,
            playingSessionCount: playing.count, primaryAudioSessionCount: primary.count)
    }

    /// Recomputes every index from the stored graph and marks.
    mutating func indexSinkGroups() {
        sinksOfGroup = [:]
        for (e, ep) in endpoints { noteSinkGroup(e, old: nil, new: ep) }
    }

    mutating func rebuildIndexes() {
        streamsOfClient = [:]
        declaringStreamsOfClient = [:]
        linksOfNode = [:]
        indexSinkGroups()
        relayOfGroup = [:]
        for (n, r) in relays.sorted(by: { $0.key < $1.key }) where relayOfGroup[r.linkGroup] == nil {
            relayOfGroup[r.linkGroup] = n
        }
        streamRoutes = [:]
        streamEndpoints = [:]
        endpointsOfClient = [:]
        uniformGains = [:]
        declaredClients = []
        victimsOf = [:]
        active = []
        activeNonMixable = []
        activeCalls = []
        activeDuckers = []
        activeRecorders = []
        activeNoAlerts = []
        playing = []
        primary = []
        membership = [:]
        availableRoute = nil
        for (n, st) in streams {
            streamsOfClient[st.client, default: []].insert(n)
            noteSessionKeys(ofStream: n, client: st.client)
        }
        for (l, link) in links {
            linksOfNode[link.output, default: []].insert(l)
            linksOfNode[link.input, default: []].insert(l)
        }
        for n in streams.keys { refreshRoute(ofStream: n) }
        rebuildDerived()
        for c in clients.keys where computeDeclared(c) { declaredClients.insert(c) }
        for (s, m) in marks {
            if let i = m.interruption { victimsOf[i.cause, default: []].insert(s) }
        }
        for s in marks.keys { updateMembership(s) }
    }

    /// R40/R41: start again from a graph. With the policy's own marks the state is
    /// restored exactly; a fresh graph (`policy == nil`) is re-decided: declarations are
    /// parsed again, nothing counts as paused by the policy, and sessions that were
    /// asked active or have running streams activate in session order. Every declared
    /// session is told `mediaServicesWereLost` then `mediaServicesWereReset`; gains the
    /// policy no longer wants are undone (it owns only what it adds).
    mutating func rebuild(from graph: GraphSnapshot) {
        let previouslyPublished = published
        clients = graph.clients
        clientKeys = [:]
        streams = graph.streams
        endpoints = graph.endpoints
        links = graph.links
        relays = graph.relays
        // Output streams of virtual sinks given as streams are relays (see `RelayInfo`).
        indexSinkGroups()
        for (n, st) in streams.sorted(by: { $0.key < $1.key }) {
            guard let g = relayGroup(direction: st.direction, st.facts),
                !relays.values.contains(where: { $0.linkGroup == g })
            else { continue }
            streams[n] = nil
            relays[n] = RelayInfo(client: st.client, linkGroup: g, facts: st.facts)
        }
        silentMode = graph.silentMode
        screenLocked = graph.screenLocked
        marks = graph.policy?.sessions ?? [:]
        published = [:]
        lastGlobal = nil
        let fresh = graph.policy == nil
        if fresh {
            for (c, var info) in clients {
                if case .success(let d) = Declaration.parse(info.facts.sessionKeys) { info.declaration = d } else { info.declaration = nil }
                clients[c] = info
            }
            for (n, var st) in streams {
                if case .success(let d) = Declaration.parse(st.facts.sessionKeys) { st.declaration = d } else { st.declaration = nil }
                if st.pausedByPolicy {
                    // Not ours any more: a fresh policy paused nothing.
                    st.pausedByPolicy = false
                }
                st.lostOutput = nil
                streams[n] = st
            }
        }
        rebuildIndexes()
        for s in previouslyPublished.keys.sorted() where !exists(s) {
            emit(.publishSession(s, nil))
        }
        let sessions = allSessions()
        for s in sessions {
            if case .client = s {
                notify(s, .mediaServicesWereLost)
                notify(s, .mediaServicesWereReset)
            }
        }
        if fresh {
            for s in sessions {
                if case .client = s {
                    applyActivationRequest(s)
                    if !isActive(s), streamsOf(s).contains(where: { streams[$0]?.running == true }) {
                        activate(s, explicit: false)
                    }
                } else if streamsOf(s).contains(where: { streams[$0]?.running == true }) {
                    activate(s, explicit: false)
                }
            }
        }
        refreshAll = true
        for s in sessions { touched.insert(s) }
        // Streams with policy gains outside any session (e.g. now unmanaged) get them undone.
        for (n, st) in streams.sorted(by: { $0.key < $1.key }) where st.direction == .output {
            guard let s = sessionOf(n), traits(s)?.unmanaged == true else { continue }
            undoGains(n)
        }
    }
}

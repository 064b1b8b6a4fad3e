/// Publishing: a session's and the global state as the metadata carries them.
extension PolicyReading {
    /// The session's published state. Built in one pass over its streams (gain, silence,
    /// playing), with one lookup of its cached traits and of its marks; the route is cached
    /// (the stream's, or the client's endpoint counts for a session of several streams).
    func sessionSnapshot(_ s: SessionID) -> SessionSnapshot? {
        let mk = model.marks[s]
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
            if st.runs { playingOutput = true }
        }
        let nodes: [NodeID]
        switch s {
        case .client(let c):
            guard index.declaredClients.contains(c), let found = index.derived[s] ?? deriveTraits(s) else { return nil }
            d = found
            t = d.traits
            guard !t.unmanaged else { return nil }
            nodes = index.streamsOfClient[c]?.nodes ?? []
            if nodes.count > 1, let u = index.uniformGains(c) {
                // Every output stream is at `u`: only whether one exists and one plays is read.
                var hasOutput = false
                for n in nodes {
                    guard let st = model.streams[n], st.direction == .output else { continue }
                    hasOutput = true
                    if st.runs {
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
                    if let st = model.streams[n] { account(st) }
                }
            }
            route = nodes.count == 1 ? index.streamRoutes[nodes[0]] : clientRoute(c)
        case .stream(let n):
            guard let st = model.streams[n], !index.declaredClients.contains(st.client), let found = index.derived[s] ?? deriveTraits(s) else { return nil }
            d = found
            guard !d.traits.unmanaged else { return nil }
            t = d.adapted(to: mk?.adaptiveCategory)
            // A legacy session's streams are its one node, as last published: that array is
            // taken again rather than a new one made (an allocation and a free on every event
            // of the stream).
            if let last = model.published[s]?.streams, last.count == 1, last[0] == n { nodes = last } else { nodes = [n] }
            account(st)
            route = index.streamRoutes[n]
        }
        let m = mk ?? SessionMarks()
        return SessionSnapshot(
            category: t.category, mode: t.mode, options: t.options, active: m.active,
            interrupted: m.interruption?.beganTold == true, interruptionReason: m.interruption?.beganTold == true ? m.interruption?.reason : nil,
            duckGain: gain, silenced: silenced, isPlaying: m.active && playingOutput,
            streams: nodes, route: route ?? self.route(s),
            isLegacy: t.isLegacy, applicationName: d.applicationName, priority: t.priorityClass,
            prefersNoInterruptionsFromSystemAlerts: t.prefersNoAlerts,
            prefersInterruptionOnRouteDisconnect: t.prefersRouteInterrupt,
            secondaryAudioShouldBeSilencedHint: m.hintTold,
            preferredOutputPortType: preferredOutput(t))
    }
}

extension PolicyStep {
    /// Publishes the session's state when it differs from what was last published.
    mutating func publish(_ s: SessionID) {
        if configuration.makesPublishedStateWhenWritten {
            state.setUnsettled(s)
            emit(.sessionChanged(s))
            return
        }
        if let snap = sessionSnapshot(s) {
            if let old = state.setPublished(s, snap), old == snap { return }
            emit(.publishSession(s, snap))
        } else if state.setPublished(s, nil) != nil {
            emit(.publishSession(s, nil))
        }
    }

    /// Whether `globalSnapshot()` would equal `last`, read without making it.
    func globalUnchanged(since last: GlobalSnapshot) -> Bool {
        last.silentMode == model.silentMode && last.screenLocked == model.screenLocked
            && last.playingSessionCount == index.playing.count && last.primaryAudioSessionCount == index.primary.count
            && last.isOtherAudioPlaying == !index.playing.isEmpty
            && last.secondaryAudioShouldBeSilencedHint == !index.primary.isEmpty
            && last.currentRoute == index.availableRoute
    }

    func globalSnapshot() -> GlobalSnapshot {
        GlobalSnapshot(
            currentRoute: index.availableRoute, silentMode: model.silentMode, screenLocked: model.screenLocked,
            isOtherAudioPlaying: !index.playing.isEmpty, secondaryAudioShouldBeSilencedHint: !index.primary.isEmpty,
            playingSessionCount: index.playing.count, primaryAudioSessionCount: index.primary.count)
    }
}

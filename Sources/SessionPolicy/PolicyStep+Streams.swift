/// Clients and streams: declarations (§1-4), legacy activation, removal.
/// `AVAudioSession.setCategory(_:mode:options:)`, `setActive(_:)`.
extension PolicyStep {
    mutating func clientAdded(_ c: ClientID, _ facts: ClientFacts) {
        if model.clients[c] != nil {
            clientChanged(c, facts)
            return
        }
        var info = ClientInfo(facts: facts)
        let parsed = facts.declaration.declaration
        if case .valid(let d) = parsed { info.declaration = d }
        state.setClient(c, info)
        updateDeclared(c)
        if case .refused(let e) = parsed { notify(.client(c), .declarationRefused(e)) }
        if index.declaredClients.contains(c) {
            touched.insert(.client(c))
            applyActivationRequest(.client(c))
        }
    }

    mutating func clientChanged(_ c: ClientID, _ facts: ClientFacts) {
        guard var info = model.clients[c] else {
            clientAdded(c, facts)
            return
        }
        let before = traits(.client(c))
        let previous = info.facts
        let declarationTouched = facts.declaration.declaration != previous.declaration.declaration
        info.facts = facts
        let parsed = facts.declaration.declaration
        // A refused declaration leaves the previous valid one in force (§4).
        if case .valid(let d) = parsed { info.declaration = d }
        if case .none = parsed { info.declaration = nil }
        // The cached traits of its sessions follow (`PolicyState.setClient`).
        state.setClient(c, info)
        updateDeclared(c)
        guard index.declaredClients.contains(c) else { return }
        if case .refused(let e) = parsed, declarationTouched { notify(.client(c), .declarationRefused(e)) }
        applyDeclarationChange(.client(c), before: before)
        applyActivationRequest(.client(c))
        let override = facts.declaration.outputOverride ?? ""
        if override != (previous.declaration.outputOverride ?? "") { outputOverrideChanged(c, to: override) }
    }

    mutating func clientRemoved(_ c: ClientID) {
        guard model.clients[c] != nil else { return }
        // A client that has gone can start no follow-up stream: what its sessions caused
        // ends at once, without the grace period (`endOrHold`).
        clientGoing = c
        defer { clientGoing = nil }
        // Streams without a declaration go first: were a declaring stream removed while
        // others remain, the client would stop declaring mid-removal and its remaining
        // streams would get gain resets (effects naming nodes gone by the end of this
        // event) and activate as legacy sessions for an instant.
        let nodes = (index.streamsOfClient[c] ?? []).sorted()
        for n in nodes where model.streams[n]?.facts.declaration.declares != true { streamRemoved(n) }
        for n in nodes where model.streams[n] != nil { streamRemoved(n) }
        if index.declaredClients.contains(c) {
            removeSession(.client(c), notifyOthers: wantsNotifyOthers(c))
            state.setDeclared(c, false)
        }
        state.setClient(c, nil)
        if state.setPlayerReport(c, nil) != nil { refreshPlayers() }
        // What its streams left held before it went ends now too (R7, §12).
        endHeldEnds(of: c)
    }

    mutating func streamAdded(_ n: NodeID, client c: ClientID, direction: StreamDirection, _ facts: StreamFacts) {
        // A re-announced node replaces the old one. When its session is the same one
        // afterwards (same legacy node, or the same declaring client), that session's
        // interruption outlives the replacement: it heard `began` and no `ended` (R13).
        var carried: (SessionID, InterruptionMark)?
        if model.relays[n] != nil { relayRemoved(n) }
        if let g = relayGroup(direction: direction, facts) {
            if model.streams[n] != nil { streamRemoved(n) }
            relayAdded(n, client: c, group: g, facts)
            return
        }
        if model.streams[n] != nil {
            if let old = sessionOf(n), traits(old)?.unmanaged == false, let i = model.marks[old]?.interruption { carried = (old, i) }
            streamRemoved(n)
        }
        if model.clients[c] == nil {
            // A stream of a client we never heard of: track it with an empty client.
            state.setClient(c, ClientInfo(facts: ClientFacts()))
        }
        var info = StreamInfo(client: c, direction: direction, facts: facts)
        let parsed = facts.declaration.declaration
        if case .valid(let d) = parsed { info.declaration = d }
        state.setStream(n, info)
        updateDeclared(c)
        guard let s = sessionOf(n) else { return }
        touched.insert(s)
        if let (old, i) = carried, old == s { carryInterruption(s, i) }
        if case .refused(let e) = parsed { notify(s, .declarationRefused(e)) }
        if case .client = s {
            applyDeclarationChange(s, before: nil)
            applyActivationRequest(s)
        }
    }

    mutating func streamChanged(_ n: NodeID, _ facts: StreamFacts) {
        if model.relays[n] != nil {
            // A relay stays one while its node lives (its link group is set at creation).
            state.setRelayFacts(n, facts)
            return
        }
        guard var info = model.streams[n], let old = sessionOf(n) else { return }
        let before = traits(old)
        let parsed = facts.declaration.declaration
        let declarationTouched = parsed != info.facts.declaration.declaration
        info.facts = facts
        if case .valid(let d) = parsed { info.declaration = d }
        if case .none = parsed { info.declaration = nil }
        state.setStream(n, info)
        updateDeclared(info.client)
        guard let s = sessionOf(n) else { return }
        touched.insert(s)
        if s == old, let b = before, !b.unmanaged, traits(s)?.unmanaged == true {
            // The stream's new role is unmanaged (Production, DSP, Test): its session goes
            // away like a removed one (it ends what it interrupted, forgets its own
            // interruption) and the policy's gains on it are undone (R41, §1: never touched).
            removeSession(s, notifyOthers: b.transient)
        }
        if case .refused(let e) = parsed, declarationTouched { notify(s, .declarationRefused(e)) }
        if s == old {
            applyDeclarationChange(s, before: before)
        }
        applyActivationRequest(s)
    }

    mutating func streamRunning(_ n: NodeID, _ running: Bool) {
        guard let s = state.sessionOfInPlace(n) else { return }
        /// What the report means, read and recorded where the stream's record lies.
        enum Report { case nothing, request, started(faded: Bool), stopped(wasRunning: Bool) }
        var report = Report.nothing
        state.updateStream(n) { st in
            if running {
                if st.pausedByPolicy {
                    // The owner re-activated a node we paused (R16).
                    st.running = true
                    report = .request
                } else if st.resumedByPolicy {
                    // The module confirms the policy's resume.
                    st.resumedByPolicy = false
                    st.running = true
                } else if !st.running {
                    st.running = true
                    report = .started(faded: st.fade != .none)
                }
            } else if st.pausedByPolicy || st.pauseReleased {
                // The module confirms the policy's pause, also one let go of before the
                // confirmation came (the player reported Paused within the node's stop): the
                // program paused because the policy asked, not by itself (R18).
                st.running = false
            } else {
                let wasRunning = st.runs
                st.running = false
                st.resumedByPolicy = false
                report = .stopped(wasRunning: wasRunning)
            }
        }
        switch report {
        case .nothing:
            return
        case .request:
            streamActivationRequested(n)
        case .started(let faded):
            touched.insert(s)
            // Faded, and started again by its program after the policy let go (R42).
            if faded { fadeIns.append(n) }
            guard let t = traits(s), !t.unmanaged else { return }
            if !isActive(s) { activate(s, explicit: false) }
        case .stopped(let wasRunning):
            touched.insert(s)
            guard let t = traits(s), !t.unmanaged else { return }
            // R18: paused itself while interrupted: no resume later.
            state.notePausedItself(s)
            if wasRunning && t.isLegacy && isActive(s) {
                // A legacy stream deactivates when it corks; transient roles notify others
                // (as the session was when the event came: R43 may have just changed it).
                deactivate(s, notifyOthers: traitsAsTheEventFound(s)?.transient ?? t.transient, explicit: false)
            }
        }
    }

    /// Whether the owner's activation of `n` asks the policy anything: the policy holds it
    /// paused, or its pause was let go of while the module's pause still held the node.
    static func activationIsRequest(_ n: NodeID, _ model: PolicyModel) -> Bool {
        // Read in place: the record is not copied (most owners' activations ask nothing,
        // and in the daemon this runs on cold caches).
        guard let i = model.streams.index(forKey: n) else { return false }
        return model.streams.values[i].pausedByPolicy || model.streams.values[i].pauseReleased
    }

    /// The owner made the node active (`Event.streamActivatedByOwner`): an activation
    /// request (R16) when the policy holds the stream paused, or when the module's pause
    /// still held the node after the policy let go of it (the program's own start is
    /// arbitrated before it plays); otherwise nothing (the node's running state follows).
    mutating func streamActivatedByOwner(_ n: NodeID) {
        guard Self.activationIsRequest(n, model) else { return }
        state.updateStream(n) { $0.pauseReleased = false }
        // Its program starts it: it no longer waits for its headset's switch (R35).
        endSwitchHold(n)
        streamActivationRequested(n)
    }

    /// A capture stream that records a sink's monitor: no session (a node re-announced as
    /// one leaves the one it was).
    mutating func monitorAdded(_ n: NodeID) {
        if model.streams[n] != nil || model.relays[n] != nil { streamRemoved(n) }
        state.setMonitor(n, true)
    }

    /// R16: the program re-activated a node the policy paused (the user pressed play).
    mutating func streamActivationRequested(_ n: NodeID) {
        guard var st = model.streams[n], let s = sessionOf(n) else { return }
        guard let t = traits(s), !t.unmanaged else {
            // The policy holds no unmanaged stream (e.g. its client withdrew the
            // declaration and its role is Production): a pause left from before is released.
            if st.pausedByPolicy {
                st.pausedByPolicy = false
                st.resumedByPolicy = !st.running
                state.setDecisions(n, st)
                touched.insert(s)
                emit(.resume(n))
            }
            return
        }
        guard st.pausedByPolicy else {
            if !st.running && !st.resumedByPolicy { streamRunning(n, true) }
            // Its program started it after the policy let go (R42: back in from the fade).
            if model.streams[n]?.fade != StreamFade.none { fadeIns.append(n) }
            return
        }
        st.pausedByPolicy = false
        st.resumedByPolicy = !st.running
        st.lostOutput = nil
        state.setDecisions(n, st)
        touched.insert(s)
        if isActive(s) {
            refreshGains(s)
            emit(.resume(n))
            return
        }
        if activate(s, explicit: false) {
            emit(.resume(n))
        }
    }

    /// The program paused itself while the policy held the stream paused (its MPRIS
    /// player reports Paused). The node stays inactive: its owner deactivated it too,
    /// so nothing is emitted and nothing can play. The policy no longer holds it: it
    /// does not resume it (R15 is left to the program: the bridge's MPRIS Play), and
    /// the program's own start is an activation that is arbitrated again (R16). The
    /// interruption keeps `wasPlaying`: the pause was the policy's request, not the user's.
    mutating func streamReleasedToProgram(_ n: NodeID) {
        guard model.streams[n]?.pausedByPolicy == true else { return }
        endSwitchHold(n)
        guard var st = model.streams[n], let s = sessionOf(n) else { return }
        st.pausedByPolicy = false
        // The module's pause still holds the node until the policy pauses or resumes it.
        st.pauseReleased = true
        // Its owner deactivated the node too: the program's report is the fact.
        st.running = false
        st.resumedByPolicy = false
        st.lostOutput = nil
        // Paused by its program mid-fade: it is silent (R42). Its gain stays down until it
        // plays again.
        let wasFading = st.fade == .fadingOut
        if wasFading { st.fade = .silent }
        state.setDecisions(n, st)
        touched.insert(s)
        if wasFading { tellBeganOnceSilent(s) }
    }

    mutating func streamRemoved(_ n: NodeID) {
        if model.relays[n] != nil {
            relayRemoved(n)
            return
        }
        guard let st = model.streams[n], let s = sessionOf(n) else { return }
        let legacyTraits = traitsAsTheEventFound(s)
        endSwitchHold(n)
        for l in (index.linksOfNode[n] ?? []).sorted() { removeLink(l) }
        if case .stream = s {
            removeSession(s, notifyOthers: legacyTraits?.transient ?? false, resetGains: false)
            state.setStream(n, nil)
        } else {
            // A declaration carried by the stream itself (a wrapped program) goes with
            // it: its notifyOthersOnDeactivation must still reach the others (R7, S2).
            let notify = wantsNotifyOthers(st.client)
            let before = traits(s)
            state.setStream(n, nil)
            touched.insert(s)
            // R42: the session's output stopped with it.
            if st.fade == .fadingOut { tellBeganOnceSilent(s) }
            updateDeclared(st.client, notifyOthers: notify)
            // The declaration in force may have come from this stream: the client's next
            // stream's now applies, and an active session is arbitrated again (as on a
            // client's own declaration change).
            if index.declaredClients.contains(st.client), traits(s) != before { applyDeclarationChange(s, before: before) }
        }
    }

    /// Gives a session that came back within the same event (a re-announced node) the
    /// interruption it had: no second `began` (R13). When it has no interruption now, the
    /// mark is restored while its cause still holds; otherwise it hears `ended` without
    /// shouldResume, so began and ended still alternate.
    mutating func carryInterruption(_ s: SessionID, _ i: InterruptionMark) {
        guard exists(s), model.marks[s]?.interruption == nil else { return }
        guard let t = traits(s), !t.unmanaged else { return }
        let holds: Bool
        switch i.cause {
        case .session(let b): holds = b != s && isActive(b)
        case .microphoneMuted(let e): holds = model.endpoints[e]?.muted == true
        case .routeDisconnected: holds = true
        }
        guard holds else {
            if i.beganTold { notify(s, .interruptionEnded(shouldResume: false)) }
            return
        }
        var m = model.marks[s] ?? SessionMarks()
        m.interruption = i
        state.setMarks(s, m)
        touched.insert(s)
    }

    /// A session goes away: it deactivates (ending what it interrupted), its own
    /// interruption is forgotten, and its published state is removed.
    mutating func removeSession(_ s: SessionID, notifyOthers: Bool, resetGains: Bool = true) {
        let wasActive = isActive(s)
        let traitsBefore = traitsAsTheEventFound(s)
        if resetGains {
            // Its streams stay (they move to another session): the policy's gains go.
            for n in streamsOf(s) { undoGains(n) }
        }
        if isActive(s), var m = model.marks[s] {
            m.active = false
            state.setMarks(s, m)
        }
        clearInterruption(s)
        state.setMarks(s, nil)
        removeMembership(s)
        endOrHold(s, traits: wasActive ? traitsBefore : nil, resumable: notifyOthers)
        touched.remove(s)
        let unsettled = state.takeUnsettled(s)
        if state.setPublished(s, nil) != nil || unsettled {
            emit(.publishSession(s, nil))
        }
    }

    /// Recomputes whether a client declares; when that flips, its streams move between
    /// their own legacy sessions and the client's session.
    mutating func updateDeclared(_ c: ClientID, notifyOthers: Bool = false) {
        let now = model.clients[c] != nil && computeDeclared(c)
        let was = index.declaredClients.contains(c)
        guard now != was else { return }
        let nodes = (index.streamsOfClient[c] ?? []).sorted()
        if now {
            for n in nodes where model.marks[.stream(n)] != nil || model.published[.stream(n)] != nil
                || model.unsettled.contains(.stream(n)) {
                removeSession(.stream(n), notifyOthers: false)
            }
            state.setDeclared(c, true)
            touched.insert(.client(c))
            if nodes.contains(where: { model.streams[$0]?.runs == true }) {
                activate(.client(c), explicit: false)
            }
        } else {
            removeSession(.client(c), notifyOthers: notifyOthers)
            state.setDeclared(c, false)
            for n in nodes {
                touched.insert(.stream(n))
                if model.streams[n]?.runs == true { activate(.stream(n), explicit: false) }
            }
        }
    }
}

extension PolicyStep {
    /// Undoes the policy's own gains on a stream (its duck, ramped back up, and its
    /// silence); the user's volume was never touched.
    mutating func undoGains(_ n: NodeID) {
        guard var st = model.streams[n] else { return }
        if st.duckGain != 1 {
            st.duckGain = 1
            // A faded stream keeps its silence; it comes back in to this gain (R42).
            if st.fade == .none { emit(.duck(n, gain: 1, rampMilliseconds: configuration.duckRampUpMilliseconds)) }
        }
        if st.silenced {
            st.silenced = false
            emit(.silence(n, false))
        }
        state.setDecisions(n, st)
    }
}

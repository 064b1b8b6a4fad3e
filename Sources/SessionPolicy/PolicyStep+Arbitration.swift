/// Activation and arbitration (§5: R1-R8, R10, R16, R17).
/// `AVAudioSession.setActive(_:options:)`.
enum Arbitration: Equatable {
    case allowed(victims: [SessionID])
    case refused(SessionError, blocker: SessionID)
}

extension PolicyReading {
    /// Decides whether `s` may become active now, and whom it interrupts.
    func arbitrate(_ s: SessionID, _ t: SessionTraits) -> Arbitration {
        // R10 / R6: a call holds audio; only calls and accessibility get through. R43: a call
        // recognised from the graph holds back none of its own program's sessions.
        if t.priorityClass != .call && !t.exemptFromCalls {
            if let c = Self.lowest(index.activeCalls, where: { c in c != s && clientOf(c) != t.client && !isOwnInferredCall(c, of: s) }) {
                return .refused(
                    SessionError(code: .insufficientPriority, message: "A call (\(c)) holds the audio; only another call may interrupt it. [R6]"),
                    blocker: c)
            }
        }
        // R6: a higher-priority non-mixable session holds audio.
        if !t.mixable {
            let holder = Self.lowest(index.activeNonMixable) { a in
                guard a != s, clientOf(a) != t.client, let ta = traits(a) else { return false }
                return ta.priority > t.priority && !(t.isAlert && ta.prefersNoAlerts)
            }
            if let a = holder, let ta = traits(a) {
                return .refused(
                    SessionError(code: .insufficientPriority, message: "\(a) holds the audio with a higher priority (\(ta.priorityClass.rawValue)). [R6]"),
                    blocker: a)
            }
        }
        // R17: alerts held back while a session prefers no interruptions from them.
        if t.isAlert && configuration.alertsDuringPreferNoInterruptions == .holdBack {
            if let a = Self.lowest(index.activeNoAlerts, where: { a in a != s }) {
                return .refused(
                    SessionError(code: .insufficientPriority, message: "\(a) prefers no interruptions from system alerts, so the alert is held back. [R17]"),
                    blocker: a)
            }
        }
        var victims: [SessionID] = []
        // R43: a call recognised from the graph interrupts none of its own program's sessions.
        let ownProgram = t.priorityClass == .call ? inferredCallProgram(s, t) : nil
        func consider(_ a: SessionID, _ rule: (SessionTraits) -> Bool) {
            guard a != s, clientOf(a) != t.client, let ta = traits(a) else { return }
            if let key = ownProgram, belongs(a, to: key) { return }
            // R17: alerts neither interrupt nor duck a session that prefers so.
            if t.isAlert && ta.prefersNoAlerts { return }
            if rule(ta) { victims.append(a) }
        }
        // Candidates are visited in any order and the victims sorted afterwards (no array of
        // every active session is built and sorted).
        if t.priorityClass == .call {
            // R10: the phone always wins, mixable or not, except accessibility; R1 among calls.
            for a in index.active {
                consider(a) { ta in
                    if ta.exemptFromCalls { return false }
                    if ta.priorityClass == .call { return !ta.mixable && !t.mixable }
                    return true
                }
            }
        } else if !t.mixable {
            // R1 last in wins among non-mixable sessions of equal or lower priority; R2 mixable ones stay.
            for a in index.activeNonMixable {
                consider(a) { ta in ta.priority <= t.priority }
            }
        } else if t.options.contains(.interruptSpokenAudioAndMixWithOthers) {
            // R4: spoken audio only.
            for a in index.active {
                consider(a) { ta in ta.mode == .spokenAudio && ta.priority <= t.priority }
            }
        }
        if victims.count > 1 { victims.sort() }
        if !victims.isEmpty, !configuration.cannotInterruptApplications.isEmpty, let c = clientOf(s), let name = applicationName(c, stream: streamsOf(s).first),
            configuration.cannotInterruptApplications.contains(name)
        {
            return .refused(
                SessionError(code: .cannotInterruptOthers, message: "\(SessionError.quote(name)) may not interrupt others (interrupt.denied-applications). [R6]"),
                blocker: victims[0])
        }
        return .allowed(victims: victims)
    }

    /// The lowest member that passes `test`: what `set.sorted().first(where: test)` finds,
    /// without building and sorting an array.
    static func lowest(_ set: Set<SessionID>, where test: (SessionID) -> Bool) -> SessionID? {
        var best: SessionID?
        for x in set where test(x) {
            if let b = best, b < x { continue }
            best = x
        }
        return best
    }

    /// `setActive(false, options: .notifyOthersOnDeactivation)`.
    func wantsNotifyOthers(_ c: ClientID) -> Bool {
        if model.clients[c]?.facts.declaration.notifyOthersOnDeactivation == true { return true }
        for n in index.declaringStreamsOfClient[c] ?? [] where model.streams[n]?.facts.declaration.notifyOthersOnDeactivation == true {
            return true
        }
        return false
    }
}

extension PolicyStep {
    /// Activates `s` (explicitly, `audio.session.active=true`, or implicitly on play).
    /// - Returns: whether the session is active afterwards.
    @discardableResult
    mutating func activate(_ s: SessionID, explicit: Bool) -> Bool {
        guard exists(s), var t = traits(s) else { return false }
        if t.unmanaged { return true }
        touched.insert(s)
        // The marks are read where they lie: a copy of them would retain and release their strings.
        if state.readMarks(s, { $0.active }) == true {
            resumePausedStreams(s)
            if explicit { notify(s, .activationResult(.success(nil))) }
            return true
        }
        if t.isLegacy && ambientWhenOtherAudioPlays(s) {
            // §1 Game: ambient when other audio is already playing, soloAmbient otherwise.
            let other = index.playing.contains { clientOf($0) != t.client }
            state.updateMarks(s) { $0.adaptiveCategory = other ? .ambient : .soloAmbient }
            if let updated = traits(s) { t = updated }
        }
        switch arbitrate(s, t) {
        case .refused(let error, let blocker):
            pauseRunningStreams(s)
            if explicit {
                notify(s, .activationResult(.failure(error)))
            } else if state.readMarks(s, { $0.interruption == nil }) ?? true {
                // R42, R11: a stream of it still fading out (from before it was this session) is
                // silent first; began waits for it (`beginInterruption`).
                beginInterruption(s, cause: .session(blocker), reason: .default, wasPlaying: true)
            }
            return false
        case .allowed(let victims):
            for v in victims { interrupt(v, cause: .session(s), reason: .default) }
            if let beganTold = state.readMarks(s, { $0.interruption?.beganTold }) ?? nil {
                clearInterruption(s)
                if beganTold { notify(s, .interruptionEnded(shouldResume: false)) }
            }
            justActivated.insert(s)
            state.updateMarks(s) { $0.active = true }
            updateMembership(s)
            takeOverHeldEnds(s, t)
            refreshGains(s)
            resumePausedStreams(s)
            if explicit { notify(s, .activationResult(.success(nil))) }
            return true
        }
    }

    /// Deactivates `s`: explicitly (`audio.session.active=false`), or a legacy stream stopping.
    mutating func deactivate(_ s: SessionID, notifyOthers: Bool, explicit: Bool) {
        touched.insert(s)
        guard state.readMarks(s, { $0.active }) == true else {
            // R18: the program stopped on its own while interrupted.
            state.notePausedItself(s)
            if explicit { notify(s, .activationResult(.success(nil))) }
            return
        }
        state.updateMarks(s) { $0.active = false }
        updateMembership(s)
        if explicit {
            // R8: deactivating with running streams succeeds with an isBusy warning.
            notify(s, .activationResult(.success(hasRunningStream(s) ? .isBusy : nil)))
        }
        // An explicit setActive(false) is the program's own word: nothing to wait for.
        if explicit {
            endInterruptions(causedBy: .session(s), resumable: notifyOthers)
        } else {
            endOrHold(s, traits: traitsAsTheEventFound(s), resumable: notifyOthers)
        }
    }

    /// Handles a change of `audio.session.active` on a declared session.
    mutating func applyActivationRequest(_ s: SessionID) {
        guard case .client(let c) = s, index.declaredClients.contains(c) else { return }
        var asked = model.clients[c]?.facts.declaration.active
        if asked == nil {
            // Only streams with an `audio.session.*` key can carry `audio.session.active`.
            for n in index.declaringStreamsOfClient[c] ?? [] {
                if let v = model.streams[n]?.facts.declaration.active {
                    asked = v
                    break
                }
            }
        }
        var m = model.marks[s] ?? SessionMarks()
        guard let asked else {
            if m.requestedActive != nil {
                m.requestedActive = nil
                state.setMarks(s, m)
            }
            return
        }
        guard case .value(let wanted) = asked else {
            if case .malformed(let value) = asked {
                notify(s, .activationResult(.failure(SessionError(
                    code: .badParam, message: "audio.session.active must be true or false, not \(SessionError.quote(value)). [§1]"))))
            }
            return
        }
        // A new value, or the same value asked again (a new request counter): answer it.
        let request = model.clients[c]?.facts.declaration.activationRequest
        guard m.requestedActive != wanted || (request != nil && request != m.activationRequest) else { return }
        m.requestedActive = wanted
        m.activationRequest = request
        state.setMarks(s, m)
        if wanted {
            activate(s, explicit: true)
        } else {
            deactivate(s, notifyOthers: wantsNotifyOthers(c), explicit: true)
        }
    }

    /// R5: a changed declaration of an active session applies at once.
    mutating func applyDeclarationChange(_ s: SessionID, before: SessionTraits?) {
        touched.insert(s)
        if let before, let t = traits(s), before.category != t.category, model.marks[s]?.routeBeforeCategoryChange == nil {
            // R5: when the route changes after this, the reason is categoryChange.
            var m = model.marks[s] ?? SessionMarks()
            m.routeBeforeCategoryChange = route(s)
            state.setMarks(s, m)
        }
        guard isActive(s), let t = traits(s), t != before else { return }
        updateMembership(s)
        // R3: an active ducker whose priority, mode or alert kind changed ducks others
        // differently even when it stays a ducker (membership unchanged): refresh everyone.
        if index.membership[s]?.contains(.ducker) == true { refreshAll = true }
        if case .allowed(let victims) = arbitrate(s, t) {
            for v in victims { interrupt(v, cause: .session(s), reason: .default) }
        }
    }
}

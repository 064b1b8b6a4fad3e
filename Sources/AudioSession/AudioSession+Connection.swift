import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The connection's life: connect, read the policy's metadata, lose it,
/// reconnect and re-declare (R40).
extension AudioSession {
    /// Connects (once; `false` when PipeWire is not there).
    @discardableResult
    func connect() -> Bool {
        guard let connection else { return false }
        var props = state.withLock { $0.clientProperties() }
        if let name = configuration.applicationName { props["application.name"] = name }
        // Within the loop lock: the round trip's answer cannot overtake the store.
        return connection.locked {
            let seq = connection.connect(properties: props) { [weak self] event in self?.handle(event) }
            state.withLock { s in
                s.connectSeq = seq
                s.connected = seq != nil
                s.synced = false
                s.clientID = nil
                s.policyPresent = false
                s.replayDone = false
            }
            return seq != nil
        }
    }

    /// Tries to connect every `reconnectInterval` until it works.
    func scheduleReconnect() {
        let go = state.withLock { s -> Bool in
            guard !s.reconnecting, !s.closed else { return false }
            s.reconnecting = true
            return true
        }
        guard go else { return }
        let interval = configuration.reconnectInterval
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                if self.state.withLock({ $0.closed }) { return }
                if self.connect() {
                    self.state.withLock { $0.reconnecting = false }
                    return
                }
            }
        }
    }

    /// One event from the PipeWire thread.
    func handle(_ event: PipeWireEvent) {
        if debugEnabled {
            let line = Array("audio-session: \(event)\n".utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        switch event {
        case .synced(let seq):
            let (connectSeq, replaySeq) = state.withLock { ($0.connectSeq, $0.replaySeq) }
            if seq == connectSeq {
                let id = connection?.clientID
                state.withLock { s in
                    s.synced = true
                    s.clientID = id
                }
            } else if seq == replaySeq {
                let reset = state.withLock { s -> Bool in
                    guard s.policyPresent, !s.replayDone else { return false }
                    s.replayDone = true
                    s.session = s.clientID.flatMap { s.sessions[$0] }
                    let wasLost = s.lost
                    s.lost = false
                    return wasLost
                }
                if reset { deliver(.mediaServicesWereReset) }
            }
        case .disconnected:
            mediaServicesLost()
            // Off the PipeWire thread: the teardown frees the hooks that called us.
            Task.detached { [weak self] in
                self?.connection?.disconnect()
                self?.state.withLock { $0.connected = false }
                self?.scheduleReconnect()
            }
        case .metadataAppeared(let name):
            guard name == PolicyMetadata.name else { return }
            state.withLock { s in
                s.policyPresent = true
                s.replayDone = false
            }
            // Within the loop lock: the answer cannot overtake the store below.
            connection?.locked {
                let seq = connection?.sync()
                state.withLock { $0.replaySeq = seq }
            }
        case .metadataGone(let name):
            guard name == PolicyMetadata.name else { return }
            mediaServicesLost()
        case .property(let metadata, let subject, let key, let value):
            guard metadata == PolicyMetadata.name else { return }
            property(subject: subject, key: key, value: value)
        case .nodeAdded(let id, let props):
            state.withLock { $0.nodes[id] = props }
        case .clientAdded(let id, let props):
            state.withLock { $0.clients[id] = props }
        case .globalRemoved(let id):
            state.withLock { s in
                s.nodes.removeValue(forKey: id)
                s.clients.removeValue(forKey: id)
            }
        }
    }

    /// The policy is gone (PipeWire went away or the module was unloaded).
    private func mediaServicesLost() {
        let (first, waiters) = state.withLock { s -> (Bool, [ActivationWaiter]) in
            let first = !s.lost
            s.lost = true
            s.policyPresent = false
            s.replayDone = false
            s.session = nil
            s.sessions.removeAll()
            s.global = nil
            // A new policy instance numbers its events from the start again.
            s.lastSequence = -1
            // After a reset the application reactivates (R40): nothing is requested any more.
            s.requestedActive = nil
            let w = s.waiters
            s.waiters.removeAll()
            return (first, w)
        }
        for w in waiters {
            w.continuation.resume(returning: .failure(SessionError(code: .mediaServicesFailed, message: "PipeWire went away before the policy answered (media services were lost). [R40]")))
        }
        if first { deliver(.mediaServicesWereLost) }
    }

    private func property(subject: UInt32, key: String?, value: String?) {
        guard let key else {
            state.withLock { s in s.sessions.removeAll(); s.session = nil; s.global = nil; s.players.removeAll() }
            return
        }
        switch key {
        case PolicyMetadata.sessionKey:
            let decoded = value.flatMap { PolicyMetadata.decode(SessionState.self, from: $0) }
            state.withLock { s in
                s.sessions[subject] = decoded
                if subject == s.clientID, s.replayDone { s.session = decoded }
            }
        case PolicyMetadata.globalKey:
            let decoded = value.flatMap { PolicyMetadata.decode(GlobalState.self, from: $0) }
            state.withLock { $0.global = decoded }
        case PolicyMetadata.mprisKey:
            let player = value.flatMap { PolicyMetadata.decode(MPRISGovernance.self, from: $0) }?.player
            state.withLock { $0.players[subject] = player }
        case PolicyMetadata.eventKey:
            guard let value, let e = PolicyEvent.decode(value) else { return }
            policyEvent(e)
        default:
            break
        }
    }

    private func policyEvent(_ e: PolicyEvent) {
        enum Action { case none, resume(ActivationWaiter, Result<ActivationWarning?, SessionError>), notify(AudioSessionNotification) }
        let (action, eventSubs) = state.withLock { s -> (Action, [AsyncStream<PolicyEvent>.Continuation]) in
            // The replay of the last event on bind is history, not news.
            guard s.replayDone, e.sequence > s.lastSequence else {
                s.lastSequence = max(s.lastSequence, e.sequence)
                return (.none, [])
            }
            s.lastSequence = e.sequence
            let subs = Array(s.eventSubscribers.values)
            guard e.session.kind == .client, e.session.id == s.clientID else { return (.none, subs) }
            switch e.notification {
            case .activationResult(let r):
                guard !s.waiters.isEmpty else { return (.none, subs) }
                return (.resume(s.waiters.removeFirst(), r), subs)
            case .interruptionBegan(let r): return (.notify(.interruption(.began(reason: r))), subs)
            case .interruptionEnded(let b): return (.notify(.interruption(.ended(shouldResume: b))), subs)
            case .routeChange(let r, let p, _): return (.notify(.routeChange(reason: r, previousRoute: p)), subs)
            case .silenceSecondaryAudioHint(let b): return (.notify(.silenceSecondaryAudioHint(begin: b)), subs)
            case .declarationRefused(let err): return (.notify(.declarationRefused(err)), subs)
            // The library itself reports lost/reset (it sees the connection; the module cannot).
            case .mediaServicesWereLost, .mediaServicesWereReset: return (.none, subs)
            }
        }
        for c in eventSubs { c.yield(e) }
        switch action {
        case .none: break
        case .resume(let w, let r): w.continuation.resume(returning: r)
        case .notify(let n): deliver(n)
        }
    }
}

/// `AUDIO_SESSION_DEBUG=1`: every connection event on stderr.
let debugEnabled = ProcessInfo.processInfo.environment["AUDIO_SESSION_DEBUG"] == "1"

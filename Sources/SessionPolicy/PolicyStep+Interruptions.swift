/// Interruptions (§6: R11-R16, R18, R19).
/// `AVAudioSession.interruptionNotification`.
extension PolicyReading {
    /// Whether the session's client uses the AudioSession library, which resumes its
    /// session itself: the one fact is the `audio.session.library` client property
    /// the library sets. Declarations alone say nothing: `PULSE_PROP` puts a wrapped
    /// program's declaration on its client too.
    func usesClientLibrary(_ s: SessionID) -> Bool {
        guard case .client(let c) = s else { return false }
        return model.clients[c]?.facts.declaration.usesLibrary == true
    }

    /// Whether the policy holds one of the session's streams paused.
    func holdsPausedStream(_ s: SessionID) -> Bool {
        streamsOf(s).contains { model.streams[$0]?.pausedByPolicy == true }
    }

    /// Sessions with an input stream linked from the source, in order.
    func sessionsCapturing(from e: NodeID) -> [SessionID] {
        var out: Set<SessionID> = []
        for l in index.linksOfNode[e] ?? [] {
            guard let link = model.links[l], link.output == e, let st = model.streams[link.input], st.direction == .input,
                let s = sessionOf(link.input)
            else { continue }
            out.insert(s)
        }
        return out.sorted()
    }
}

extension PolicyStep {
    /// Interrupts an active session: its streams stop first (R11), then it hears `began`.
    mutating func interrupt(_ v: SessionID, cause: InterruptionCause, reason: InterruptionReason) {
        guard var m = model.marks[v], m.interruption == nil else { return }  // R13: never a second began
        let wasPlaying = hasRunningStream(v)
        pauseRunningStreams(v)
        m.active = false
        state.setMarks(v, m)
        updateMembership(v)
        beginInterruption(v, cause: cause, reason: reason, wasPlaying: wasPlaying)
    }

    /// Records an interruption and tells the session (after its pauses, R11).
    mutating func beginInterruption(_ v: SessionID, cause: InterruptionCause, reason: InterruptionReason, wasPlaying: Bool) {
        var m = model.marks[v] ?? SessionMarks()
        guard m.interruption == nil else { return }
        m.interruption = InterruptionMark(cause: cause, reason: reason, wasPlaying: wasPlaying)
        state.setMarks(v, m)
        touched.insert(v)
        notify(v, .interruptionBegan(reason: reason))
    }

    /// Forgets a session's interruption without telling it.
    mutating func clearInterruption(_ v: SessionID) {
        guard var m = model.marks[v], m.interruption != nil else { return }
        m.interruption = nil
        state.setMarks(v, m)
        touched.insert(v)
    }

    /// Ends the interruptions `cause` made (R7, R14, R15). A victim still blocked by
    /// another active session stays interrupted, now by that one (R13: no second began).
    mutating func endInterruptions(causedBy cause: InterruptionCause, resumable: Bool) {
        guard let victims = index.victimsOf[cause] else { return }
        for v in victims.sorted() {
            guard let m = model.marks[v], let i = m.interruption, i.cause == cause, let t = traits(v) else { continue }
            if case .refused(_, let blocker) = arbitrate(v, t), .session(blocker) != cause {
                clearInterruption(v)
                var moved = model.marks[v] ?? SessionMarks()
                moved.interruption = InterruptionMark(cause: .session(blocker), reason: i.reason, wasPlaying: i.wasPlaying, pausedItself: i.pausedItself)
                state.setMarks(v, moved)
                continue
            }
            let shouldResume = resumable && i.wasPlaying && !i.pausedItself
            clearInterruption(v)
            notify(v, .interruptionEnded(shouldResume: shouldResume))
            // R15: the policy resumes every session that has no client library to
            // resume it: legacy streams and wrapped programs, whether their declaration
            // came on the stream (PIPEWIRE_PROPS) or on the client as well (PULSE_PROP).
            // A stream released to its program (streamReleasedToProgram) is resumed by
            // that program: the session activates when it starts.
            if shouldResume && (t.isLegacy || !usesClientLibrary(v)) && holdsPausedStream(v) {
                activate(v, explicit: false)
            }
        }
    }

    /// Pauses every running stream of the session that the policy has not paused yet.
    mutating func pauseRunningStreams(_ s: SessionID) {
        for n in streamsOf(s) where model.streams[n]?.runs == true {
            pause(n)
        }
        touched.insert(s)
    }

    /// Pauses the stream unless the policy already holds it paused.
    mutating func pause(_ n: NodeID) {
        guard var st = model.streams[n], !st.pausedByPolicy else { return }
        st.pausedByPolicy = true
        st.resumedByPolicy = false
        state.setDecisions(n, st)
        emit(.pause(n))
    }

    /// Resumes every stream of the session that the policy paused. Gains are
    /// refreshed first, so the first resumed block is already at the right level.
    mutating func resumePausedStreams(_ s: SessionID) {
        var any = false
        for n in streamsOf(s) where model.streams[n]?.pausedByPolicy == true { any = true }
        guard any else { return }
        refreshGains(s)
        for n in streamsOf(s) {
            guard var st = model.streams[n], st.pausedByPolicy else { continue }
            st.pausedByPolicy = false
            // Running already when the module has not yet reported the pause: nothing to confirm.
            st.resumedByPolicy = !st.running
            st.lostOutput = nil
            state.setDecisions(n, st)
            emit(.resume(n))
        }
        touched.insert(s)
    }

    /// R19: the source a session captures from was muted or unmuted.
    mutating func endpointMuteChanged(_ e: NodeID, muted: Bool) {
        guard var ep = model.endpoints[e], ep.kind == .source else { return }
        guard ep.muted != muted else { return }
        ep.muted = muted
        state.setEndpoint(e, ep)
        if muted {
            for s in sessionsCapturing(from: e) {
                guard isActive(s), let t = traits(s), t.hasInput, !t.unmanaged else { continue }
                // With overrideMutedMicrophoneInterruption it keeps running and receives silence.
                if t.options.contains(.overrideMutedMicrophoneInterruption) { continue }
                interrupt(s, cause: .microphoneMuted(e), reason: .builtInMicMuted)
            }
        } else {
            endInterruptions(causedBy: .microphoneMuted(e), resumable: true)
        }
    }
}

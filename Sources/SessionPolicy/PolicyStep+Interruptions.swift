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

    /// Whether one of the session's streams fades out before its pause (R42).
    func isFadingOut(_ s: SessionID) -> Bool {
        anyStream(of: s) { $0.fade == .fadingOut }
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
    /// Its playing output streams fade out first (R42); `began` then waits for their silence.
    mutating func interrupt(_ v: SessionID, cause: InterruptionCause, reason: InterruptionReason) {
        guard var m = model.marks[v], m.interruption == nil else { return }  // R13: never a second began
        // A stream held through its headset's profile switch that will play again plays (R35).
        let wasPlaying = hasRunningStream(v) || anyStream(of: v) { $0.switchHold?.resume == true }
        pauseRunningStreams(v, fading: true)
        m.active = false
        state.setMarks(v, m)
        updateMembership(v)
        beginInterruption(v, cause: cause, reason: reason, wasPlaying: wasPlaying)
    }

    /// Records an interruption and tells the session (after its pauses, R11); while one of
    /// its streams still fades out (R42) the telling waits until they are silent
    /// (`tellBeganOnceSilent`).
    mutating func beginInterruption(_ v: SessionID, cause: InterruptionCause, reason: InterruptionReason, wasPlaying: Bool) {
        var m = model.marks[v] ?? SessionMarks()
        guard m.interruption == nil else { return }
        let tell = !isFadingOut(v)
        m.interruption = InterruptionMark(cause: cause, reason: reason, wasPlaying: wasPlaying, beganTold: tell)
        state.setMarks(v, m)
        touched.insert(v)
        if tell { notify(v, .interruptionBegan(reason: reason)) }
    }

    /// R42, R11: the session's `began`, held while its streams faded out, is told once none
    /// of them fades any more (each is paused, gone, or paused by its program).
    mutating func tellBeganOnceSilent(_ s: SessionID) {
        guard var m = model.marks[s], var i = m.interruption, !i.beganTold, !isFadingOut(s) else { return }
        i.beganTold = true
        m.interruption = i
        state.setMarks(s, m)
        touched.insert(s)
        notify(s, .interruptionBegan(reason: i.reason))
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
        // The highest priority first: a call that resumes holds back what it would interrupt,
        // instead of a lower session resuming and being paused again in the same event.
        let order = victims.map { (traits($0)?.priority ?? Int.min, $0) }.sorted { $0.0 != $1.0 ? $0.0 > $1.0 : $0.1 < $1.1 }
        for (_, v) in order {
            guard let m = model.marks[v], let i = m.interruption, i.cause == cause, let t = traits(v) else { continue }
            if case .refused(_, let blocker) = arbitrate(v, t), .session(blocker) != cause {
                clearInterruption(v)
                var moved = model.marks[v] ?? SessionMarks()
                moved.interruption = InterruptionMark(
                    cause: .session(blocker), reason: i.reason, wasPlaying: i.wasPlaying, pausedItself: i.pausedItself,
                    beganTold: i.beganTold)
                state.setMarks(v, moved)
                continue
            }
            clearInterruption(v)
            guard i.beganTold else {
                // R42: it ended while the session still faded out. It was never told, so it
                // hears nothing now; its streams fade back in from where they are and are
                // never paused (whoever resumes the session otherwise, library or not).
                activate(v, explicit: false)
                continue
            }
            let shouldResume = resumable && i.wasPlaying && !i.pausedItself
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

    /// Pauses every running stream of the session that the policy has not paused yet. With
    /// `fading` (an interruption, R42) its playing output streams fade out first.
    mutating func pauseRunningStreams(_ s: SessionID, fading: Bool = false) {
        for n in streamsOf(s) where model.streams[n]?.runs == true {
            if fading { fadeOutAndPause(n) } else { pause(n) }
        }
        touched.insert(s)
    }

    /// Pauses the stream unless the policy already holds it paused. A stream still fading
    /// out is paused at once (R30: its output went away mid-fade).
    mutating func pause(_ n: NodeID) {
        guard var st = model.streams[n] else { return }
        let wasFading = st.fade == .fadingOut
        guard !st.pausedByPolicy || wasFading else { return }
        st.pausedByPolicy = true
        st.resumedByPolicy = false
        if wasFading { st.fade = .silent }
        state.setDecisions(n, st)
        emit(.pause(n))
        if wasFading, let s = sessionOf(n) { tellBeganOnceSilent(s) }
    }

    /// R42: an interrupted stream that plays fades to silence first; its pause follows the
    /// module's report (`streamFadedOut`). Capture streams, streams not yet running and a
    /// fade-out of 0 ms pause at once.
    mutating func fadeOutAndPause(_ n: NodeID) {
        guard var st = model.streams[n], !st.pausedByPolicy else { return }
        guard st.direction == .output, st.running else {
            pause(n)
            return
        }
        guard configuration.fadeOutMilliseconds > 0 else {
            // No fade-out: paused at once, silent from there so that it can fade back in.
            pause(n)
            guard configuration.fadeInMilliseconds > 0 else { return }
            state.updateStream(n) { $0.fade = .silent }
            emit(.fade(n, gain: 0, milliseconds: 0))
            return
        }
        st.pausedByPolicy = true
        st.resumedByPolicy = false
        st.fade = .fadingOut
        state.setDecisions(n, st)
        emit(.fade(n, gain: 0, milliseconds: configuration.fadeOutMilliseconds))
    }

    /// R42: the stream's fade has reached silence: the policy pauses it, and its session
    /// hears `began` once none of its streams fades any more. A report for a fade that was
    /// reversed (the interruption ended) or overtaken (paused at once) changes nothing.
    mutating func streamFadedOut(_ n: NodeID) {
        guard let st = model.streams[n], st.fade == .fadingOut else { return }
        if st.pausedByPolicy {
            pause(n)
        } else {
            // Its program paused it meanwhile (`streamReleasedToProgram`): it is silent.
            state.updateStream(n) { $0.fade = .silent }
            if let s = sessionOf(n) { tellBeganOnceSilent(s) }
        }
        if let s = sessionOf(n) { touched.insert(s) }
    }

    /// R42: a stream the policy faded plays again (the policy resumed it, or its program
    /// did after the policy let go): at the end of the event (`fadeIns`), its gain ramps
    /// from where the fade left it back to its duck gain over the fade-in. One paused
    /// again within the event stays silent. The fade goes ahead of the policy's resume:
    /// the stream takes the fade's first, inaudible step while still paused, and plays
    /// from its first cycle on with the ramp under way.
    mutating func fadeBackIn(_ n: NodeID) {
        guard var st = model.streams[n], st.fade != .none, !st.pausedByPolicy else { return }
        st.fade = .none
        state.setDecisions(n, st)
        let fade = Effect.fade(n, gain: st.duckGain, milliseconds: configuration.fadeInMilliseconds)
        if let i = fx.lastIndex(of: .resume(n)) { fx.insert(fade, at: i) } else { fx.append(fade) }
    }

    /// Resumes every stream of the session that the policy paused. Gains are
    /// refreshed first, so the first resumed block is already at the right level. A stream
    /// held through its headset's profile switch (R35) plays once the switch settles.
    mutating func resumePausedStreams(_ s: SessionID) {
        var any = false
        for n in streamsOf(s) where model.streams[n]?.pausedByPolicy == true { any = true }
        guard any else { return }
        refreshGains(s)
        for n in streamsOf(s) {
            guard var st = model.streams[n], st.pausedByPolicy else { continue }
            if st.switchHold != nil {
                state.updateStream(n) { $0.switchHold?.resume = true }
                continue
            }
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

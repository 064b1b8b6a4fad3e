/// Ducking (R3, §12), silencing (R20, R21) and the secondary-audio hint (R22).
/// `AVAudioSession.CategoryOptions.duckOthers`, `secondaryAudioShouldBeSilencedHint`.

/// The gain and silence applied to all of a session's output streams.
struct UniformGains: Hashable {
    var gain: Float
    var silenced: Bool
}

extension PolicyReading {
    /// A duck level from configuration, kept within [0, 1] whatever was configured.
    static func clampLevel(_ level: Float) -> Float {
        guard level.isFinite else { return 1 }
        return min(max(level, 0), 1)
    }

    /// The gain the policy wants on the session's output: the lowest level among the
    /// active duckers that apply to it (R3: several duckers never stack below the level).
    func desiredDuckGain(_ s: SessionID, _ t: SessionTraits) -> Float {
        guard isActive(s), t.hasOutput, !(index.activeDuckers.isEmpty && model.held.isEmpty) else { return 1 }
        var gain: Float = 1
        // A ducker that went moments ago still ducks during the grace period.
        for h in model.held.values where h.ducks && h.client != t.client {
            if h.isAlert && t.prefersNoAlerts { continue }
            if t.priority > h.priority { continue }
            gain = min(gain, Self.clampLevel(h.duckLevel))
        }
        for d in index.activeDuckers where d != s {
            guard let td = traits(d), td.client != t.client else { continue }
            if td.isAlert && t.prefersNoAlerts { continue }  // R17
            if t.priority > td.priority { continue }  // a prompt never ducks a call
            let level =
                configuration.strongDuckForPrompts && td.mode == .voicePrompt
                ? configuration.strongDuckLevel : configuration.duckLevel
            gain = min(gain, Self.clampLevel(level))
        }
        return gain
    }

    /// Whether the policy mutes the session's output (R20 silent mode / screen lock,
    /// R21 alerts and ambient output while a record session is active).
    func desiredSilence(_ s: SessionID, _ t: SessionTraits) -> Bool {
        guard isActive(s), t.hasOutput else { return false }
        if (model.silentMode || model.screenLocked) && t.category.isSilencedBySilentMode { return true }
        if t.isAlert || t.category == .ambient {
            for r in index.activeRecorders where r != s { return true }
        }
        return false
    }
}

extension PolicyStep {
    /// Emits the duck and silence changes of the session's output streams.
    mutating func refreshGains(_ s: SessionID) {
        guard let t = traits(s), !t.unmanaged else { return }
        let gain = desiredDuckGain(s, t)
        let silenced = desiredSilence(s, t)
        switch s {
        case .client(let c):
            // Every output stream is already there: nothing to change, nothing walked.
            if index.uniformGains(c) == UniformGains(gain: gain, silenced: silenced) { return }
            for n in index.streamsOfClient[c]?.nodes ?? [] { applyGains(s, n, gain: gain, silenced: silenced) }
        case .stream(let n):
            applyGains(s, n, gain: gain, silenced: silenced)
        }
    }

    /// Brings one output stream of `s` to the wanted gain and silence (effects only on change).
    mutating func applyGains(_ s: SessionID, _ n: NodeID, gain: Float, silenced: Bool) {
        let down = configuration.duckRampDownMilliseconds, up = configuration.duckRampUpMilliseconds
        var changed = false, silenceChanged = false, faded = false
        var ramp: UInt32?
        // Changed where the record lies: most streams already have the gains (no copy of it).
        state.updateStream(n) { st in
            guard st.direction == .output, st.duckGain != gain || st.silenced != silenced else { return }
            changed = true
            ramp = st.duckGain == gain ? nil : gain < st.duckGain ? down : up
            silenceChanged = st.silenced != silenced
            faded = st.fade != .none
            st.duckGain = gain
            st.silenced = silenced
        }
        guard changed else { return }
        // A faded stream's gain stays at silence: the new duck gain is where it fades back in to (R42).
        if let ramp, !faded {
            emit(.duck(n, gain: gain, rampMilliseconds: ramp))
        }
        if ramp != nil { touched.insert(s) }  // its published duckGain changes
        if silenceChanged {
            emit(.silence(n, silenced))
            touched.insert(s)
        }
    }

    /// Tells active sessions whose hint flipped (R22).
    mutating func refreshHints() {
        // The array of the step's last event, empty, with its storage: most events have one
        // target or none, and a new array for each would be an allocation and a free.
        var targets: [SessionID] = []
        swap(&targets, &hintTargets)
        defer {
            targets.removeAll(keepingCapacity: targets.capacity <= 64)
            hintTargets = targets
        }
        if hintDirty {
            // A flip reaches every active session (R22): room for their notices and publications.
            targets = index.active.sorted()
            touched.reserveCapacity(touched.count + targets.count)
            fx.reserveCapacity(fx.count + 2 * targets.count + 1)
        } else {
            // Only the sessions this event touched or activated can have a new hint.
            for s in touched where index.active.contains(s) { targets.append(s) }
            for s in justActivated where index.active.contains(s) && !touched.contains(s) { targets.append(s) }
            if targets.count > 1 { targets.sort() }
        }
        guard !targets.isEmpty else { return }
        // The clients with primary audio: none, exactly one, or several.
        var primaryClient: ClientID?
        var severalPrimaryClients = false
        for p in index.primary {
            guard let pc = clientOf(p) else { continue }
            if let known = primaryClient {
                if known != pc {
                    severalPrimaryClients = true
                    break
                }
            } else {
                primaryClient = pc
            }
        }
        let anyJustActivated = !justActivated.isEmpty
        for s in targets {
            guard let told = state.readMarks(s, { $0.hintTold }) else { continue }
            // Another client than the session's own has primary audio.
            let value = severalPrimaryClients || (primaryClient != nil && primaryClient != clientOf(s))
            guard value != told else { continue }
            state.updateMarks(s) { $0.hintTold = value }
            if anyJustActivated && justActivated.contains(s) {
                // Told on flips only; a newly active session reads the property.
                continue
            }
            touched.insert(s)
            notify(s, .silenceSecondaryAudioHint(begin: value))
        }
    }
}

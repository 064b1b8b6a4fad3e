/// Ducking (R3, SPEC 12), silencing (R20, R21) and the secondary-audio hint (R22).
/// `AVAudioSession.CategoryOptions.duckOthers`, `secondaryAudioShouldBeSilencedHint`.
extension SessionPolicy {
    /// A duck level from configuration, kept within [0, 1] whatever was configured.
    static func clampLevel(_ level: Float) -> Float {
        guard level.isFinite else { return 1 }
        return min(max(level, 0), 1)
    }

    /// The gain the policy wants on the session's output: the lowest level among the
    /// active duckers that apply to it (R3: several duckers never stack below the level).
    func desiredDuckGain(_ s: SessionID, _ t: SessionTraits) -> Float {
        guard isActive(s), t.hasOutput, !activeDuckers.isEmpty else { return 1 }
        var gain: Float = 1
        for d in activeDuckers where d != s {
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
        if (silentMode || screenLocked) && t.category.isSilencedBySilentMode { return true }
        if t.isAlert || t.category == .ambient {
            for r in activeRecorders where r != s { return true }
        }
        return false
    }

    /// Emits the duck and silence changes of the session's output streams.
    mutating func refreshGains(_ s: SessionID) {
        guard let t = traits(s), !t.unmanaged else { return }
        let gain = desiredDuckGain(s, t)
        let silenced = desiredSilence(s, t)
        for n in streamsOf(s) {
            guard var st = streams[n], st.direction == .output else { continue }
            if st.duckGain != gain {
                let ramp = gain < st.duckGain ? configuration.duckRampDownMilliseconds : configuration.duckRampUpMilliseconds
                st.duckGain = gain
                emit(.duck(n, gain: gain, rampMilliseconds: ramp))
                touched.insert(s)  // its published duckGain changes
            }
            if st.silenced != silenced {
                st.silenced = silenced
                emit(.silence(n, silenced))
                touched.insert(s)
            }
            streams[n] = st
        }
    }

    /// R22 for one session: another client's non-mixable primary audio plays.
    func hintValue(for s: SessionID) -> Bool {
        let c = clientOf(s)
        return primary.contains { clientOf($0) != c }
    }

    /// Tells active sessions whose hint flipped (R22).
    mutating func refreshHints() {
        var targets: Set<SessionID> = touched.intersection(active).union(justActivated.intersection(active))
        if hintDirty { targets = active }
        guard !targets.isEmpty else { return }
        let primaryClients = Set(primary.compactMap { clientOf($0) })
        for s in targets.sorted() {
            guard var m = marks[s] else { continue }
            let c = clientOf(s)
            let value = primaryClients.contains { $0 != c }
            if justActivated.contains(s) {
                // Told on flips only; a newly active session reads the property.
                if value != m.hintTold {
                    m.hintTold = value
                    marks[s] = m
                }
                continue
            }
            if value != m.hintTold {
                m.hintTold = value
                marks[s] = m
                touched.insert(s)
                notify(s, .silenceSecondaryAudioHint(begin: value))
            }
        }
    }
}

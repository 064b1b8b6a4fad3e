/// The grace period after a session that interrupted or ducked others goes (R7, R14,
/// R3): programs that re-create their stream for every phrase (speech synthesizers)
/// would otherwise give the audio back in each gap of a few milliseconds. The end of
/// the interruptions and of the duck is held for `resumeGraceMilliseconds`; a session
/// of the same program with the same declaration that starts within it takes them over.
/// An explicit `setActive(false)` ends them at once: the program said what it meant. So
/// does a client that goes (its connection closed: the program quit, or the call program
/// hung up and disconnected): nothing of it can follow.

/// An interruption cause and its duck, held after the session went.
struct HeldEnd: Equatable {
    var cause: InterruptionCause
    var client: ClientID
    var application: String?
    var category: Category
    var mode: Mode
    var options: CategoryOptions
    var resumable: Bool
    var ducks: Bool
    var duckLevel: Float
    var priority: Int
    var isAlert: Bool
}

extension PolicyStep {
    /// The session `s` went (deactivated or removed) with `traits` as it had while active:
    /// ends the interruptions it caused now, or holds them (and its duck) for the grace period.
    mutating func endOrHold(_ s: SessionID, traits t: SessionTraits?, resumable: Bool) {
        let cause = InterruptionCause.session(s)
        // What is already held keeps the shouldResume it was held with: the session's traits
        // may have changed since (R43: a call's streams stop being a call when its capture ends).
        let resumable = resumable || model.held.values.contains { $0.cause == cause && $0.resumable }
        let grace = configuration.resumeGraceMilliseconds
        let hasVictims = index.victimsOf[cause]?.isEmpty == false
        let ducked = t.map { $0.options.contains(.duckOthers) && $0.hasOutput } ?? false
        // Its client is going: no follow-up can come from it, nothing to wait for.
        let going = t.map { $0.client == clientGoing } ?? false
        guard grace > 0, let t, hasVictims || ducked, !going else {
            endInterruptions(causedBy: cause, resumable: resumable)
            return
        }
        let token = state.hold(HeldEnd(
            cause: cause, client: t.client, application: applicationName(t.client),
            category: t.category, mode: t.mode, options: t.options, resumable: resumable,
            ducks: ducked,
            duckLevel: configuration.strongDuckForPrompts && t.mode == .voicePrompt
                ? configuration.strongDuckLevel : configuration.duckLevel,
            priority: t.priority, isAlert: t.isAlert))
        if ducked { refreshAll = true }
        emit(.scheduleTimer(token: token, milliseconds: grace))
    }

    /// Ends at once what `c`'s sessions left held: its client has gone, so no follow-up of
    /// its can come.
    mutating func endHeldEnds(of c: ClientID) {
        let tokens = model.held.filter { $0.value.client == c }.keys.sorted()
        for token in tokens {
            guard let h = state.takeHeld(token) else { continue }
            if h.ducks { refreshAll = true }
            endInterruptions(causedBy: h.cause, resumable: h.resumable)
        }
    }

    /// The grace period of `token` is over: what it held ends now.
    mutating func heldEndExpired(_ token: UInt64) {
        guard let h = state.takeHeld(token) else { return }  // taken over, or unknown
        if h.ducks { refreshAll = true }
        endInterruptions(causedBy: h.cause, resumable: h.resumable)
    }

    /// `s` just activated: it takes over what a session of the same program with the same
    /// declaration left held, so its victims stay paused without a second `began` (R13)
    /// and nobody hears an `ended` in between.
    mutating func takeOverHeldEnds(_ s: SessionID, _ t: SessionTraits) {
        guard !model.held.isEmpty else { return }
        let application = applicationName(t.client)
        let tokens = model.held.filter { _, h in
            h.category == t.category && h.mode == t.mode && h.options == t.options &&
                (h.client == t.client || (h.application != nil && h.application == application))
        }.keys.sorted()
        for token in tokens {
            guard let h = state.takeHeld(token) else { continue }
            if h.ducks { refreshAll = true }
            moveVictims(from: h.cause, to: .session(s))
        }
    }

    /// The victims of `from` become victims of `to`, their interruption otherwise unchanged.
    mutating func moveVictims(from: InterruptionCause, to: InterruptionCause) {
        guard from != to, let victims = index.victimsOf[from] else { return }
        for v in victims.sorted() {
            guard var m = model.marks[v], var i = m.interruption, i.cause == from else { continue }
            i.cause = to
            m.interruption = i
            state.setMarks(v, m)
            touched.insert(v)
        }
    }
}

/// The MPRIS bridge's reports (docs/mpris.md): the players that govern legacy streams, and
/// the streams whose player paused itself after the policy paused them.
extension PolicyReading {
    /// Whether a client may report players: a client of the daemon's own user that is not
    /// sandboxed, as the module established it when the client connected
    /// (`ClientIdentity`: `pipewire.sec.uid`, set by the daemon from the socket's
    /// credentials). What a client says about itself never counts; a client without an
    /// established user is not trusted.
    func mayReportPlayers(_ c: ClientID) -> Bool {
        guard let id = model.clients[c]?.facts.identity, !id.sandboxed,
              let daemon = configuration.daemonUserID, let uid = id.uid else { return false }
        return uid == daemon
    }
}

extension PolicyStep {
    /// A client's report changed. Refused from an untrusted client (its earlier report
    /// goes too); accepted, each newly released stream is let go of
    /// (`streamReleasedToProgram`), and the published players follow.
    mutating func playerReportChanged(_ c: ClientID, _ report: PlayerReport) {
        guard mayReportPlayers(c) else {
            if state.setPlayerReport(c, nil) != nil { refreshPlayers() }
            emit(.playerReportRefused(c))
            return
        }
        let before = state.setPlayerReport(c, report)?.released ?? []
        for n in report.released.subtracting(before).sorted() { streamReleasedToProgram(n) }
        // A stream the bridge still governs that is no longer released: its player plays
        // again (the user's play, or the player obeying the bridge's Play after the
        // interruption ended). A player that paused without pausing its stream in the graph
        // (Chromium keeps its stream open, writing silence) never activates the node again:
        // its playing again is the owner's activation, arbitrated as one (R16). For a player
        // that did activate it, the pause is already gone and this changes nothing.
        for n in before.subtracting(report.released).sorted()
        where report.governed[n] != nil {
            playerPlaysAgain(n)
        }
        refreshPlayers()
    }

    /// The player of a released stream plays again while the module's pause still holds its
    /// node: the policy takes that pause back as its own and answers the player's start as an
    /// activation request (R16): resumed when the session may play, held when it may not.
    mutating func playerPlaysAgain(_ n: NodeID) {
        guard var st = model.streams[n], st.pauseReleased else { return }
        st.pauseReleased = false
        st.pausedByPolicy = true
        state.setDecisions(n, st)
        streamActivationRequested(n)
    }

    /// Brings `audio-session.mpris` in line with the accepted reports, for streams that exist.
    mutating func refreshPlayers() {
        var wanted: [NodeID: String] = [:]
        for c in model.playerReports.keys.sorted() {
            for (n, player) in model.playerReports[c]?.governed ?? [:] where model.streams[n] != nil {
                wanted[n] = player
            }
        }
        for n in model.publishedPlayers.keys.sorted() where wanted[n] == nil {
            emit(.publishPlayer(n, player: nil))
        }
        for n in wanted.keys.sorted() where model.publishedPlayers[n] != wanted[n] {
            emit(.publishPlayer(n, player: wanted[n]))
        }
        state.setPublishedPlayers(wanted)
    }
}

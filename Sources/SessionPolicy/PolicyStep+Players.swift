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
        refreshPlayers()
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

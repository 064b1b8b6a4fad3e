import SessionAgent
import Testing

/// The MPRIS bridge's decisions (docs/mpris.md): given a state, when events, then actions.
@Suite struct MPRISGovernorTests {
    static let mpv = "org.mpris.MediaPlayer2.mpv"
    typealias G = MPRISGovernor

    @Test func r15AnInterruptedPlayerIsPausedReleasedOnceItReportsPausedAndPlayedAfterward() {
        var g = G()
        #expect(g.streamPaused(56, player: Self.mpv, status: .playing, cause: .interruption)
                == [.pause(player: Self.mpv), .report(governed: [56: Self.mpv], released: [])])
        #expect(g.statusChanged(player: Self.mpv, .paused) == [.report(governed: [56: Self.mpv], released: [56])])
        // The same value again (the read after Pause racing the signal) is no news.
        #expect(g.statusChanged(player: Self.mpv, .paused) == [])
        // Handed back: still governed and released until the player plays …
        #expect(g.interruptionEnded(56, shouldResume: true) == [.play(player: Self.mpv), .report(governed: [56: Self.mpv], released: [56])])
        // … then governed and not released (the policy sees the player play again) …
        #expect(g.statusChanged(player: Self.mpv, .playing) == [.report(governed: [56: Self.mpv], released: [])])
        // … and the next change is the user's: the bridge lets go.
        #expect(g.statusChanged(player: Self.mpv, .paused) == [.report(governed: [:], released: [])])
        #expect(g.watchedPlayers.isEmpty)
    }

    @Test func r14NoPlayWithoutShouldResume() {
        var g = G()
        _ = g.streamPaused(56, player: Self.mpv, status: .playing, cause: .interruption)
        _ = g.statusChanged(player: Self.mpv, .paused)
        #expect(g.interruptionEnded(56, shouldResume: false) == [.report(governed: [:], released: [])])
    }

    @Test func r18TheUserPlayingOrPausingMeanwhileMeansNoPlay() {
        var g = G()
        _ = g.streamPaused(56, player: Self.mpv, status: .playing, cause: .interruption)
        _ = g.statusChanged(player: Self.mpv, .paused)
        // The user presses play: no longer released (the policy pauses it again in the graph) …
        #expect(g.statusChanged(player: Self.mpv, .playing) == [.report(governed: [56: Self.mpv], released: [])])
        // … then pause: released again.
        #expect(g.statusChanged(player: Self.mpv, .paused) == [.report(governed: [56: Self.mpv], released: [56])])
        #expect(g.interruptionEnded(56, shouldResume: true) == [.report(governed: [:], released: [])])
    }

    @Test func aStreamHandedBackIsGovernedAgainByTheNextInterruption() {
        var g = G()
        _ = g.streamPaused(56, player: Self.mpv, status: .playing, cause: .interruption)
        _ = g.statusChanged(player: Self.mpv, .paused)
        _ = g.interruptionEnded(56, shouldResume: true)
        _ = g.statusChanged(player: Self.mpv, .playing)
        // A second call before the player's status changed again: paused through its player anew.
        #expect(g.streamPaused(56, player: Self.mpv, status: .playing, cause: .interruption)
                == [.pause(player: Self.mpv), .report(governed: [56: Self.mpv], released: [])])
        #expect(g.statusChanged(player: Self.mpv, .paused) == [.report(governed: [56: Self.mpv], released: [56])])
    }

    @Test func aPlayerThatWasNotPlayingIsLeftAlone() {
        var g = G()
        #expect(g.streamPaused(56, player: Self.mpv, status: .paused, cause: .interruption) == [])
        #expect(g.interruptionEnded(56, shouldResume: true) == [])
    }

    /// WirePlumber 0.5.11+ paused the player itself when its device sink went: no second
    /// Pause from the bridge, the graph pause released as after its own, never a Play.
    @Test func r31APlayerWirePlumberPausedFirstIsNotPausedAgainAndIsReleased() {
        var g = G()
        #expect(g.streamPaused(56, player: Self.mpv, status: .paused, cause: .routeLoss)
                == [.report(governed: [56: Self.mpv], released: [56])])
        #expect(g.statusChanged(player: Self.mpv, .paused) == [])
        #expect(g.interruptionEnded(56, shouldResume: true) == [])
        // The user presses play: handed back (the policy sees it play again), then let go.
        #expect(g.statusChanged(player: Self.mpv, .playing) == [.report(governed: [56: Self.mpv], released: [])])
        #expect(g.statusChanged(player: Self.mpv, .paused) == [.report(governed: [:], released: [])])
    }

    @Test func r31AfterARouteLossThereIsNeverAPlay() {
        var g = G()
        _ = g.streamPaused(56, player: Self.mpv, status: .playing, cause: .routeLoss)
        #expect(g.statusChanged(player: Self.mpv, .paused) == [.report(governed: [56: Self.mpv], released: [56])])
        // A routeChange is not an interruption: an unrelated ended changes nothing.
        #expect(g.interruptionEnded(56, shouldResume: true) == [])
        // The user presses play: handed back, reported once as playing, then let go.
        #expect(g.statusChanged(player: Self.mpv, .playing) == [.report(governed: [56: Self.mpv], released: [])])
        #expect(g.statusChanged(player: Self.mpv, .paused) == [.report(governed: [:], released: [])])
        #expect(g.watchedPlayers.isEmpty)
    }

    @Test func aStreamOrPlayerThatGoesIsForgotten() {
        var g = G()
        _ = g.streamPaused(56, player: Self.mpv, status: .playing, cause: .interruption)
        _ = g.streamPaused(57, player: "org.mpris.MediaPlayer2.vlc", status: .playing, cause: .interruption)
        #expect(g.streamRemoved(56) == [.report(governed: [57: "org.mpris.MediaPlayer2.vlc"], released: [])])
        #expect(g.playerGone("org.mpris.MediaPlayer2.vlc") == [.report(governed: [:], released: [])])
        #expect(g.playerGone("org.mpris.MediaPlayer2.vlc") == [])
        _ = g.streamPaused(58, player: Self.mpv, status: .playing, cause: .interruption)
        #expect(g.reset() == [.report(governed: [:], released: [])])
        #expect(g.reset() == [])
    }
}

/// The MPRIS bridge's decisions (docs/mpris.md), as a state machine without I/O: one
/// `mutating func` per input, each returning what to do. `MPRISBridge` feeds it policy
/// events and players' `PlaybackStatus` changes and carries out its actions over D-Bus
/// and on the bridge's PipeWire connection.
public struct MPRISGovernor: Sendable, Equatable {
    /// `org.mpris.MediaPlayer2.Player.PlaybackStatus`.
    public enum PlaybackStatus: String, Sendable, Equatable {
        case playing = "Playing", paused = "Paused", stopped = "Stopped"
    }

    /// Why the policy paused the stream.
    public enum Cause: Sendable, Equatable {
        /// An interruption (R15: Play again on `ended` with shouldResume).
        case interruption
        /// Its private output went away (R31: never resumed automatically).
        case routeLoss
    }

    public enum Action: Sendable, Equatable {
        /// `org.mpris.MediaPlayer2.Player.Pause` on this bus name.
        case pause(player: String)
        /// `org.mpris.MediaPlayer2.Player.Play` on this bus name.
        case play(player: String)
        /// Publish the reports (`AudioSession.reportMPRISPlayers`): what the bridge
        /// governs, and which streams' players have paused themselves.
        case report(governed: [UInt32: String], released: Set<UInt32>)
    }

    /// One legacy stream the bridge paused through its player.
    public struct Governed: Sendable, Equatable {
        public var player: String
        public var cause: Cause
        /// The player reported Paused after our Pause: the policy's graph pause is released.
        public var confirmed = false
        /// The player's status changed after it confirmed our pause: the user (or another
        /// remote) pressed play or pause meanwhile (R18): no Play from us.
        public var userTouched = false
        /// The player's status as last heard.
        public var status: PlaybackStatus = .playing
        /// The stream was handed back to its player: the interruption ended and we sent Play,
        /// or the user played it after a route loss. It stays governed, not released, while
        /// its player plays, so that the policy sees the player play again (a player that
        /// never paused its stream in the graph, as Chromium, gets its stream back then); the
        /// player's next status change ends the governance.
        public var handedBack = false
        /// The policy may let go of its graph pause: our pause took effect and the
        /// player is not playing now. (When the user presses play during an
        /// interruption, the policy pauses the stream again; when they pause it
        /// after that, it is released again.)
        public var released: Bool { confirmed && status != .playing }
    }

    public private(set) var governed: [UInt32: Governed] = [:]

    public init() {}

    /// The policy paused the legacy stream `stream` (interruption began, or its private
    /// output was lost); `player` owns it and was in `status`. Only a playing player is
    /// paused: one that was not playing has nothing to resume and nothing to correct.
    /// After a route loss, a player that is paused already was paused by WirePlumber
    /// (0.5.11 and later pause the players of a removed device sink themselves,
    /// `linking.pause-playback`): no second Pause, and the graph pause is released as
    /// after ours, so that the player's own Play starts it again (docs/mpris.md).
    public mutating func streamPaused(_ stream: UInt32, player: String, status: PlaybackStatus, cause: Cause) -> [Action] {
        if let g = governed[stream], !g.handedBack { return [] }
        if cause == .routeLoss && status != .playing && governed[stream] == nil {
            var g = Governed(player: player, cause: .routeLoss)
            g.confirmed = true
            g.status = status
            governed[stream] = g
            return [report]
        }
        guard status == .playing else {
            // A stream handed back whose player does not play: nothing left to govern.
            return governed.removeValue(forKey: stream) == nil ? [] : [report]
        }
        governed[stream] = Governed(player: player, cause: cause)
        return [.pause(player: player), report]
    }

    /// The player's `PlaybackStatus` is now `status` (a PropertiesChanged signal, or the
    /// value read once the watch started).
    public mutating func statusChanged(player: String, _ status: PlaybackStatus) -> [Action] {
        var changed = false
        var dropped = false
        for (stream, var g) in governed where g.player == player {
            let wasReleased = g.released
            let previous = g.status
            defer { if g.released != wasReleased { changed = true } }
            g.status = status
            if g.handedBack {
                // The player plays again (reported once, not released); any later change
                // is the user's: the bridge lets go.
                if status == .playing && previous != .playing {
                    governed[stream] = g
                } else if status != previous {
                    governed[stream] = nil
                    dropped = true
                }
                continue
            }
            if !g.confirmed {
                // Our Pause took effect (Stopped counts: nothing plays either).
                guard status != .playing else { continue }
                g.confirmed = true
            } else {
                // A repeated value (the first read racing the first signal) is no news.
                guard status != previous else { continue }
                g.userTouched = true
                // After a route loss there is nothing left to decide: the user took over.
                if g.cause == .routeLoss {
                    if status == .playing {
                        g.handedBack = true
                        governed[stream] = g
                    } else {
                        governed[stream] = nil
                        dropped = true
                    }
                    continue
                }
            }
            governed[stream] = g
        }
        return changed || dropped ? [report] : []
    }

    /// `interruption ended` for the stream's session.
    public mutating func interruptionEnded(_ stream: UInt32, shouldResume: Bool) -> [Action] {
        guard var g = governed[stream], g.cause == .interruption, !g.handedBack else { return [] }
        // R15 through the player: only what we paused, only when the user left it alone (R18).
        guard shouldResume && !g.userTouched else {
            governed[stream] = nil
            return [report]
        }
        if g.status == .playing {
            // It plays already (its Pause never took): nothing to hand back.
            governed[stream] = nil
            return [.play(player: g.player), report]
        }
        g.handedBack = true
        governed[stream] = g
        return [.play(player: g.player), report]
    }

    /// The stream went away (the player closed it, or PipeWire restarted).
    public mutating func streamRemoved(_ stream: UInt32) -> [Action] {
        guard governed.removeValue(forKey: stream) != nil else { return [] }
        return [report]
    }

    /// The player left the bus (it quit, or the D-Bus session restarted).
    public mutating func playerGone(_ player: String) -> [Action] {
        let before = governed.count
        governed = governed.filter { $0.value.player != player }
        return governed.count == before ? [] : [report]
    }

    /// Forget everything (PipeWire restarted: every node id is new).
    public mutating func reset() -> [Action] {
        guard !governed.isEmpty else { return [] }
        governed = [:]
        return [report]
    }

    /// The players the bridge currently watches.
    public var watchedPlayers: Set<String> { Set(governed.values.map(\.player)) }

    var report: Action {
        .report(governed: governed.mapValues(\.player),
                released: Set(governed.filter { $0.value.released }.keys))
    }
}

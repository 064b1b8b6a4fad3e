import AudioSession
import Foundation

/// `pw-session mpris-bridge` (docs/mpris.md): tells MPRIS players the truth about the
/// pauses the policy makes in the graph. When the policy pauses a legacy stream (an
/// interruption, or its private output went away), the bridge finds the player that
/// owns the stream and calls its Pause; once the player reports Paused, it asks the
/// policy to let go of its graph pause (the player's own Play then works as the user
/// expects); when the interruption ends with shouldResume, it calls Play, unless the
/// user played or paused the player meanwhile (R18). After a route loss it never
/// calls Play (R31).
///
/// A stream whose player cannot be found keeps today's behaviour: the graph pause only.
/// All state lives on one serial queue; D-Bus calls block that queue only, never PipeWire.
public final class MPRISBridge: @unchecked Sendable {
    let session: AudioSession
    let bus: GDBus
    let log: @Sendable (String) -> Void
    let queue = DispatchQueue(label: "pw-session.mpris-bridge")
    var governor = MPRISGovernor()
    var watches: [String: GDBus.Watch] = [:]

    public init(session: AudioSession, bus: GDBus = GDBus(), log: @escaping @Sendable (String) -> Void) {
        self.session = session
        self.bus = bus
        self.log = log
    }

    /// Runs until the task is cancelled.
    public func run() async {
        let events = session.policyEvents
        let services = session.mediaServicesChanges
        session.reportMPRISPlayers(governed: [:], released: [])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await e in events { self.queue.sync { self.handle(e) } }
            }
            group.addTask {
                // PipeWire restarted: every node id is new, nothing is governed any more.
                for await _ in services { self.queue.sync { self.perform(self.governor.reset()) } }
            }
            await group.next()
            group.cancelAll()
        }
        queue.sync {
            for w in watches.values { w.stop() }
            watches = [:]
        }
    }

    /// Stops every player watch (the `gdbus monitor` processes).
    public func stop() {
        queue.sync {
            for w in watches.values { w.stop() }
            watches = [:]
        }
    }

    /// One policy event (on `queue`).
    func handle(_ e: PolicyEvent) {
        pruneRemovedStreams()
        guard e.session.kind == .stream else { return }
        let stream = e.session.id
        switch e.notification {
        case .interruptionBegan(let reason):
            streamPaused(stream, cause: reason == .routeDisconnected ? .routeLoss : .interruption)
        case .routeChange(.oldDeviceUnavailable, _, _):
            streamPaused(stream, cause: .routeLoss)
        case .interruptionEnded(let shouldResume):
            guard let g = governor.governed[stream] else { return }
            let actions = governor.interruptionEnded(stream, shouldResume: shouldResume)
            if !actions.contains(.play(player: g.player)) {
                log(shouldResume
                    ? "not resuming \(g.player): it was played or paused during the interruption"
                    : "not resuming \(g.player): the interruption ended without shouldResume")
            }
            perform(actions)
        default:
            break
        }
    }

    func streamPaused(_ stream: UInt32, cause: MPRISGovernor.Cause) {
        guard governor.governed[stream] == nil else { return }
        guard let player = player(owning: stream) else {
            log("stream \(stream): no MPRIS player owns it; the policy's pause in the graph stays the only one")
            return
        }
        // Watch first, so the player's answer to our Pause cannot be missed.
        startWatch(player)
        guard let status = bus.playbackStatus(of: player) else {
            log("\(player) did not report its PlaybackStatus; stream \(stream) stays paused in the graph only")
            syncWatches()
            return
        }
        let actions = governor.streamPaused(stream, player: player, status: status, cause: cause)
        if actions.isEmpty { log("\(player) is \(status.rawValue.lowercased()), not playing: nothing to pause") }
        perform(actions)
        // The status after our Pause, in case its signal came before the watch listened.
        if governor.governed[stream] != nil, let now = bus.playbackStatus(of: player) {
            perform(governor.statusChanged(player: player, now))
        }
    }

    /// The MPRIS player whose bus connection belongs to the stream's process, or to its
    /// nearest ancestor that owns one (`PlayerOwner`): the process is first the client's
    /// `pipewire.sec.pid` (set by the daemon from the socket), then the stream's
    /// `application.process.id` (pipewire-pulse's clients carry the pulse server's own pid;
    /// the program's pid there is the one libpulse reported).
    func player(owning stream: UInt32) -> String? {
        let snap = session.policySnapshot
        guard let node = snap.nodes[stream] else { return nil }
        let players = bus.players()
        guard !players.isEmpty else { return nil }
        let owners = players.compactMap { name in bus.processID(of: name).map { (name: name, pid: $0) } }
        if let client = node["client.id"].flatMap({ UInt32($0) }), let pid = snap.clients[client]?["pipewire.sec.pid"].flatMap({ Int32($0) }),
           let match = PlayerOwner.player(of: pid, owners: owners, parent: PlayerOwner.parentFromProc) {
            return match
        }
        if let pid = applicationProcessID(ofNode: stream),
           let match = PlayerOwner.player(of: pid, owners: owners, parent: PlayerOwner.parentFromProc) {
            return match
        }
        return nil
    }

    /// `application.process.id` of the node's full properties (the registry does not carry
    /// it), read with `pw-dump`.
    func applicationProcessID(ofNode id: UInt32) -> Int32? {
        guard let p = Spawned.start(["pw-dump", String(id)]) else { return nil }
        let data = p.output.readDataToEndOfFile()
        _ = p.wait()
        guard let objects = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return nil }
        for o in objects where (o["id"] as? Int).map({ $0 == Int(id) }) ?? false {
            let props = (o["info"] as? [String: Any])?["props"] as? [String: Any]
            if let n = props?["application.process.id"] as? Int { return Int32(exactly: n) }
            if let s = props?["application.process.id"] as? String { return Int32(s) }
        }
        return nil
    }

    /// Streams that went away are forgotten.
    func pruneRemovedStreams() {
        let nodes = session.policySnapshot.nodes
        for stream in governor.governed.keys.sorted() where nodes[stream] == nil {
            perform(governor.streamRemoved(stream))
        }
    }

    func perform(_ actions: [MPRISGovernor.Action]) {
        for a in actions {
            switch a {
            case .pause(let player):
                let ok = bus.player(player, "Pause")
                log(ok ? "paused \(player)" : "\(player) refused Pause; its stream stays paused in the graph")
            case .play(let player):
                let ok = bus.player(player, "Play")
                log(ok ? "resumed \(player)" : "\(player) refused Play")
            case .report(let governed, let released):
                session.reportMPRISPlayers(governed: governed, released: released)
            }
        }
        syncWatches()
    }

    func startWatch(_ player: String) {
        guard watches[player] == nil else { return }
        let started = bus.watch(player, onLine: { [weak self] line in
            guard let self else { return }
            self.queue.async {
                switch line {
                case .status(let s):
                    self.log("\(player) reports \(s.rawValue)")
                    self.perform(self.governor.statusChanged(player: player, s))
                case .ownerGone:
                    self.log("\(player) left the bus")
                    self.perform(self.governor.playerGone(player))
                case .other: break
                }
            }
        }, onExit: { [weak self] in
            guard let self else { return }
            self.queue.async {
                // The monitor ended: stopped by us, or the session bus went away.
                guard let w = self.watches[player], !w.isRunning else { return }
                self.watches[player] = nil
                self.perform(self.governor.playerGone(player))
            }
        })
        if let started { watches[player] = started }
    }

    /// Stops the monitors of players nothing is governed through any more.
    func syncWatches() {
        let wanted = governor.watchedPlayers
        for (player, w) in watches where !wanted.contains(player) {
            w.stop()
            watches[player] = nil
        }
    }
}

import AudioSession
import Foundation
import Synchronization

/// The agent's MPRIS bridge (docs/mpris.md): tells MPRIS players the truth about the
/// pauses the policy makes in the graph. When the policy pauses a legacy stream (an
/// interruption, or its private output went away), the bridge finds the player that
/// owns the stream and calls its Pause; once the player reports Paused, it asks the
/// policy to let go of its graph pause (the player's own Play then works as the user
/// expects); when the interruption ends with shouldResume, it calls Play, unless the
/// user played or paused the player meanwhile (R18). After a route loss it never
/// calls Play (R31).
///
/// A stream whose player cannot be found keeps today's behaviour: the graph pause only.
/// All state lives on the session bus connection's loop thread; D-Bus calls block that
/// thread only, never PipeWire's. Players' status changes arrive as PropertiesChanged
/// signals (one subscription for every player, kept only from the unique name that owns
/// a watched player), and a player leaving the bus as NameOwnerChanged.
public final class MPRISBridge: @unchecked Sendable {
    public static let playerPrefix = "org.mpris.MediaPlayer2."
    static let objectPath = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"

    let session: AudioSession
    let bus: DBusConnection
    let log: (String) -> Void
    var governor = MPRISGovernor()
    /// The players the bridge listens to, with the unique name that owned each when it started.
    var watched: [String: String] = [:]

    /// `bus` is the session bus; the bridge registers for its connections (call before `bus.start()`).
    public init(session: AudioSession, bus: DBusConnection, log: @escaping (String) -> Void) {
        self.session = session
        self.bus = bus
        self.log = log
        bus.loop.sync {
            bus.whenConnected { [weak self] in self?.subscribe() }
            bus.whenDisconnected { [weak self] in self?.busLost() }
        }
    }

    /// Runs until the task is cancelled.
    public func run() async {
        let events = session.policyEvents
        let services = session.mediaServicesChanges
        bus.loop.sync { session.reportMPRISPlayers(governed: [:], released: []) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await e in events { self.bus.loop.sync { self.handle(e) } }
            }
            group.addTask {
                // PipeWire restarted: every node id is new, nothing is governed any more.
                for await _ in services { self.bus.loop.sync { self.perform(self.governor.reset()) } }
            }
            await group.next()
            group.cancelAll()
        }
        bus.loop.sync { watched = [:] }
    }

    // MARK: The bus (loop thread)

    func subscribe() {
        bus.subscribe(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: Self.objectPath,
                      arg0: Self.playerInterface) { [weak self] signal in
            self?.propertiesChanged(signal)
        }
        bus.subscribe(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                      path: "/org/freedesktop/DBus", arg0: "org.mpris.MediaPlayer2", arg0Namespace: true) { [weak self] signal in
            self?.nameOwnerChanged(signal)
        }
    }

    /// The bus went away: every player on it is gone.
    func busLost() {
        let players = watched.keys.sorted()
        watched = [:]
        for p in players { perform(governor.playerGone(p)) }
    }

    /// A player's `PlaybackStatus` changed. The signal says that it changed, not what it is
    /// now: a signal sent before our last read of the status (an answer to a call overtakes
    /// the signals still queued) would hand the governor an old value after a newer one, and
    /// an old Playing after our Pause looks like the user pressing play. So the status is
    /// read again and the governor hears what it is now (a repeat is no news to it).
    func propertiesChanged(_ signal: DBusSignal) {
        guard let changed = signal.arguments[1]?.dictionary, let raw = changed["PlaybackStatus"]?.string,
              let signalled = MPRISGovernor.PlaybackStatus(rawValue: raw) else { return }
        for (player, owner) in watched.sorted(by: { $0.key < $1.key }) where owner == signal.sender {
            let status = playbackStatus(of: player) ?? signalled
            log("\(player) reports \(status.rawValue)")
            perform(governor.statusChanged(player: player, status))
        }
    }

    func nameOwnerChanged(_ signal: DBusSignal) {
        guard let name = signal.arguments[0]?.string, let owner = watched[name],
              signal.arguments[2]?.string != owner else { return }
        log("\(name) left the bus")
        watched[name] = nil
        perform(governor.playerGone(name))
    }

    /// The MPRIS players on the bus (`ListNames`).
    func players() -> [String] {
        let names = (try? bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames"))?[0]?.elements ?? []
        return names.compactMap(\.string).filter { $0.hasPrefix(Self.playerPrefix) }.sorted()
    }

    /// The process that owns `name` (`GetConnectionUnixProcessID`).
    func processID(of name: String) -> Int32? {
        (try? bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                       "GetConnectionUnixProcessID", [.string(name)]))?[0]?.uint32.flatMap { Int32(exactly: $0) }
    }

    /// The player's `PlaybackStatus`.
    func playbackStatus(of player: String) -> MPRISGovernor.PlaybackStatus? {
        (try? bus.property(player, Self.objectPath, Self.playerInterface, "PlaybackStatus"))?.string
            .flatMap(MPRISGovernor.PlaybackStatus.init(rawValue:))
    }

    /// `Pause` or `Play`; false when the player refused or did not answer.
    func send(_ player: String, _ method: String) -> Bool {
        (try? bus.call(player, Self.objectPath, Self.playerInterface, method)) != nil
    }

    // MARK: Decisions (loop thread)

    /// One policy event.
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
        guard bus.isConnected else {
            log("stream \(stream): no session bus now; the policy's pause in the graph stays the only one")
            return
        }
        guard let player = player(owning: stream) else {
            log("stream \(stream): no MPRIS player owns it; the policy's pause in the graph stays the only one")
            return
        }
        // Watch first, so the player's answer to our Pause cannot be missed.
        startWatch(player)
        guard let status = playbackStatus(of: player) else {
            log("\(player) did not report its PlaybackStatus; stream \(stream) stays paused in the graph only")
            syncWatches()
            return
        }
        let actions = governor.streamPaused(stream, player: player, status: status, cause: cause)
        if actions.isEmpty { log("\(player) is \(status.rawValue.lowercased()), not playing: nothing to pause") }
        perform(actions)
    }

    /// The MPRIS player whose bus connection belongs to the stream's process, or to its
    /// nearest ancestor that owns one (`PlayerOwner`): the process is first the client's
    /// `pipewire.sec.pid` (set by the daemon from the socket), then the stream's
    /// `application.process.id` (pipewire-pulse's clients carry the pulse server's own pid;
    /// the program's pid there is the one libpulse reported).
    func player(owning stream: UInt32) -> String? {
        let snap = session.policySnapshot
        guard let node = snap.nodes[stream] else { return nil }
        let names = players()
        guard !names.isEmpty else { return nil }
        let owners = names.compactMap { name in processID(of: name).map { (name: name, pid: $0) } }
        if let client = node["client.id"].flatMap({ UInt32($0) }), let pid = snap.clients[client]?["pipewire.sec.pid"].flatMap({ Int32($0) }),
           let match = PlayerOwner.player(of: pid, owners: owners, parent: PlayerOwner.parentFromProc) {
            return match
        }
        if let pid = programPID(of: stream), let match = PlayerOwner.player(of: pid, owners: owners, parent: PlayerOwner.parentFromProc) {
            return match
        }
        return nil
    }

    /// The stream's `application.process.id`, from the node's full properties (the registry
    /// does not carry it), asked of PipeWire and waited for (at most the query's 2 s) on
    /// this loop: only when the client's own pid found no player.
    func programPID(of stream: UInt32) -> Int32? {
        let answer = Mutex<Int32?>(nil)
        let done = DispatchSemaphore(value: 0)
        let session = self.session
        Task.detached {
            let pid = await session.nodeProperties(stream)?["application.process.id"].flatMap { Int32($0) }
            answer.withLock { $0 = pid }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 }
    }

    /// Streams that went away are forgotten.
    func pruneRemovedStreams() {
        let nodes = session.policySnapshot.nodes
        for stream in governor.governed.keys.sorted() where nodes[stream] == nil {
            perform(governor.streamRemoved(stream))
        }
    }

    func perform(_ actions: [MPRISGovernor.Action]) {
        var paused: [String] = []
        for a in actions {
            switch a {
            case .pause(let player):
                let ok = send(player, "Pause")
                log(ok ? "paused \(player)" : "\(player) refused Pause; its stream stays paused in the graph")
                if ok { paused.append(player) }
            case .play(let player):
                let ok = send(player, "Play")
                log(ok ? "resumed \(player)" : "\(player) refused Play")
            case .report(let governed, let released):
                session.reportMPRISPlayers(governed: governed, released: released)
                log(governed.isEmpty ? "governs no stream now"
                    : "governs " + governed.keys.sorted().map { "stream \($0) (\(governed[$0] ?? "")\(released.contains($0) ? ", released" : ""))" }
                        .joined(separator: ", "))
            }
        }
        // The status after our Pause, once this list's own report is out (a player that
        // changes its status without a signal is still heard; a signal repeating it is no news).
        for player in paused {
            if let now = playbackStatus(of: player) { perform(governor.statusChanged(player: player, now)) }
        }
        syncWatches()
    }

    func startWatch(_ player: String) {
        guard watched[player] == nil, let owner = bus.owner(of: player) else { return }
        watched[player] = owner
    }

    /// Stops listening to players nothing is governed through any more.
    func syncWatches() {
        let wanted = governor.watchedPlayers
        for player in watched.keys where !wanted.contains(player) { watched[player] = nil }
    }
}

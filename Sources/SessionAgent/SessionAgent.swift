import AudioSession
import Foundation

/// `pw-session agent`: the one per-user process that carries the user's desktop session to
/// the policy. It owns the MPRIS bridge (players paused and resumed along with the policy)
/// and the desktop switches (the screen lock and Do Not Disturb as the policy's screen lock
/// and silent mode), over one session bus connection and one system bus connection, both
/// through GDBus and reconnected when their bus restarts. Its reports go out on its own
/// PipeWire connection (`session`), which the policy trusts only as the user's own,
/// unsandboxed client.
public final class SessionAgent: @unchecked Sendable {
    public struct Options: Sendable {
        public var mpris = true
        public var screenLock = true
        public var doNotDisturb = true
        public init(mpris: Bool = true, screenLock: Bool = true, doNotDisturb: Bool = true) {
            self.mpris = mpris
            self.screenLock = screenLock
            self.doNotDisturb = doNotDisturb
        }
    }

    public let session: AudioSession
    let loop = GLibLoop()
    let sessionBus: DBusConnection
    let systemBus: DBusConnection?
    let bridge: MPRISBridge?
    let switches: DesktopSwitches?

    /// `log` gets one line per thing the agent does (on the agent's loop thread).
    public init(session: AudioSession, options: Options = Options(), log: @escaping @Sendable (String) -> Void) {
        self.session = session
        sessionBus = DBusConnection(bus: .session, loop: loop, log: log)
        systemBus = options.screenLock ? DBusConnection(bus: .system, loop: loop, log: log) : nil
        bridge = options.mpris ? MPRISBridge(session: session, bus: sessionBus, log: log) : nil
        switches = options.screenLock || options.doNotDisturb
            ? DesktopSwitches(session: session, options: .init(screenLock: options.screenLock, doNotDisturb: options.doNotDisturb),
                              sessionBus: sessionBus, systemBus: systemBus, log: log)
            : nil
    }

    deinit {
        stop()
    }

    /// Connects to the buses and runs until the task is cancelled.
    public func run() async {
        sessionBus.start()
        systemBus?.start()
        if let bridge {
            await bridge.run()
        } else {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        }
        stop()
    }

    /// Disconnects from the buses and ends the loop.
    public func stop() {
        sessionBus.stop()
        systemBus?.stop()
        loop.stop()
    }
}

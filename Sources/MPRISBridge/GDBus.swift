import Foundation

/// The session bus, reached through the `gdbus` tool (GLib's, Debian package
/// `libglib2.0-bin`): one short `gdbus call` per method call, and one long-running
/// `gdbus monitor` per watched player whose output is read line by line.
///
/// Why a tool and not a library: each call opens a fresh connection to the address in
/// `DBUS_SESSION_BUS_ADDRESS`, so a restarted session bus needs no reconnection logic;
/// a monitor whose bus went away exits and is reported as the player being gone.
public final class GDBus: @unchecked Sendable {
    public static let playerPrefix = "org.mpris.MediaPlayer2."
    static let objectPath = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"

    let executable: String
    /// Seconds a call may take before gdbus gives up.
    let timeout: Int

    public init(executable: String = "gdbus", timeout: Int = 3) {
        self.executable = executable
        self.timeout = timeout
    }

    /// The MPRIS players on the bus (`org.freedesktop.DBus.ListNames`).
    public func players() -> [String] {
        guard let out = call(dest: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", method: "org.freedesktop.DBus.ListNames") else { return [] }
        return Self.quoted(out).filter { $0.hasPrefix(Self.playerPrefix) }.sorted()
    }

    /// The process that owns `name` (`org.freedesktop.DBus.GetConnectionUnixProcessID`).
    public func processID(of name: String) -> Int32? {
        guard let out = call(dest: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                             method: "org.freedesktop.DBus.GetConnectionUnixProcessID", args: [name]) else { return nil }
        return Self.uint32(out).flatMap { Int32(exactly: $0) }
    }

    /// The player's `PlaybackStatus` property.
    public func playbackStatus(of name: String) -> MPRISGovernor.PlaybackStatus? {
        guard let out = call(dest: name, path: Self.objectPath, method: "org.freedesktop.DBus.Properties.Get",
                             args: [Self.playerInterface, "PlaybackStatus"]) else { return nil }
        return Self.quoted(out).compactMap(MPRISGovernor.PlaybackStatus.init(rawValue:)).first
    }

    /// `org.mpris.MediaPlayer2.Player.Pause` or `.Play`.
    @discardableResult
    public func player(_ name: String, _ method: String) -> Bool {
        call(dest: name, path: Self.objectPath, method: "\(Self.playerInterface).\(method)") != nil
    }

    /// Runs `gdbus call`; its standard output, or nil when it failed.
    func call(dest: String, path: String, method: String, args: [String] = []) -> String? {
        guard let p = Spawned.start([executable, "call", "--session", "--timeout", String(timeout), "--dest", dest,
                                     "--object-path", path, "--method", method] + args) else { return nil }
        let data = p.output.readDataToEndOfFile()
        guard p.wait() == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Every single-quoted string in gdbus's GVariant text, e.g. `(['a', 'b'],)`.
    static func quoted(_ text: String) -> [String] {
        var out: [String] = []
        var current: String?
        var escaped = false
        for ch in text {
            if var c = current {
                if escaped { c.append(ch); escaped = false; current = c; continue }
                if ch == "\\" { escaped = true; continue }
                if ch == "'" { out.append(c); current = nil; continue }
                c.append(ch)
                current = c
            } else if ch == "'" {
                current = ""
            }
        }
        return out
    }

    /// The number in `(uint32 1234,)`.
    static func uint32(_ text: String) -> UInt32? {
        guard let r = text.range(of: "uint32 ") else { return nil }
        return UInt32(text[r.upperBound...].prefix { $0.isNumber })
    }

    /// What one line of `gdbus monitor` output says about the player.
    public enum MonitorLine: Equatable, Sendable {
        case status(MPRISGovernor.PlaybackStatus)
        case ownerGone
        case other
    }

    public static func parseMonitorLine(_ line: String) -> MonitorLine {
        if line.contains("does not have an owner") { return .ownerGone }
        guard line.contains("PropertiesChanged"), let r = line.range(of: "'PlaybackStatus': <'") else { return .other }
        let value = line[r.upperBound...].prefix { $0 != "'" }
        return MPRISGovernor.PlaybackStatus(rawValue: String(value)).map(MonitorLine.status) ?? .other
    }

    /// A running `gdbus monitor` on one player.
    public final class Watch: @unchecked Sendable {
        let process: Spawned
        private let lock = NSLock()
        private var ended = false
        init(process: Spawned) { self.process = process }
        func markEnded() { lock.lock(); ended = true; lock.unlock() }
        var isRunning: Bool { lock.lock(); defer { lock.unlock() }; return !ended }
        public func stop() { if isRunning { process.terminate() } }
    }

    /// Starts `gdbus monitor` on the player's object; `onLine` gets each parsed line and
    /// `onExit` runs once when the monitor ends (the bus went away, or `stop()`), both on
    /// a background thread.
    public func watch(_ name: String, onLine: @escaping @Sendable (MonitorLine) -> Void,
                      onExit: @escaping @Sendable () -> Void) -> Watch? {
        guard let p = Spawned.start([executable, "monitor", "--session", "--dest", name, "--object-path", Self.objectPath])
        else { return nil }
        let watch = Watch(process: p)
        // gdbus prints its first line once it has subscribed: wait for it (bounded), so
        // a signal that follows this call is not missed.
        let listening = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var first = true
            var buffer = Data()
            while true {
                let chunk = p.output.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let nl = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...nl)
                    if first {
                        first = false
                        listening.signal()
                    }
                    onLine(Self.parseMonitorLine(line))
                }
            }
            if first { listening.signal() }
            _ = p.wait()
            watch.markEnded()
            onExit()
        }
        _ = listening.wait(timeout: .now() + .seconds(timeout))
        return watch
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Which MPRIS player a stream's process belongs to (docs/mpris.md, "Which player owns a
/// stream"). A browser or an Electron program plays from a child process (Chromium's audio
/// service) while its MPRIS name belongs to the main process: the player is the one owned by
/// the stream's process or, failing that, by its nearest ancestor that owns one.
public enum PlayerOwner {
    /// How far up the process tree a player is looked for.
    public static let maximumAncestors = 16

    /// The player owned by `pid` or by its nearest ancestor (`parent` gives a process's
    /// parent); nil when none owns one. The tree is walked below pid 1 only: init and the
    /// processes above a user's session own no program's player.
    public static func player(of pid: Int32, owners: [(name: String, pid: Int32)], parent: (Int32) -> Int32?) -> String? {
        var current = pid
        for _ in 0...maximumAncestors {
            guard current > 1 else { return nil }
            if let match = owners.filter({ $0.pid == current }).map(\.name).min() { return match }
            guard let next = parent(current), next != current else { return nil }
            current = next
        }
        return nil
    }

    /// The parent of a process, from `/proc/<pid>/stat` (the field after the command name,
    /// which is in parentheses and may itself hold spaces and parentheses).
    public static func parentFromProc(_ pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parentField(ofStat: stat)
    }

    /// The parent pid of one `/proc/<pid>/stat` line.
    public static func parentField(ofStat stat: String) -> Int32? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // state, then ppid.
        guard fields.count >= 2 else { return nil }
        return Int32(fields[1])
    }
}

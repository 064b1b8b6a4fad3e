import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

/// Helpers of the client and CLI integration tests: `pw-session` verbs run
/// inside a sandbox, their JSON lines read back with deadlines.
enum Client {
    /// A sandbox with the module loaded.
    static func sandbox(module: Bool = true) throws -> Sandbox {
        try Sandbox.start(SandboxOptions(loadModule: module))
    }

    /// Starts `pw-session ARGS` in the sandbox; its stdout and stderr go to one log.
    static func spawn(_ sandbox: Sandbox, _ args: [String]) throws -> ChildProcess {
        try sandbox.spawn([try Support.pwSessionPath()] + args)
    }

    /// Runs `pw-session ARGS` in the sandbox to completion.
    static func run(_ sandbox: Sandbox, _ args: [String], timeout: TimeInterval = 60) throws -> (status: Int32, stdout: String, stderr: String) {
        try sandbox.run([try Support.pwSessionPath()] + args, timeout: timeout)
    }

    static func log(_ p: ChildProcess) -> String {
        p.stdoutPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
    }

    /// The JSON objects a `--json` verb printed so far (other lines are skipped).
    static func objects(_ p: ChildProcess) -> [[String: Any]] {
        log(p).split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// Waits until the verb printed `count` objects matching `match`; returns them.
    @discardableResult
    static func waitFor(_ p: ChildProcess, _ what: String, count: Int = 1, timeout: TimeInterval = 30,
                        _ match: @escaping ([String: Any]) -> Bool) throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        do {
            try Sandbox.waitUntil(timeout: timeout, what) {
                found = objects(p).filter(match)
                if found.count < count, let status = p.exitStatus {
                    throw TestFailure("\(p.name) exited (\(status)) before \(what):\n\(log(p))")
                }
                return found.count >= count
            }
        } catch let e as SandboxError {
            throw TestFailure("\(e): log:\n\(log(p))")
        }
        return found
    }

    static func event(_ name: String, _ fields: [String: String] = [:]) -> ([String: Any]) -> Bool {
        { o in
            guard o["event"] as? String == name else { return false }
            for (k, v) in fields where "\(o[k] ?? "nil")" != v { return false }
            return true
        }
    }

    /// `pw-session status --json`.
    static func status(_ sandbox: Sandbox) throws -> [String: Any] {
        let r = try run(sandbox, ["status", "--json"])
        guard r.status == 0, let o = (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) as? [String: Any] else {
            throw TestFailure("status --json failed (\(r.status)): \(r.stdout) \(r.stderr)")
        }
        return o
    }

    /// The status entry of the session whose application is `application`.
    static func session(_ sandbox: Sandbox, application: String) throws -> [String: Any]? {
        let sessions = try status(sandbox)["sessions"] as? [[String: Any]] ?? []
        return sessions.first { $0["application"] as? String == application }
    }

    /// Starts `pw-session play FILE --json ARGS` and waits until the policy sees it playing.
    static func startPlayer(_ sandbox: Sandbox, file: String, _ args: [String] = []) throws -> ChildProcess {
        let p = try spawn(sandbox, ["play", file, "--json"] + args)
        try waitFor(p, "the player to play", event("playing"))
        try sandbox.waitUntil(timeout: 30, "the player's session to be playing") {
            try session(sandbox, application: "pw-session play")?["playing"] as? Bool == true
        }
        return p
    }

    static func int(_ o: [String: Any], _ key: String) -> Int? { (o[key] as? NSNumber)?.intValue }
}

/// The AudioSession library used in this process against a sandbox: its PipeWire
/// variables are set for the duration of `body` (the library reads them when it
/// connects) and restored afterwards: the suites that use it are serialized.
func withLibrary<T>(in sandbox: Sandbox, _ body: () async throws -> T) async rethrows -> T {
    let keys = ["PIPEWIRE_RUNTIME_DIR", "XDG_RUNTIME_DIR", "PIPEWIRE_REMOTE"]
    let saved = keys.map { k in (k, getenv(k).map { String(cString: $0) }) }
    defer {
        for (k, v) in saved {
            if let v { setenv(k, v, 1) } else { unsetenv(k) }
        }
    }
    for k in keys {
        if let v = sandbox.environment[k] { setenv(k, v, 1) } else { unsetenv(k) }
    }
    return try await body()
}

extension Sandbox {
    /// The ids of the PipeWire clients whose `application.name` is `name`.
    func clients(application name: String) throws -> [Int] {
        Sandbox.objects(try dump(), type: "PipeWire:Interface:Client").compactMap { c in
            Sandbox.props(c)["application.name"] as? String == name ? c["id"] as? Int : nil
        }
    }
}

/// A FIFO that a test writes `pw-session play --commands` lines to (the player's standard input).
final class CommandPipe {
    let path: String
    private let fd: Int32

    init(in dir: String) throws {
        path = dir + "/commands-\(UInt32.random(in: 0...UInt32.max))"
        guard mkfifo(path, 0o600) == 0 else { throw TestFailure("mkfifo \(path): \(String(cString: strerror(errno)))") }
        // Read-write: the open does not wait for the reader, and the reader never sees end of file.
        fd = open(path, O_RDWR)
        guard fd >= 0 else { throw TestFailure("open \(path): \(String(cString: strerror(errno)))") }
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    deinit { close(fd) }
}

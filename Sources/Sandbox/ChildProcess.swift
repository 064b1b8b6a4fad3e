#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A child process started by the sandbox with `posix_spawn`: its PID is known,
/// it is reaped here (never by anybody else), and it can be signalled, waited for
/// with a deadline, and terminated.
public final class ChildProcess: @unchecked Sendable {
    /// The process id.
    public let pid: pid_t
    /// A short name for messages ("pipewire", "pw-play").
    public let name: String
    /// The argument vector the process was started with.
    public let arguments: [String]
    /// Where its standard output goes (a file), if it was redirected.
    public let stdoutPath: String?
    /// Where its standard error goes (a file), if it was redirected.
    public let stderrPath: String?

    private let lock = NSLock()
    private var _status: Int32?

    init(pid: pid_t, name: String, arguments: [String], stdoutPath: String?, stderrPath: String?) {
        self.pid = pid
        self.name = name
        self.arguments = arguments
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    /// The exit status once the process has been reaped: the exit code, or
    /// 128 + the signal number when it was killed by a signal.
    public var exitStatus: Int32? {
        lock.lock(); defer { lock.unlock() }
        return _status
    }

    /// Reaps the child if it has exited, without blocking. True while it runs.
    public var isRunning: Bool {
        reap() == nil
    }

    /// Sends a signal to the process (only while it has not been reaped, so a
    /// recycled PID is never hit).
    public func signal(_ sig: Int32) {
        lock.lock(); defer { lock.unlock() }
        if _status == nil { _ = kill(pid, sig) }
    }

    /// SIGINT (pw-record finalises its WAV header on it).
    public func interrupt() { signal(SIGINT) }

    /// Waits for the process to exit and returns its status.
    @discardableResult
    public func wait() -> Int32 {
        // Polls (never blocks in waitpid while holding the lock, so `signal` from
        // another thread, e.g. a signal handler forwarding SIGTERM, is never held up).
        while true {
            if let s = wait(timeout: 3600) { return s }
        }
    }

    /// Waits at most `timeout` seconds; nil when the process still runs.
    @discardableResult
    public func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        var interval: useconds_t = 1_000
        while true {
            if let s = reap() { return s }
            if Date() >= deadline { return nil }
            usleep(interval)
            interval = min(interval * 2, 20_000)
        }
    }

    /// SIGTERM (or `signal`), then SIGKILL after `timeout` seconds; reaps it.
    @discardableResult
    public func terminate(signal sig: Int32 = SIGTERM, timeout: TimeInterval = 5) -> Int32 {
        if let s = reap() { return s }
        signal(sig)
        if let s = wait(timeout: timeout) { return s }
        signal(SIGKILL)
        return wait()
    }

    /// The last `lines` lines of its standard error (and output) log.
    public func logTail(lines: Int = 20) -> String {
        var parts: [String] = []
        for path in [stderrPath, stdoutPath].compactMap({ $0 }).uniqued() {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty {
                let tail = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines)
                parts.append(tail.joined(separator: "\n"))
            }
        }
        return parts.joined(separator: "\n")
    }

    private func reap() -> Int32? {
        lock.lock(); defer { lock.unlock() }
        if let s = _status { return s }
        var raw: Int32 = 0
        let r = waitpid(pid, &raw, WNOHANG)
        if r == pid {
            let s = ChildProcess.decode(raw)
            _status = s
            return s
        }
        if r < 0 && errno == ECHILD {
            // Not our child any more (should not happen): treat as gone.
            _status = -1
            return -1
        }
        return nil
    }

    /// A `waitpid` status as an exit status: the program's own, or 128 + the signal
    /// that ended it (as a shell reports it).
    public static func decode(_ raw: Int32) -> Int32 {
        let sig = raw & 0x7f
        if sig == 0 { return (raw >> 8) & 0xff }
        return 128 + sig
    }

    /// Starts `argv` with `environment`. Output goes to files (or is inherited when
    /// nil). `newProcessGroup` puts the child in a process group of its own, so a
    /// terminal's ^C reaches only the sandbox owner, which then tears down in order.
    /// Signal dispositions are reset to their defaults and the mask is cleared in
    /// the child, whatever the parent ignores.
    public static func spawn(
        _ argv: [String],
        name: String? = nil,
        environment: [String: String],
        stdin stdinPath: String? = "/dev/null",
        stdout stdoutPath: String?,
        stderr stderrPath: String?,
        newProcessGroup: Bool = false
    ) throws -> ChildProcess {
        let pid = try spawnProcess(
            argv, environment: environment,
            stdin: stdinPath.map(Redirect.file) ?? .inherit,
            stdout: stdoutPath.map(Redirect.file) ?? .inherit,
            stderr: stderrPath.map { $0 == stdoutPath ? Redirect.stdout : .file($0) } ?? .inherit,
            newProcessGroup: newProcessGroup)
        return ChildProcess(pid: pid, name: name ?? (argv[0] as NSString).lastPathComponent,
                            arguments: argv, stdoutPath: stdoutPath, stderrPath: stderrPath)
    }

    /// Where a child's standard input, output or error goes.
    public enum Redirect: Sendable {
        /// The parent's own.
        case inherit
        /// A file opened in the child: read-only for standard input; created and
        /// appended to for output.
        case file(String)
        /// A descriptor of the parent, duplicated onto the stream. Make it close-on-exec
        /// in the parent (`FD_CLOEXEC`), so that no other child inherits it.
        case descriptor(Int32)
        /// Standard error only: wherever standard output goes.
        case stdout
    }

    /// The one place a child process is started (the sandbox's daemons and clients,
    /// pw-session's helpers, the tests' processes): `posix_spawn` with every signal's
    /// disposition reset to its default and an empty signal mask, whatever the starting
    /// thread blocks or ignores (Dispatch's threads block SIGTERM, so a child started
    /// from one could otherwise not be stopped). `argv[0]` is looked up in the PATH of
    /// `environment`; nil `environment` passes on this process's environment as it is
    /// now. Returns the child's PID; the caller reaps it.
    public static func spawnProcess(
        _ argv: [String],
        environment: [String: String]? = nil,
        stdin: Redirect = .file("/dev/null"),
        stdout: Redirect,
        stderr: Redirect,
        newProcessGroup: Bool = false
    ) throws -> pid_t {
        guard let program = argv.first else { throw SandboxError.spawnFailed(program: "", reason: "empty command") }
        let path = environment.map { $0["PATH"] } ?? getenv("PATH").map { String(cString: $0) }
        guard let resolved = resolveExecutable(program, path: path) else {
            throw SandboxError.spawnFailed(program: program, reason: "not found in PATH")
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let output = O_WRONLY | O_CREAT | O_APPEND
        for (fd, redirect) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch redirect {
            case .inherit: break
            case .file(let p): posix_spawn_file_actions_addopen(&actions, fd, p, fd == 0 ? O_RDONLY : output, 0o644)
            case .descriptor(let d): posix_spawn_file_actions_adddup2(&actions, d, fd)
            case .stdout: posix_spawn_file_actions_adddup2(&actions, 1, fd)
            }
        }

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setsigmask(&attr, &none)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attr, 0)
        }
        posix_spawnattr_setflags(&attr, Int16(flags))

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { env in env.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            cArgs.forEach { free($0) }
            cEnv?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc: Int32
        if let cEnv {
            rc = posix_spawn(&pid, resolved, &actions, &attr, cArgs, cEnv)
        } else {
            rc = posix_spawn(&pid, resolved, &actions, &attr, cArgs, environ)
        }
        if rc != 0 {
            throw SandboxError.spawnFailed(program: program, reason: String(cString: strerror(rc)))
        }
        return pid
    }

    static func resolveExecutable(_ program: String, path: String?) -> String? {
        if program.contains("/") {
            return access(program, X_OK) == 0 ? program : nil
        }
        let dirs = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for dir in dirs where !dir.isEmpty {
            let candidate = "\(dir)/\(program)"
            var st = stat()
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}

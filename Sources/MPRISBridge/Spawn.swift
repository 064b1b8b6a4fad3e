import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process with its standard output on a pipe, started with default signal
/// dispositions and an empty signal mask. Foundation's `Process` passes on the mask of
/// the thread that starts it, and Dispatch's threads block SIGTERM: a `gdbus monitor`
/// started that way could not be stopped, nor end itself when its bus goes away (GLib
/// raises SIGTERM on a closed connection).
final class Spawned: @unchecked Sendable {
    let pid: pid_t
    /// The read end of the child's standard output.
    let output: FileHandle

    private init(pid: pid_t, output: FileHandle) {
        self.pid = pid
        self.output = output
    }

    /// Starts `argv` (looked up in PATH); standard input and error are /dev/null.
    static func start(_ argv: [String]) -> Spawned? {
        guard !argv.isEmpty else { return nil }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        // Other children must not inherit the pipe (its reader would never see EOF).
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, &attr, cArgs, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            return nil
        }
        return Spawned(pid: pid, output: FileHandle(fileDescriptor: fds[0], closeOnDealloc: true))
    }

    /// Waits for the child; its exit status, or nil when a signal ended it.
    func wait() -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        // WIFEXITED / WEXITSTATUS (macros Swift does not import).
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil
    }

    func terminate() { kill(pid, SIGTERM) }
}

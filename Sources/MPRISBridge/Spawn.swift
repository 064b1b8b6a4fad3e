import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

/// A child process with its standard output on a pipe, started (by the one spawn helper,
/// `ChildProcess.spawnProcess`) with default signal dispositions and an empty signal
/// mask. Foundation's `Process` passes on the mask of the thread that starts it, and
/// Dispatch's threads block SIGTERM: a `gdbus monitor` started that way could not be
/// stopped, nor end itself when its bus goes away (GLib raises SIGTERM on a closed
/// connection).
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
        let pid = try? ChildProcess.spawnProcess(argv, stdout: .descriptor(fds[1]), stderr: .file("/dev/null"))
        close(fds[1])
        guard let pid else {
            close(fds[0])
            return nil
        }
        return Spawned(pid: pid, output: FileHandle(fileDescriptor: fds[0], closeOnDealloc: true))
    }

    /// Waits for the child; its exit status (128 + the signal when one ended it), or nil
    /// when it could not be waited for.
    func wait() -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        return ChildProcess.decode(status)
    }

    func terminate() { kill(pid, SIGTERM) }
}

import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every integration suite runs serialized under this parent: each starts daemons.
@Suite(.serialized)
struct Integration {}

/// Shared helpers of the integration tests.
enum Support {
    /// The checkout root, from this file's path.
    static let checkoutRoot: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }()

    /// The built `pw-session` executable: `PW_SESSION` if set, else next to the test
    /// bundle (same build products directory), else the usual scratch paths of the checkout.
    static func pwSessionPath() throws -> String {
        let fm = FileManager.default
        if let p = ProcessInfo.processInfo.environment["PW_SESSION"], fm.isExecutableFile(atPath: p) { return p }
        return try builtExecutable("pw-session", hint: "build it or set PW_SESSION")
    }

    /// A product of this package built with the tests: next to the test bundle (same build
    /// products directory), else in the usual scratch paths of the checkout.
    static func builtExecutable(_ name: String, hint: String = "build it") throws -> String {
        let fm = FileManager.default
        var dirs: [String] = []
        if let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            dirs.append((exe as NSString).deletingLastPathComponent)
        }
        if let arg0 = CommandLine.arguments.first {
            dirs.append((URL(fileURLWithPath: arg0).resolvingSymlinksInPath().path as NSString).deletingLastPathComponent)
        }
        dirs.append(Bundle.main.bundleURL.deletingLastPathComponent().path)
        dirs.append(Bundle.main.bundlePath)
        for scratch in [".build-sandbox", ".build"] {
            dirs.append(checkoutRoot + "/\(scratch)/debug")
            dirs.append(checkoutRoot + "/\(scratch)/release")
        }
        for dir in dirs {
            let p = dir + "/" + name
            if fm.isExecutableFile(atPath: p) { return p }
        }
        throw TestFailure("\(name) executable not found (looked in \(dirs.joined(separator: ", "))); \(hint)")
    }

    /// A fresh temporary directory for one test; remove it with `removeTemp`.
    static func makeTemp(_ label: String = "it") throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/pw-session-\(label).XXXXXX").utf8CString)
        guard let dir = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            throw TestFailure("mkdtemp failed")
        }
        return dir
    }

    static func removeTemp(_ dir: String) { try? FileManager.default.removeItem(atPath: dir) }

    /// Generates a sine tone with sox.
    static func makeTone(in dir: String, seconds: Double = 2, name: String = "tone.wav") throws -> String {
        let path = dir + "/" + name
        let r = try runOutside(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", String(seconds), "sine", "440", "vol", "0.5"], in: dir)
        guard r.status == 0 else { throw TestFailure("sox failed: \(r.stderr)") }
        return path
    }

    /// True when no process with `pid` exists (kill(pid, 0) fails with ESRCH).
    /// The first child of `pid` (a player that plays from a child process), from /proc.
    static func firstChild(of pid: Int32) -> Int32? {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.flatMap { Int32($0) }
    }

    static func processGone(_ pid: Int32) -> Bool {
        kill(pid, 0) == -1 && errno == ESRCH
    }

    /// Spawns a program outside any sandbox (pw-session itself), with output in files under `dir`.
    static func spawnOutside(_ argv: [String], environment: [String: String]? = nil, in dir: String) throws -> Outside {
        let n = UInt32.random(in: 0...UInt32.max)
        let out = dir + "/out-\(n).txt", err = dir + "/err-\(n).txt"
        let env = environment ?? ProcessInfo.processInfo.environment
        let pid: pid_t
        do {
            pid = try ChildProcess.spawnProcess(argv, environment: env, stdout: .file(out), stderr: .file(err))
        } catch {
            throw TestFailure("cannot start \(argv[0]): \(error)")
        }
        return Outside(pid: pid, stdoutPath: out, stderrPath: err)
    }

    /// Runs a program outside any sandbox to completion (with a generous deadline).
    static func runOutside(_ argv: [String], environment: [String: String]? = nil, in dir: String,
                           timeout: TimeInterval = 120) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = try spawnOutside(argv, environment: environment, in: dir)
        guard let status = p.wait(timeout: timeout) else {
            // SIGTERM first: pw-session and audio-session-bench then stop the daemons they
            // started, which SIGKILL would leave running.
            p.kill(SIGTERM)
            if p.wait(timeout: 15) == nil { p.kill(SIGKILL); _ = p.wait(timeout: 10) }
            throw TestFailure("\(argv.joined(separator: " ")) did not finish within \(Int(timeout)) s")
        }
        return (status, p.stdout, p.stderr)
    }
}

/// A process started by a test outside the sandbox.
final class Outside {
    let pid: pid_t
    let stdoutPath: String
    let stderrPath: String
    private(set) var status: Int32?

    init(pid: pid_t, stdoutPath: String, stderrPath: String) {
        self.pid = pid
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func kill(_ sig: Int32) { if status == nil { _ = Glibc.kill(pid, sig) } }

    /// Polls waitpid until the process exits or the deadline passes.
    func wait(timeout: TimeInterval) -> Int32? {
        if let status { return status }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid {
                status = ChildProcess.decode(raw)
                return status
            }
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    /// Kills and reaps (teardown of a failed test).
    func ensureGone() {
        guard status == nil else { return }
        kill(SIGTERM)
        if wait(timeout: 15) == nil { kill(SIGKILL); _ = wait(timeout: 5) }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Lists the files below `dir` (relative paths).
func filesBelow(_ dir: String) -> [String] {
    (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String]) ?? []
}

/// Polls `condition` every 10 ms until it holds; throws after `timeout` seconds.
func waitUntil(_ what: String, timeout: TimeInterval = 20, _ condition: () throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !(try condition()) {
        if Date() >= deadline { throw TestFailure("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

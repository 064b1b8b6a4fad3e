import Foundation
import Testing

/// `scripts/swiftpm.sh`, which every build step runs SwiftPM through: a command that does
/// not exit by the deadline is stopped and run once more; any other outcome is the
/// command's own.
@Suite struct SwiftPMDeadlineTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/swiftpm.sh").path

    /// Runs the script over `command` (a shell script) with a 1 s deadline.
    static func run(_ command: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("swiftpm-deadline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.script)
        p.arguments = ["/bin/sh", "-c", command, "fake-swift"]
        p.currentDirectoryURL = dir
        p.environment = ["SWIFTPM_DEADLINE_SECONDS": "1", "PATH": "/usr/bin:/bin"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    /// The first run hangs (as SwiftPM did after a build), the second one answers.
    @Test func aCommandThatDoesNotExitIsRunOnceMore() throws {
        let r = try Self.run("n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; [ $n -eq 1 ] && exec sleep 60; echo attempt $n")
        #expect(r.status == 0)
        #expect(r.stdout == "attempt 2\n")
        #expect(r.stderr.contains("did not exit within 1 s (attempt 1 of 2)"))
    }

    /// A command that fails is not run again, and its status is the script's.
    @Test func aFailureIsTheCommandsOwn() throws {
        let r = try Self.run("n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; echo run $n; exit 3")
        #expect(r.status == 3)
        #expect(r.stdout == "run 1\n")
        #expect(r.stderr.isEmpty)
    }

    /// One that never exits is given up after the second deadline.
    @Test func aCommandThatNeverExitsFailsAfterTwoDeadlines() throws {
        let r = try Self.run("exec sleep 60")
        #expect(r.status == 124)
        #expect(r.stderr.contains("attempt 2 of 2"))
    }
}

import Foundation
import Testing

extension Integration {
    /// `audio-session-bench`'s command line: a mistyped section or system, or a count that
    /// measures nothing, is an error before any daemon starts, and a run in which no system
    /// could be measured does not exit 0.
    @Suite struct BenchCommandLineTests {
        static func bench(_ arguments: [String], in dir: String) throws -> (status: Int32, stdout: String, stderr: String) {
            // Each run here ends within a second; a bench that measured instead would be stopped.
            try Support.runOutside([try Support.builtExecutable("audio-session-bench")] + arguments + ["--out", dir + "/out"], in: dir,
                                   timeout: 30)
        }

        @Test(arguments: [
            (["--only", "chrun"], "no section named 'chrun'"),
            (["--only", ","], "--only names no section"),
            (["--systems", "module,basline"], "no system named 'basline'"),
            (["--hl-trials", "0"], "--hl-trials must be at least 1"),
            (["--churn-rate", "nan"], "--churn-rate must be a number above 0"),
            (["--hl-settle=-1"], "--hl-settle must be a number of seconds"),
        ])
        func aMistakeOnTheCommandLineIsNamedAndNothingRuns(_ arguments: [String], _ message: String) throws {
            let tmp = try Support.makeTemp("bench-usage")
            defer { Support.removeTemp(tmp) }
            let r = try Self.bench(arguments, in: tmp)
            #expect(r.status == 64, "stderr: \(r.stderr)")
            #expect(r.stderr.contains(message), "stderr: \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: tmp + "/out/results.json"))
        }

        @Test func aRunThatCouldMeasureNoSystemExitsWithOneAndSaysWhy() throws {
            let tmp = try Support.makeTemp("bench-none")
            defer { Support.removeTemp(tmp) }
            // No PipeWire 1.6 root given: the system cannot start.
            let r = try Self.bench(["--quick", "--only", "idle", "--systems", "module-pw1.6"], in: tmp)
            #expect(r.status == 1, "stderr: \(r.stderr)")
            #expect(r.stderr.contains("module-pw1.6 was not measured: no PipeWire 1.6 root"), "stderr: \(r.stderr)")
            let data = try Data(contentsOf: URL(fileURLWithPath: tmp + "/out/results.json"))
            let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            let systems = json?["systems"] as? [[String: Any]] ?? []
            #expect(systems.count == 1)
            #expect((systems.first?["sandboxError"] as? String)?.contains("--pw16-prefix") == true)
        }
    }
}

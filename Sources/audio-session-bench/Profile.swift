import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon's time goes: `perf record` on the sandbox's pipewire process while
/// a workload runs (the pause/resume toggles, the activation-request flood, the churn),
/// summarised by `perf report` (self time, by shared object and by symbol).
struct ProfileResult: Codable {
    struct Entry: Codable {
        var percent: Double
        var object: String
        var symbol: String
    }

    struct Workload: Codable {
        var name: String
        var samples: Int?
        /// Share of the samples per shared object (the kernel as `[kernel]`), largest first.
        var objects: [Entry] = []
        /// The symbols with the largest self time, in any object.
        var top: [Entry] = []
        /// The module's own symbols with the largest self time.
        var module: [Entry] = []
        var error: String?
    }

    var workloads: [Workload] = []
    var error: String?
}

enum Profile {
    static let moduleObject = "libpipewire-module-audio-session.so"

    /// Profiles the daemon of `sandbox` while each workload runs.
    static func run(_ sandbox: Sandbox, propFlood: String, toggleEvents: Int, toggleRate: Double,
                    floodUpdates: Int, churnSeconds: Double, churnRate: Double, churnLive: Int, probe: String) -> ProfileResult {
        var r = ProfileResult()
        guard !shell(["sh", "-c", "command -v perf"]).isEmpty else {
            r.error = "perf is not installed (Debian: linux-perf)"
            return r
        }
        guard let pid = sandbox.pipewirePID else {
            r.error = "no pipewire pid"
            return r
        }
        r.workloads.append(profiled(sandbox, pid: pid, name: "pause/resume") {
            _ = DaemonCost.cpu(sandbox, events: toggleEvents, rate: toggleRate, rounds: 1)
        })
        r.workloads.append(profiled(sandbox, pid: pid, name: "activation-request updates") {
            _ = DaemonCost.propertyFlood(sandbox, fixture: propFlood, mode: "activation", updates: floodUpdates, rounds: 1)
        })
        r.workloads.append(profiled(sandbox, pid: pid, name: "churn") {
            _ = DaemonCost.churn(sandbox, seconds: churnSeconds, rate: churnRate, live: churnLive, probe: probe)
        })
        return r
    }

    /// `perf record` (self time only: no call graphs, little overhead) on `pid` while `body` runs.
    static func profiled(_ sandbox: Sandbox, pid: Int32, name: String, _ body: () -> Void) -> ProfileResult.Workload {
        var w = ProfileResult.Workload(name: name)
        let data = sandbox.directory + "/tmp/perf-\(name.filter(\.isLetter)).data"
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        recorder.arguments = ["perf", "record", "-q", "-F", "1999", "-p", String(pid), "-o", data]
        recorder.standardOutput = FileHandle.nullDevice
        recorder.standardError = FileHandle.nullDevice
        do { try recorder.run() } catch {
            w.error = "perf record: \(error)"
            return w
        }
        usleep(300_000)
        body()
        kill(recorder.processIdentifier, SIGINT)
        recorder.waitUntilExit()
        defer { unlink(data) }
        let report = shell(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso,sym",
                            "--percent-limit", "0.3", "-q"], timeout: 120)
        let entries = parse(report)
        guard !entries.isEmpty else {
            w.error = "perf report gave no samples"
            return w
        }
        // By object, with sample counts (`-n`): "  76.87%  12345  object".
        let byObject = shell(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "dso", "-n", "-q"], timeout: 120)
        var samples = 0
        for line in byObject.split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 3, let pct = Double(parts[0].dropLast()), let n = Int(parts[1]) else { continue }
            samples += n
            if w.objects.count < 8 { w.objects.append(ProfileResult.Entry(percent: pct, object: String(parts[2]), symbol: "")) }
        }
        w.samples = samples
        let demangled = demangle(entries.map(\.symbol))
        let named = zip(entries, demangled).map { ProfileResult.Entry(percent: $0.percent, object: $0.object, symbol: $1) }
        w.top = Array(named.prefix(12))
        w.module = Array(named.filter { $0.object == moduleObject }.prefix(10))
        return w
    }

    /// `perf report -q --sort dso,sym` lines: "  12.34%  object  [.] symbol".
    static func parse(_ report: String) -> [ProfileResult.Entry] {
        report.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
            guard parts.count == 4, parts[0].hasSuffix("%"), let pct = Double(parts[0].dropLast()) else { return nil }
            return ProfileResult.Entry(percent: pct, object: String(parts[1]), symbol: String(parts[3]).trimmingCharacters(in: .whitespaces))
        }
    }

    /// Swift symbols readable (`swift demangle --simplified`); others as they are.
    static func demangle(_ symbols: [String]) -> [String] {
        guard !symbols.isEmpty else { return [] }
        let out = shell(["swift", "demangle", "--simplified", "--compact"] + symbols, timeout: 60)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard out.count >= symbols.count else { return symbols }
        return out.prefix(symbols.count).enumerated().map { i, s in
            var line = s.isEmpty ? symbols[i] : s
            // perf marks some C symbols of a Swift binary with a leading "$".
            if line.hasPrefix("$") && !line.hasPrefix("$s") { line.removeFirst() }
            return line.count > 140 ? String(line.prefix(137)) + "…" : line
        }
    }
}

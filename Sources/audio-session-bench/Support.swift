import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

// MARK: Progress

let benchStart = Date()

/// A progress line on standard error, with the time since the bench started.
func progress(_ s: String) {
    let t = Date().timeIntervalSince(benchStart)
    FileHandle.standardError.write(Data(String(format: "[%6.1fs] %@\n", t, s).utf8))
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

func describe(_ error: Error) -> String {
    let s = String(describing: error)
    // Keep one line and a bounded length in the results.
    let line = s.split(separator: "\n").prefix(8).joined(separator: " | ")
    return String(line.prefix(800))
}

// MARK: Statistics

/// Summary of a sample: median and spread (p10, p90, IQR), min, max, p99.
struct Stats: Codable {
    var n: Int
    var median: Double?
    var p10: Double?
    var p25: Double?
    var p75: Double?
    var p90: Double?
    var p99: Double?
    var min: Double?
    var max: Double?
    var mean: Double?

    init(_ values: [Double]) {
        let v = values.filter(\.isFinite).sorted()
        n = v.count
        guard !v.isEmpty else { return }
        median = percentile(v, 50)
        p10 = percentile(v, 10)
        p25 = percentile(v, 25)
        p75 = percentile(v, 75)
        p90 = percentile(v, 90)
        p99 = percentile(v, 99)
        min = v.first
        max = v.last
        mean = v.reduce(0, +) / Double(v.count)
    }
    init(_ values: [Int]) { self.init(values.map(Double.init)) }
}

/// Linear-interpolated percentile of sorted values.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    if sorted.count == 1 { return sorted[0] }
    let pos = p / 100 * Double(sorted.count - 1)
    let lo = Int(pos.rounded(.down)), hi = Swift.min(lo + 1, sorted.count - 1)
    let f = pos - Double(lo)
    return sorted[lo] * (1 - f) + sorted[hi] * f
}

func dB(_ gain: Double) -> Double { 20 * log10(gain) }

// MARK: /proc

enum Proc {
    static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// Fields of /proc/<pid>/status that are given in kB ("VmRSS", "RssAnon", …), read at once.
    static func statusKiB(_ pid: Int32, _ fields: Set<String>) -> [String: Int] {
        guard let s = read("/proc/\(pid)/status") else { return [:] }
        var out: [String: Int] = [:]
        for line in s.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            guard fields.contains(name) else { continue }
            let rest = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
            if let v = rest.first.flatMap({ Int($0) }) { out[name] = v }
        }
        return out
    }

    /// VmRSS of a process in KiB.
    static func rssKiB(_ pid: Int32) -> Int? { statusKiB(pid, ["VmRSS"])["VmRSS"] }

    /// `RssAnon` + `RssFile`: the resident memory without `RssShmem`, the streams' shared
    /// (memfd) buffers, whose resident pages vary from run to run.
    static func rssNoShmemKiB(_ pid: Int32) -> Int? {
        let f = statusKiB(pid, ["RssAnon", "RssFile"])
        guard let anon = f["RssAnon"], let file = f["RssFile"] else { return nil }
        return anon + file
    }

    static func threads(_ pid: Int32) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    }

    /// CPU time of every thread of a process, in nanoseconds (schedstat: time on CPU).
    static func cpuNanoseconds(_ pid: Int32) -> Double? {
        var total = 0.0
        var any = false
        for t in threads(pid) {
            if let s = read("/proc/\(pid)/task/\(t)/schedstat"),
               let first = s.split(separator: " ").first, let v = Double(first) {
                total += v
                any = true
            }
        }
        return any ? total : nil
    }

    /// The fields of /proc/<pid>/stat after the command's name: state(0), ppid(1), ...
    static func statFields(_ pid: Int32) -> [Substring]? {
        guard let s = read("/proc/\(pid)/stat"), let close = s.lastIndex(of: ")") else { return nil }
        return s[s.index(after: close)...].split(separator: " ")
    }

    /// utime + stime in clock ticks (/proc/<pid>/stat), for cross-checking schedstat.
    static func cpuTicks(_ pid: Int32) -> Int? {
        // utime is field 14 overall -> index 11 here, stime 12.
        guard let fields = statFields(pid), fields.count > 12, let u = Int(fields[11]), let st = Int(fields[12]) else { return nil }
        return u + st
    }

    /// Context switches of every thread (voluntary, non-voluntary), summed.
    static func contextSwitches(_ pid: Int32) -> (voluntary: Int, involuntary: Int, threads: Int)? {
        var v = 0, nv = 0, n = 0
        for t in threads(pid) {
            guard let s = read("/proc/\(pid)/task/\(t)/status") else { continue }
            n += 1
            for line in s.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") {
                    v += Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
                } else if line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    nv += Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
                }
            }
        }
        return n > 0 ? (v, nv, n) : nil
    }

    static func loadAverage() -> [Double] {
        (read("/proc/loadavg") ?? "").split(separator: " ").prefix(3).compactMap { Double($0) }
    }
}

// MARK: Graph (pw-dump)

extension Graph {
    static func playbackStreams(_ dump: [[String: Any]]) -> [[String: Any]] {
        Sandbox.objects(dump, type: "PipeWire:Interface:Node")
            .filter { Sandbox.props($0)["media.class"] as? String == "Stream/Output/Audio" }
    }

    static func streamCount(_ dump: [[String: Any]]) -> Int { playbackStreams(dump).count }
}

/// Where a stream's audio goes: the nodes it is linked to, with a loopback (a sink that
/// shares its `node.link-group` with a stream, as WirePlumber 0.5's role loopbacks do)
/// replaced by where that stream goes, up to four loopbacks deep.
func reachedNodes(_ d: [[String: Any]], from node: Int, activeOnly: Bool) -> Set<Int> {
    let nodes = Sandbox.objects(d, type: "PipeWire:Interface:Node")
    func group(_ id: Int) -> String? {
        nodes.first { $0["id"] as? Int == id }.flatMap { Sandbox.props($0)["node.link-group"] as? String }
    }
    func relay(of sink: Int) -> Int? {
        guard let g = group(sink) else { return nil }
        return nodes.first {
            $0["id"] as? Int != sink && Sandbox.props($0)["node.link-group"] as? String == g &&
                Sandbox.props($0)["media.class"] as? String == "Stream/Output/Audio"
        }?["id"] as? Int
    }
    let links = Graph.links(d)
    var out: Set<Int> = []
    var frontier = [node]
    for _ in 0..<5 {
        var next: [Int] = []
        for n in frontier {
            for l in links where l.output == n && (!activeOnly || l.state == "active") {
                if let r = relay(of: l.input) { next.append(r) } else { out.insert(l.input) }
            }
        }
        if next.isEmpty { break }
        frontier = next
    }
    return out
}

extension Sandbox {
    /// Starts `argv` and waits until its playback stream runs and is linked (active) to `sink`,
    /// directly or through a loopback.
    /// `streamOwner` names the process that owns the stream (default: the player itself; a
    /// program that plays from a child gives that child).
    func startPlayer(_ argv: [String], environment: [String: String] = [:], on sink: String,
                     timeout: TimeInterval = 10,
                     streamOwner: @escaping (ChildProcess) -> Int32? = { $0.pid }) throws -> (process: ChildProcess, node: Int, props: [String: Any]) {
        let p = try spawn(argv, environment: environment)
        var node: Int?
        var props: [String: Any] = [:]
        do {
            try waitUntil(timeout: timeout, poll: 0.01, "\(argv[0]) playing on \(sink)") {
                guard p.isRunning else { throw BenchFailure("\(argv[0]) exited: \(p.logTail(lines: 3))") }
                let d = try dump()
                guard let owner = streamOwner(p), let n = Graph.streamNode(d, pid: owner), let id = n["id"] as? Int,
                      Sandbox.state(n) == "running", let sinkID = Graph.nodeID(d, named: sink) else { return false }
                node = id
                props = Sandbox.props(n)
                // Reaching `sink` and nothing else (WirePlumber may link a new stream elsewhere first).
                return reachedNodes(d, from: id, activeOnly: true) == [sinkID] &&
                    reachedNodes(d, from: id, activeOnly: false) == [sinkID]
            }
        } catch {
            p.terminate(signal: SIGKILL, timeout: 2)
            throw error
        }
        return (p, node ?? -1, props)
    }

    /// A tone file (s16 stereo 48 kHz) made with sox in the sandbox's temporary directory.
    func tone(seconds: Double, frequency: Double, name: String, amplitude: Double = 0.5) throws -> String {
        let path = directory + "/tmp/" + name
        let r = try run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", String(seconds),
                         "sine", String(frequency), "vol", String(amplitude)], timeout: 60)
        guard r.status == 0 else { throw BenchFailure("sox: \(r.stderr)") }
        return path
    }

    var pipewirePID: Int32? {
        daemonProcesses.first { $0.name == "pipewire" }?.pid
    }

    /// WirePlumber's PID.
    var sessionManagerPID: Int32? {
        daemonProcesses.first { $0.name == "wireplumber" }?.pid
    }

    /// Every daemon still runs.
    var daemonsAlive: Bool { daemonProcesses.allSatisfy(\.isRunning) }
}

// MARK: Recordings

/// A continuous recording of a sink's monitor (pw-record, s16 stereo 48 kHz) read by byte marks.
final class Tape {
    let recorder: Recorder
    init(_ sandbox: Sandbox, sink: String) throws {
        recorder = try Recorder(sandbox: sandbox, sink: sink)
    }

    var path: String { recorder.path }

    /// Bytes written so far.
    var mark: Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }

    /// Offset of the first sample (after the WAV header).
    lazy var dataStart: Int = {
        guard let h = FileHandle(forReadingAtPath: path) else { return 44 }
        defer { try? h.close() }
        let head = [UInt8](h.readData(ofLength: 4096))
        var i = 12
        while i + 8 <= head.count {
            let tag = String(decoding: head[i..<i + 4], as: UTF8.self)
            let size = Int(head[i + 4]) | Int(head[i + 5]) << 8 | Int(head[i + 6]) << 16 | Int(head[i + 7]) << 24
            if tag == "data" { return i + 8 }
            i += 8 + size + (size & 1)
        }
        return 44
    }()

    /// Waits until `seconds` more audio than now has been written.
    func waitForMore(seconds: Double, timeout: TimeInterval = 10) throws {
        let start = mark
        let needed = Int(seconds * 48_000 * 4)
        try Sandbox.waitUntil(timeout: timeout, poll: 0.01, "\(seconds) s more recording on \(recorder.sinkName)") {
            guard recorder.process.isRunning else { throw BenchFailure("pw-record on \(recorder.sinkName) exited") }
            return mark - start >= needed
        }
    }

    /// Frame index of a byte mark.
    func frame(ofMark m: Int) -> Int { max(0, (m - dataStart) / 4) }

    /// Interleaved s16 stereo samples (normalised) of frames `from..<to`.
    func samples(fromFrame a: Int, toFrame b: Int) -> [Float] {
        guard b > a, let h = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? h.close() }
        do { try h.seek(toOffset: UInt64(dataStart + a * 4)) } catch { return [] }
        let data = h.readData(ofLength: (b - a) * 4)
        var out = [Float](repeating: 0, count: data.count / 2)
        data.withUnsafeBytes { raw in
            let p = raw.bindMemory(to: Int16.self)
            for i in 0..<out.count { out[i] = Float(Int16(littleEndian: p[i])) / 32768 }
        }
        return out
    }

    func stop() { recorder.process.terminate(signal: SIGINT, timeout: 5) }
}

/// Mono (L+R)/2 of interleaved stereo.
func mono(_ s: [Float]) -> [Float] {
    var m = [Float](repeating: 0, count: s.count / 2)
    for i in 0..<m.count { m[i] = (s[2 * i] + s[2 * i + 1]) / 2 }
    return m
}

/// Amplitude (0…1, a full-scale sine = 1) of the component at `frequency` in `x[start..<start+n]`
/// (Goertzel). Exact for tones with a whole number of cycles in `n`.
func toneAmplitude(_ x: [Float], start: Int, n: Int, frequency: Double, rate: Double = 48_000) -> Double {
    let w = 2 * Double.pi * frequency / rate
    let c = 2 * cos(w)
    var s1 = 0.0, s2 = 0.0
    let end = min(x.count, start + n)
    guard start < end else { return 0 }
    for i in start..<end {
        let s0 = Double(x[i]) + c * s1 - s2
        s2 = s1
        s1 = s0
    }
    let power = s1 * s1 + s2 * s2 - c * s1 * s2
    return 2 * max(power, 0).squareRoot() / Double(end - start)
}

/// Level in dB of an amplitude, with a floor.
func level(_ a: Double, floor: Double = -100) -> Double { a > 0 ? max(floor, 20 * log10(a)) : floor }

/// RMS level (dBFS, floor -100) of interleaved samples per block of `frames` frames.
func rmsLevels(_ s: [Float], frames: Int) -> [Double] {
    let n = frames * 2
    var out: [Double] = []
    var i = 0
    while i + n <= s.count {
        var sum = 0.0
        for j in i..<i + n { sum += Double(s[j]) * Double(s[j]) }
        out.append(level((sum / Double(n)).squareRoot()))
        i += n
    }
    return out
}

// MARK: Machine

struct Machine: Codable {
    var cpuModel: String
    var nproc: Int
    var arch: String
    var kernel: String
    var memTotalMiB: Int
    var pipewire: String
    var wireplumber: String
    var swift: String
    var date: String
    var gitCommit: String
    var gitDirty: Bool
    var loadAverageStart: [Double]
    var loadAverageEnd: [Double] = []
    var command: String

    static func collect(command: String) -> Machine {
        let cpuinfo = Proc.read("/proc/cpuinfo") ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
        var u = utsname()
        uname(&u)
        func field<T>(_ t: T) -> String {
            withUnsafeBytes(of: t) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let mem = (Proc.read("/proc/meminfo") ?? "").split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        let date = ISO8601DateFormatter().string(from: Date())
        let commit = shell(["git", "rev-parse", "--short", "HEAD"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let dirty = !shell(["git", "status", "--porcelain", "--untracked-files=no"]).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        return Machine(
            cpuModel: model, nproc: ProcessInfo.processInfo.activeProcessorCount, arch: field(u.machine),
            kernel: field(u.release), memTotalMiB: mem / 1024,
            pipewire: firstLine(shell(["pipewire", "--version"]), containing: "libpipewire"),
            wireplumber: firstLine(shell(["wireplumber", "--version"]), containing: "libwireplumber"),
            swift: firstLine(shell(["swift", "--version"]), containing: "Swift version"),
            date: date, gitCommit: commit, gitDirty: dirty, loadAverageStart: Proc.loadAverage(), command: command)
    }

    static func firstLine(_ s: String, containing key: String) -> String {
        s.split(separator: "\n").first { $0.contains(key) }.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
    }
}

/// Runs a short command outside the sandbox; its standard output ("" on failure).
func shell(_ argv: [String], timeout: TimeInterval = 20) -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = argv
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = FileHandle.nullDevice
    do { try p.run() } catch { return "" }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

/// The path of this executable (helpers are this program run inside a sandbox).
func selfPath() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// The lines a helper process wrote (its log file holds stdout and stderr).
func helperOutput(_ p: ChildProcess) -> String {
    p.stdoutPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
}

/// The JSON object a helper printed on its `RESULT ` line.
func helperResult(_ p: ChildProcess) -> [String: Any]? {
    for line in helperOutput(p).split(separator: "\n") where line.hasPrefix("RESULT ") {
        if let d = line.dropFirst(7).data(using: .utf8), let o = try? JSONSerialization.jsonObject(with: d) as? [String: Any] {
            return o
        }
    }
    return nil
}

/// The first line a helper wrote that is `word` alone or starts with `word` and a space.
func helperLine(_ p: ChildProcess, _ word: String) -> Substring? {
    helperOutput(p).split(separator: "\n").first { $0 == word || $0.hasPrefix(word + " ") }
}

/// Waits until a helper writes its `word` line; a helper that exits without it is a failure.
func waitForHelperLine(_ sandbox: Sandbox, _ h: ChildProcess, _ word: String, timeout: TimeInterval,
                       poll: TimeInterval = 0.05, _ what: String) throws {
    try sandbox.waitUntil(timeout: timeout, poll: poll, what) {
        if helperLine(h, word) != nil { return true }
        // Its output is complete once it has gone (a file's output is flushed at exit): read
        // once more, or a line flushed between the read above and this check would count as
        // never written.
        if h.isRunning { return false }
        if helperLine(h, word) != nil { return true }
        throw BenchFailure("the helper exited before \(what): \(h.logTail(lines: 5))")
    }
}

/// The daemon's cost over one measured phase of a helper.
struct PhaseCost {
    var cpuMs: Double
    var ticks: Int?
    /// The daemon's context switches (all its threads, voluntary and not) over the phase.
    var wakeups: Int?
    /// The session manager's CPU over the phase (ms), when asked for.
    var sessionManagerCpuMs: Double?
}

/// One measured phase of a helper that writes `READY` once set up, begins when `startFile`
/// appears, and writes `done` when finished: the daemon's CPU time from the start to `done`,
/// `settle` seconds after `READY` and `after` seconds past `done` (for what the daemon deferred).
/// A helper that runs several phases (the toggles' bursts) names each one's end (`DONE 3`).
func measurePhase(_ sandbox: Sandbox, _ h: ChildProcess, daemon pid: Int32, startFile: String, what: String,
                  readyTimeout: TimeInterval, settle: TimeInterval = 0, doneTimeout: TimeInterval,
                  after: TimeInterval = 0, done: String = "DONE", sessionManager: Int32? = nil) throws -> PhaseCost {
    try waitForHelperLine(sandbox, h, "READY", timeout: readyTimeout, "\(what) to be set up")
    CPUPinning.repin()
    if settle > 0 { usleep(useconds_t(settle * 1_000_000)) }
    guard let c0 = Proc.cpuNanoseconds(pid) else { throw BenchFailure("cannot read /proc/\(pid)") }
    let t0 = Proc.cpuTicks(pid)
    let w0 = Proc.contextSwitches(pid)
    let m0 = sessionManager.flatMap(Proc.cpuNanoseconds)
    guard FileManager.default.createFile(atPath: startFile, contents: nil) else { throw BenchFailure("cannot make \(startFile)") }
    try waitForHelperLine(sandbox, h, done, timeout: doneTimeout, poll: 0.02, what)
    if after > 0 { usleep(useconds_t(after * 1_000_000)) }
    guard let c1 = Proc.cpuNanoseconds(pid) else { throw BenchFailure("cannot read /proc/\(pid)") }
    let t1 = Proc.cpuTicks(pid)
    let w1 = Proc.contextSwitches(pid)
    let m1 = sessionManager.flatMap(Proc.cpuNanoseconds)
    // Threads that came or went during the phase make the difference meaningless.
    let wakeups = w0.flatMap { a in w1.flatMap { b in a.threads == b.threads ? b.voluntary + b.involuntary - a.voluntary - a.involuntary : nil } }
    return PhaseCost(cpuMs: (c1 - c0) / 1e6, ticks: t0.flatMap { a in t1.map { $0 - a } }, wakeups: wakeups,
                     sessionManagerCpuMs: m0.flatMap { a in m1.map { ($0 - a) / 1e6 } })
}

/// The sections that measure the daemon's CPU per event (pause/resume, the churn's rounds,
/// the property floods) run every process of theirs on one CPU: the daemons, their session
/// manager and PulseAudio server, and the clients. On a virtual machine a wake-up that crosses
/// CPUs costs the kernel an interrupt between them, and which process lands on which CPU
/// changes from one daemon to the next: the kernel's share of the daemon's CPU then varied up
/// to fivefold between two daemons of the same system doing the same work (self time in
/// `_raw_spin_unlock_irq`, where the kernel re-enables interrupts), far more than the module
/// adds. On one CPU every wake-up stays local, for both systems alike.
enum CPUPinning {
    /// The CPU the cost sections run on, while they run.
    private static let pinned = Box<Int?>(nil)

    /// The CPU `onOneCPU` runs everything on: this thread's last allowed one; nil when it
    /// may run on one CPU only (nothing to choose).
    static func target() -> Int? {
        let all = allowed()
        return all.count > 1 ? all.last : nil
    }

    /// glibc's `sched_getaffinity` and `sched_setaffinity` (declared only under _GNU_SOURCE,
    /// which the Swift overlay does not see): looked up in the C library.
    private typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
    private static func call(_ name: String) -> AffinityCall? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: AffinityCall.self) }
    }
    private static let getAffinity = call("sched_getaffinity")
    private static let setAffinity = call("sched_setaffinity")
    private static func sched_getaffinity(_ pid: pid_t, _ size: Int, _ set: inout cpu_set_t) -> Int32 {
        guard let f = getAffinity else { return -1 }
        return withUnsafeMutableBytes(of: &set) { b in b.baseAddress.map { f(pid, size, $0) } ?? -1 }
    }
    private static func sched_setaffinity(_ pid: pid_t, _ size: Int, _ set: inout cpu_set_t) -> Int32 {
        guard let f = setAffinity else { return -1 }
        return withUnsafeMutableBytes(of: &set) { b in b.baseAddress.map { f(pid, size, $0) } ?? -1 }
    }

    /// The CPUs this thread may run on.
    static func allowed() -> [Int] {
        var set = cpu_set_t()
        guard sched_getaffinity(0, MemoryLayout<cpu_set_t>.size, &set) == 0 else { return [] }
        return withUnsafeBytes(of: &set) { bytes in
            (0..<(bytes.count * 8)).filter { bytes[$0 / 8] & (1 << UInt8($0 % 8)) != 0 }
        }
    }

    private static func mask(_ cpus: [Int]) -> cpu_set_t {
        var set = cpu_set_t()
        withUnsafeMutableBytes(of: &set) { bytes in
            for c in cpus where c >= 0 && c / 8 < bytes.count { bytes[c / 8] |= 1 << UInt8(c % 8) }
        }
        return set
    }

    /// Sets the CPUs of every thread of `pid` (0: the calling thread only).
    @discardableResult
    private static func apply(_ cpus: [Int], to pid: Int32) -> Bool {
        var set = mask(cpus)
        if pid == 0 { return sched_setaffinity(0, MemoryLayout<cpu_set_t>.size, &set) == 0 }
        var ok = true
        for t in Proc.threads(pid) {
            guard let tid = Int32(t) else { continue }
            if sched_setaffinity(tid, MemoryLayout<cpu_set_t>.size, &set) != 0 { ok = false }
        }
        return ok
    }

    /// This process's descendants (children, theirs, ...), from /proc.
    static func descendants() -> [Int32] {
        var found = family(of: [getpid()])
        found.remove(getpid())
        return Array(found)
    }

    /// The processes in `roots` and their descendants, from /proc.
    static func family(of roots: Set<Int32>) -> Set<Int32> {
        var parent: [Int32: Int32] = [:]
        for e in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(e), let fields = Proc.statFields(pid), fields.count > 1, let pp = Int32(fields[1]) else { continue }
            parent[pid] = pp
        }
        var found = roots
        var grew = true
        while grew {
            grew = false
            for (pid, pp) in parent where !found.contains(pid) && found.contains(pp) {
                found.insert(pid)
                grew = true
            }
        }
        return found
    }

    /// Runs `body` with this thread, and every process it starts meanwhile (which inherit its
    /// CPUs), on this thread's last allowed CPU; the processes already running are moved there
    /// now and again by `repin()` before each measured phase. Everything gets all of this
    /// thread's CPUs back afterwards.
    static func onOneCPU<T>(_ body: () -> T) -> T {
        let all = allowed()
        guard let cpu = target() else { return body() }
        pinned.update { $0 = cpu }
        everyAllowed.update { $0 = all }
        apply([cpu], to: 0)
        repin()
        defer {
            pinned.update { $0 = nil }
            everyAllowed.update { $0 = nil }
            apply(all, to: 0)
            for p in descendants() { apply(all, to: p) }
        }
        return body()
    }

    /// The CPUs this thread could use before `onOneCPU` took all but one (nil outside it).
    private static let everyAllowed = Box<[Int]?>(nil)

    /// The two CPUs the churn's side-by-side rounds run on: another one, then the one
    /// `onOneCPU` runs everything else on; nil with fewer than two.
    static func sideBySide() -> [Int]? {
        let all = everyAllowed.get ?? allowed()
        guard all.count > 1, let own = all.last, let other = all.last(where: { $0 != own }) else { return nil }
        return [other, own]
    }

    /// Every thread of each process in `pids`, and of its descendants, on `cpu` alone.
    static func pin(_ pids: [Int32], to cpu: Int) {
        for p in family(of: Set(pids)) { apply([cpu], to: p) }
    }

    /// While `onOneCPU` runs: every descendant's threads on its CPU (those started from other
    /// threads of the bench, or before it began, included).
    static func repin() {
        guard let cpu = pinned.get else { return }
        for p in descendants() { apply([cpu], to: p) }
    }
}

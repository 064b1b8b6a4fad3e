import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

// Helpers of the policy integration tests: the `audio-session` metadata and
// recording windows; finding things in pw-dump is `Graph` in the Sandbox library.

extension Graph {
    /// The Props param object (first one) of a node in pw-dump, e.g. `channelVolumes`, `softVolumes`.
    static func props(param node: [String: Any]) -> [String: Any]? {
        (((node["info"] as? [String: Any])?["params"] as? [String: Any])?["Props"] as? [[String: Any]])?.first
    }
}

/// One entry of `pw-metadata -n audio-session`.
struct MetadataEntry {
    var subject: Int
    var key: String
    var value: String
    /// The value parsed as a JSON object (nil when it is not one).
    var json: [String: Any]? {
        value.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    /// Parses pw-metadata's lines: `update: id:56 key:'audio-session.session' value:'{…}' type:'Spa:String:JSON'`.
    static func parse(_ text: String) -> [MetadataEntry] {
        text.split(separator: "\n").compactMap { line in
            guard let idR = line.range(of: "id:"), let keyR = line.range(of: " key:'"),
                  let valR = line.range(of: "' value:'"), let typeR = line.range(of: "' type:'", options: .backwards),
                  valR.upperBound <= typeR.lowerBound,
                  let subject = Int(line[idR.upperBound..<keyR.lowerBound]) else { return nil }
            return MetadataEntry(subject: subject, key: String(line[keyR.upperBound..<valR.lowerBound]),
                                 value: String(line[valR.upperBound..<typeR.lowerBound]))
        }
    }
}

extension Sandbox {
    /// The current keys of the `audio-session` metadata.
    func sessionMetadata() throws -> [MetadataEntry] {
        let r = try run(["pw-metadata", "-n", "audio-session"], timeout: 10)
        return MetadataEntry.parse(r.stdout)
    }

    /// The policy's published global state (`audio-session.global`).
    func globalState() throws -> [String: Any]? {
        try sessionMetadata().first { $0.subject == 0 && $0.key == "audio-session.global" }?.json
    }

    /// The outputs of the policy's global `currentRoute` (`audio-session.global`), as JSON objects.
    func globalOutputs() throws -> [[String: Any]] {
        ((try globalState()?["currentRoute"] as? [String: Any])?["outputs"] as? [[String: Any]]) ?? []
    }

    /// The published state of the session of stream `node` (legacy: subject = node id) or client.
    func sessionState(subject: Int) throws -> [String: Any]? {
        try sessionMetadata().first { $0.subject == subject && $0.key == "audio-session.session" }?.json
    }

    /// The published state of the session that owns stream `node` (legacy or declared).
    func sessionState(ofStream node: Int) throws -> [String: Any]? {
        try sessionMetadata().filter { $0.key == "audio-session.session" }.compactMap(\.json).first {
            ($0["streams"] as? [Any])?.contains { Graph.int($0) == node } == true
        }
    }

    /// Waits until WirePlumber has linked the orphaned stream `node` to the speaker (after its
    /// private output went): the worst case a loss test measures.
    func waitForOrphanOnTheSpeaker(_ node: Int, timeout: TimeInterval = 15) throws {
        try waitUntil(timeout: timeout, "the orphaned stream to be linked to the speaker") {
            let d = try dump()
            guard let speaker = Graph.nodeID(d, named: "speaker") else { return false }
            return Graph.links(d).contains { $0.output == node && $0.input == speaker }
        }
    }

    /// Starts `argv` and waits until its playback stream runs and is linked (active) to `sink`; returns its node id.
    /// `streamOwner` names the process whose stream it is (the program's own, or a child it plays from).
    func startPlayer(_ argv: [String], environment: [String: String] = [:], on sink: String,
                     timeout: TimeInterval = 15,
                     streamOwner: (ChildProcess) -> Int32? = { $0.pid }) throws -> (process: ChildProcess, node: Int) {
        let p = try spawn(argv, environment: environment)
        var node: Int?
        do {
            try waitUntil(timeout: timeout, "\(argv[0]) playing on \(sink)") {
                guard p.isRunning else { throw TestFailure("\(argv[0]) exited: \(p.logTail())") }
                let d = try dump()
                guard let owner = streamOwner(p), let n = Graph.streamNode(d, pid: owner), let id = n["id"] as? Int,
                      Sandbox.state(n) == "running", let sinkID = Graph.nodeID(d, named: sink) else { return false }
                node = id
                return Graph.links(d).contains { $0.output == id && $0.input == sinkID && $0.state == "active" }
            }
        } catch {
            p.terminate(signal: SIGKILL, timeout: 2)
            throw error
        }
        return (p, node ?? -1)
    }

    /// Waits until `file` (a growing recording) holds `seconds` more of s16 stereo 48 kHz audio than now.
    func waitForMoreRecording(_ recorder: Recorder, seconds: Double, timeout: TimeInterval = 15) throws {
        let start = Self.fileSize(recorder.path)
        let needed = Int(seconds * 48_000 * 4)
        try waitUntil(timeout: timeout, "\(seconds) s more of recording on \(recorder.sinkName)") {
            Self.fileSize(recorder.path) - start >= needed
        }
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }
}

extension Recorder {
    /// Bytes recorded so far (header included); a mark for `levels(since:)`.
    var mark: Int { Sandbox.fileSize(path) }

    /// Non-zero samples written between two marks, read from the file while it is being
    /// recorded (16-bit samples after the 44-byte header).
    func nonZeroSamples(from a: Int, to b: Int) -> Int {
        guard let h = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? h.close() }
        let start = max(44, a) & ~1
        guard b > start else { return 0 }
        try? h.seek(toOffset: UInt64(start))
        guard let data = try? h.read(upToCount: b - start) else { return 0 }
        var count = 0
        data.withUnsafeBytes { raw in
            var i = 0
            while i + 1 < raw.count {
                if raw[i] != 0 || raw[i + 1] != 0 { count += 1 }
                i += 2
            }
        }
        return count
    }
}

/// Block levels of a recording, with the helpers the duck tests need.
struct Levels {
    let blocks: [Double]
    /// Per block, the phase (radians) of the recorded tone against the recording's own
    /// clock, or nil for a block too quiet to tell (or when no tone was given). A tone
    /// recorded without a gap keeps one phase from block to block; a gap (a cycle the
    /// loaded machine's recorder missed, or a player's late cycle, which delays the rest
    /// of its tone) shifts it.
    let phases: [Double?]
    /// Blocks with a dropout inside them: a run of digital silence within the tone.
    let partial: Set<Int>
    /// Whether the levels were read with a tone's phases (`init(_:tone:)`).
    let readsPhases: Bool

    init(blocks: [Double]) {
        self.blocks = blocks
        phases = Array(repeating: nil, count: blocks.count)
        partial = []
        readsPhases = false
    }

    /// The levels of `wav` in blocks of 1024 frames, with the phase of a sine of
    /// `frequency` Hz in its first channel and the blocks a dropout cuts into.
    init(_ wav: WAVFile, tone frequency: Double) {
        let blockSize = 1024
        blocks = wav.blockLevels(blockSize: blockSize)
        let c = wav.channels
        let omega = 2 * Double.pi * frequency / Double(max(wav.sampleRate, 1))
        var phases: [Double?] = []
        var partial = Set<Int>()
        for (k, level) in blocks.enumerated() {
            let start = k * blockSize
            let end = min(start + blockSize, wav.frameCount)
            var i = 0.0, q = 0.0, zeros = 0, longestZeros = 0
            for n in start..<end {
                let x = Double(wav.samples[n * c])
                i += x * cos(omega * Double(n))
                q += x * sin(omega * Double(n))
                zeros = x == 0 ? zeros + 1 : 0
                longestZeros = max(longestZeros, zeros)
            }
            // x = A sin(ωn + φ): Σ x cos(ωn) ≈ A N/2 sin φ, Σ x sin(ωn) ≈ A N/2 cos φ.
            phases.append(level.isFinite && level > -70 && c > 0 ? atan2(i, q) : nil)
            // A sine at audible level never holds exact zero for 32 samples running.
            if level.isFinite && longestZeros >= 32 { partial.insert(k) }
        }
        self.phases = phases
        self.partial = partial
        readsPhases = true
    }

    /// Whether blocks `a` and `b` hold one unbroken stretch of the recorded tone: both
    /// have a phase and the two agree (within 0.35 rad, well above the estimate's own
    /// error of a few hundredths). Levels read without a tone take every pair as unbroken.
    func unbroken(_ a: Int, _ b: Int) -> Bool {
        guard phases.indices.contains(a), phases.indices.contains(b) else { return false }
        if !readsPhases { return true }
        guard let pa = phases[a], let pb = phases[b] else { return false }
        let d = remainder(pb - pa, 2 * Double.pi)
        return abs(d) <= 0.35
    }

    /// Median of `blocks[range]` (finite values only).
    func median(_ range: Range<Int>) -> Double {
        let r = range.clamped(to: 0..<blocks.count)
        let v = blocks[r].filter(\.isFinite).sorted()
        return v.isEmpty ? -.infinity : v[v.count / 2]
    }

    /// The level changes between consecutive sounding blocks in `range`: the largest,
    /// how many pairs were compared, and how many were left out because the recording
    /// is broken between them (`unbroken`): the loaded machine's recorder missed a cycle,
    /// or the player was late, and the two blocks were not heard one cycle apart.
    /// A block of digital silence, or one a dropout cuts into, is a dropout, not a gain
    /// step: it is skipped, wherever it falls in `range`. (A cycle the loaded machine's
    /// player or recorder missed is silence in the recording; at a 2048-frame quantum
    /// that is two blocks, and it can fall on the first or last block of `range`.) A
    /// stream that stops or goes quiet for longer shows in the levels before, during
    /// and after, which the callers check; a range with no sounding block has no steps.
    func steps(_ range: Range<Int>) -> (largest: Double, compared: Int, broken: Int) {
        let r = range.clamped(to: 0..<blocks.count)
        guard r.count > 1 else { return (0, 0, 0) }
        let sounding = r.filter { blocks[$0].isFinite }
        let whole = sounding.filter { !partial.contains($0) }
        var m = 0.0, compared = 0, broken = 0
        for (a, b) in zip(whole, whole.dropFirst()) {
            guard unbroken(a, b) else { broken += 1; continue }
            compared += 1
            m = max(m, abs(blocks[a] - blocks[b]))
        }
        return (m, compared, broken)
    }

    /// The indices of the blocks of digital silence (dropouts) in `range`.
    func silentBlocks(_ range: Range<Int>) -> [Int] {
        range.clamped(to: 0..<blocks.count).filter { !blocks[$0].isFinite }
    }

    /// The longest run of consecutive blocks below `threshold`, from block `first` on.
    func longestRun(below threshold: Double, from first: Int = 0) -> Range<Int>? {
        var best: Range<Int>?
        var start: Int?
        for (i, l) in blocks.enumerated() where i >= first {
            if l < threshold { if start == nil { start = i } } else if let s = start {
                if (best?.count ?? 0) < i - s { best = s..<i }
                start = nil
            }
        }
        if let s = start, (best?.count ?? 0) < blocks.count - s { best = s..<blocks.count }
        return best
    }
}

/// dB of a linear gain.
func dB(_ gain: Double) -> Double { 20 * log10(gain) }

/// A tone file in the sandbox's temporary directory.
func tone(in sandbox: Sandbox, seconds: Double, frequency: Int = 440, name: String) throws -> String {
    let path = sandbox.directory + "/tmp/" + name
    let r = try sandbox.run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", path, "synth", String(seconds),
                             "sine", String(frequency), "vol", "0.5"], timeout: 30)
    guard r.status == 0 else { throw TestFailure("sox: \(r.stderr)") }
    return path
}

import Foundation

/// A parsed PCM WAV file (what `pw-record` and `sox` write, and what `pw-session play`
/// plays): 8-bit unsigned, 16/24/32-bit integer or 32/64-bit float, interleaved,
/// normalised to -1...1.
public struct WAVFile: Sendable {
    public enum SampleFormat: String, Sendable { case s16, s24, s32, f32, f64, u8 }

    public let sampleRate: Int
    public let channels: Int
    public let format: SampleFormat
    /// Interleaved samples, normalised to -1...1.
    public let samples: [Float]

    /// Frames (samples per channel).
    public var frameCount: Int { channels > 0 ? samples.count / channels : 0 }
    /// Seconds of audio.
    public var duration: Double { sampleRate > 0 ? Double(frameCount) / Double(sampleRate) : 0 }
    /// Samples (over all channels) that are not exactly zero.
    public var nonZeroSampleCount: Int { samples.reduce(0) { $0 + ($1 != 0 ? 1 : 0) } }
    /// The largest absolute sample value.
    public var peak: Float { samples.reduce(0) { max($0, abs($1)) } }

    /// RMS level in dBFS of every block of `blockSize` frames (all channels); silence is `-infinity`.
    public func blockLevels(blockSize: Int = 1024) -> [Double] {
        guard channels > 0, blockSize > 0 else { return [] }
        let n = blockSize * channels
        var levels: [Double] = []
        var i = 0
        while i < samples.count {
            let end = min(i + n, samples.count)
            var sum = 0.0
            for j in i..<end { sum += Double(samples[j]) * Double(samples[j]) }
            let rms = (sum / Double(end - i)).squareRoot()
            levels.append(rms > 0 ? 20 * log10(rms) : -Double.infinity)
            i = end
        }
        return levels
    }

    public init(sampleRate: Int, channels: Int, format: SampleFormat, samples: [Float]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
        self.samples = samples
    }

    public init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SandboxError.badWAV("cannot read \(path)")
        }
        do { try self.init(data: data) } catch SandboxError.badWAV(let reason) {
            throw SandboxError.badWAV("\(path): \(reason)")
        }
    }

    public init(data: Data) throws {
        let bytes = [UInt8](data)
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        func tag(_ o: Int) -> String { String(decoding: bytes[o..<o + 4], as: UTF8.self) }

        guard bytes.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else { throw SandboxError.badWAV("no RIFF/WAVE header") }
        var offset = 12
        var fmt: (code: Int, channels: Int, rate: Int, bits: Int)?
        var dataRange: Range<Int>?
        while offset + 8 <= bytes.count {
            let id = tag(offset)
            var size = u32(offset + 4)
            let body = offset + 8
            if id == "data" {
                // A writer interrupted before finalising leaves 0 or 0xFFFFFFFF: take the rest.
                let unsized = size == 0 || size == 0xFFFF_FFFF || body + size > bytes.count
                if unsized { size = bytes.count - body }
                if dataRange == nil { dataRange = body..<(body + size) }
                // The fmt chunk normally comes first; when it has not, look for it after the data.
                if unsized || fmt != nil { break }
            }
            guard body + size <= bytes.count else { break }
            if id == "fmt ", size >= 16 {
                var code = u16(body)
                if code == 0xFFFE, size >= 40 { code = u16(body + 24) } // WAVE_FORMAT_EXTENSIBLE: sub-format GUID
                fmt = (code, u16(body + 2), u32(body + 4), u16(body + 14))
            }
            offset = body + size + (size & 1)
        }
        guard let f = fmt else { throw SandboxError.badWAV("no fmt chunk") }
        guard let range = dataRange else { throw SandboxError.badWAV("no data chunk") }
        guard f.channels > 0 else { throw SandboxError.badWAV("zero channels") }

        let format: SampleFormat
        switch (f.code, f.bits) {
        case (1, 8): format = .u8
        case (1, 16): format = .s16
        case (1, 24): format = .s24
        case (1, 32): format = .s32
        case (3, 32): format = .f32
        case (3, 64): format = .f64
        default: throw SandboxError.badWAV("unsupported format code \(f.code) with \(f.bits) bits")
        }
        let width = f.bits / 8
        let count = range.count / width
        var out = [Float]()
        out.reserveCapacity(count)
        var o = range.lowerBound
        for _ in 0..<count {
            switch format {
            case .u8: out.append((Float(bytes[o]) - 128) / 128)
            case .s16: out.append(Float(Int16(bitPattern: UInt16(u16(o)))) / 32768)
            case .s24:
                let v = Int32(bitPattern: UInt32(bytes[o]) << 8 | UInt32(bytes[o + 1]) << 16 | UInt32(bytes[o + 2]) << 24) >> 8
                out.append(Float(v) / 8_388_608)
            case .s32: out.append(Float(Int32(bitPattern: UInt32(u32(o)))) / 2_147_483_648)
            case .f32: out.append(Float(bitPattern: UInt32(u32(o))))
            case .f64:
                let lo = UInt64(u32(o)), hi = UInt64(u32(o + 4))
                out.append(Float(Double(bitPattern: lo | hi << 32)))
            }
            o += width
        }
        self.init(sampleRate: f.rate, channels: f.channels, format: format, samples: out)
    }
}

/// Records what reaches a sink (its monitor) with `pw-record`.
public final class Recorder: @unchecked Sendable {
    /// The sink whose monitor is recorded.
    public let sinkName: String
    /// The WAV file being written.
    public let path: String
    /// The pw-record process.
    public let process: ChildProcess
    private let sandbox: Sandbox

    /// Starts `pw-record --target <sink> -P '{ stream.capture.sink=true }' --format s16`
    /// on the sink's monitor and waits until its stream node is running.
    public init(sandbox: Sandbox, sink sinkName: String, path: String? = nil, timeout: TimeInterval = 15) throws {
        self.sandbox = sandbox
        self.sinkName = sinkName
        self.path = path ?? sandbox.directory + "/tmp/record-\(sinkName)-\(UInt32.random(in: 0...UInt32.max)).wav"
        // Kept on that sink: WirePlumber 0.4 makes a recorder whose target is the default sink
        // follow the default (a Bluetooth headset back in A2DP, headphones plugged back in would
        // take it), and WirePlumber 0.5's role-based policy moves it onto a role loopback
        // (pw-record's default role is Music). Should the sink go, the recording ends there.
        process = try sandbox.spawn([
            "pw-record", "--target", sinkName,
            "-P", "{ stream.capture.sink=true node.name=sandbox-recorder-\(sinkName) node.dont-move=true node.dont-reconnect=true }",
            "--format", "s16", "--rate", "48000", "--channels", "2", self.path,
        ])
        let sink = Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Node")
            .first { Sandbox.props($0)["node.name"] as? String == sinkName }
        let sinkID = sink?["id"] as? Int
        do {
            try sandbox.waitUntil(timeout: timeout, poll: 0.05, "pw-record on \(sinkName) to run") {
                guard self.process.isRunning else {
                    throw SandboxError.daemonExited(name: "pw-record", status: self.process.exitStatus ?? -1,
                                                    log: self.process.logTail())
                }
                let mine = try sandbox.nodes(ofProcess: self.process.pid)
                guard mine.contains(where: { Sandbox.state($0) == "running" }) else { return false }
                // Fed by that sink, not by another one WirePlumber chose first.
                guard let sinkID else { return true }
                let ids = Set(mine.compactMap { $0["id"] as? Int })
                return Graph.links(try sandbox.dump()).contains { $0.output == sinkID && ids.contains($0.input) }
            }
        } catch {
            process.terminate(signal: SIGKILL, timeout: 2)
            throw error
        }
    }

    /// Stops the recording with SIGINT (pw-record then finalises the header) and parses the file.
    public func stop(timeout: TimeInterval = 10) throws -> WAVFile {
        process.terminate(signal: SIGINT, timeout: timeout)
        return try WAVFile(contentsOf: path)
    }
}

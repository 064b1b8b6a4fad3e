import ArgumentParser
import AudioSession
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `audio-session-bench helper NAME ...`: this program run inside a sandbox (its
/// environment reaches the sandbox's PipeWire) as an AudioSession client. Results go
/// to standard output as one `RESULT {json}` line; `READY` / `DONE` lines mark phases.
enum Helper {
    static func say(_ s: String) {
        FileHandle.standardOutput.write(Data((s + "\n").utf8))
    }

    static func result(_ o: [String: Any]) {
        if let d = try? JSONSerialization.data(withJSONObject: o), let s = String(data: d, encoding: .utf8) {
            say("RESULT " + s)
        }
    }

    /// Waits until `o` plays (linked and running), at most `limit`: whether it did. A stream
    /// in error never will.
    static func waitPlaying(_ o: AudioOutput, within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        while o.state != .streaming {
            if ContinuousClock.now >= deadline || o.state == .error { return false }
            usleep(1_000)
        }
        return true
    }

    static func waitForFile(_ path: String) {
        while !FileManager.default.fileExists(atPath: path) { usleep(2_000) }
    }

    static func nanos(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) * 1e9 + Double(c.attoseconds) / 1e9
    }

    /// A stream playing silence (legacy: no declaration, no role).
    static func silentStream(_ session: AudioSession, _ name: String, paused: Bool = false) throws -> AudioOutput {
        try AudioOutput(session: session, name: name, properties: ["node.name": name], paused: paused) { buf, channels in
            buf.update(repeating: 0)
            return buf.count / max(1, channels)
        }
    }

    /// Runs the helper `command` (parsed by `HelperOptions`) names.
    static func run(_ command: ParsableCommand) async -> Int32 {
        switch command {
        case let c as HelperOptions.Notify: await notify(trials: c.trials, policyTimeout: c.policyTimeout)
        case let c as HelperOptions.Streams: streams(count: c.count)
        case let c as HelperOptions.Toggle: toggle(events: c.events, rate: c.rate, startFile: c.startFile, bursts: c.bursts)
        case let c as HelperOptions.Churn:
            churn(seconds: c.seconds, rate: c.rate, live: c.live, startFile: c.startFile, pacedByPlaying: c.pacedByPlaying)
        default:
            // --help, or no helper named: ArgumentParser's own answer.
            var other = command
            do { try other.run() } catch { HelperOptions.exit(withError: error) }
        }
        return 0
    }

    // MARK: Notification latency

    /// Session A (playback) is active; session B (playback) activates, which interrupts A (R1),
    /// then deactivates with notifyOthersOnDeactivation, which ends A's interruption (R7).
    /// Latency: from just before B's `setActive` call (which publishes `audio.session.active`
    /// with `pw_core_update_properties`) to A's observer receiving the notification.
    static func notify(trials: Int, policyTimeout: Double) async {
        let a = AudioSession(configuration: .init(applicationName: "bench-listener"))
        let b = AudioSession(configuration: .init(applicationName: "bench-interrupter"))
        do {
            try a.setCategory(.playback)
            try b.setCategory(.playback)
        } catch {
            result(["error": "setCategory: \(error)"]); return
        }
        let okA = await a.waitForPolicy(timeout: .seconds(policyTimeout))
        let okB = await b.waitForPolicy(timeout: .seconds(policyTimeout))
        guard okA && okB else {
            result(["error": "no audio-session policy reachable within \(policyTimeout) s (AudioSession.waitForPolicy)"]); return
        }
        let log = Mutex<[(ContinuousClock.Instant, AudioSessionNotification)]>([])
        let token = a.addObserver { n in
            let now = ContinuousClock.now
            log.withLock { $0.append((now, n)) }
        }
        defer { a.removeObserver(token) }
        func waitFor(after index: Int, _ match: (AudioSessionNotification) -> Bool) async -> ContinuousClock.Instant? {
            let deadline = ContinuousClock.now + .seconds(1)
            while ContinuousClock.now < deadline {
                let hit = log.withLock { l in l.dropFirst(index).first { match($0.1) }?.0 }
                if let hit { return hit }
                try? await Task.sleep(for: .microseconds(200))
            }
            return nil
        }
        var began: [Double] = [], ended: [Double] = []
        var errors: [String] = []
        var failed = 0
        for _ in 0..<trials {
            do {
                _ = try await a.setActive(true)
                let i0 = log.withLock { $0.count }
                let t0 = ContinuousClock.now
                _ = try await b.setActive(true)
                guard let r0 = await waitFor(after: i0, { if case .interruption(.began) = $0 { true } else { false } }) else {
                    throw BenchFailure("no interruption began within 1 s")
                }
                began.append(nanos(r0 - t0) / 1e6)
                let i1 = log.withLock { $0.count }
                let t1 = ContinuousClock.now
                _ = try await b.setActive(false, options: .notifyOthersOnDeactivation)
                guard let r1 = await waitFor(after: i1, { if case .interruption(.ended) = $0 { true } else { false } }) else {
                    throw BenchFailure("no interruption ended within 1 s")
                }
                ended.append(nanos(r1 - t1) / 1e6)
            } catch {
                failed += 1
                if errors.count < 5 { errors.append("\(error)") }
                _ = try? await b.setActive(false)
            }
        }
        result(["beganMs": began, "endedMs": ended, "failed": failed, "errors": errors])
    }

    // MARK: Streams

    static func streams(count: Int) {
        let session = AudioSession(configuration: .init(applicationName: "bench-streams"))
        var outs: [AudioOutput] = []
        // In groups of 20, each once its streams have nodes. Made all at once on a freshly
        // started PipeWire 1.6, this client (PipeWire 0.3.65's library) failed to map some of
        // its peers' activations in about half the runs ("set_activation: No such file or
        // directory" in the daemon's log), with the module or without, and no stream ran.
        for i in 0..<count {
            do { outs.append(try silentStream(session, "bench-stream-\(i)")) } catch { say("stream \(i): \(error)") }
            if (i + 1) % 20 == 0 {
                let group = Date().addingTimeInterval(5)
                while Date() < group && outs.suffix(20).contains(where: { $0.nodeID == nil }) { usleep(10_000) }
            }
        }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && outs.contains(where: { $0.nodeID == nil }) { usleep(10_000) }
        say("READY \(outs.filter { $0.nodeID != nil }.count)")
        // How many streams play now (linked and started), twice a second: the bench waits on this
        // rather than on pw-dump, whose every run makes the daemon build and free a
        // description of the whole graph and grows the heap it measures.
        while true {
            say("STREAMING \(outs.count { $0.state == .streaming })")
            usleep(500_000)
        }
    }

    /// One stream paused and resumed `events` times at `rate` per second; with `bursts`, that
    /// many times, each on its own start file (`startFile.N`), the stream playing between them.
    static func toggle(events: Int, rate: Double, startFile: String, bursts: Int = 0) {
        let session = AudioSession(configuration: .init(applicationName: "bench-toggle"))
        guard let out = try? silentStream(session, "bench-toggle") else { say("cannot make a stream"); return }
        _ = waitPlaying(out, within: .seconds(10))
        say("READY")
        func burst(_ file: String) -> Double {
            if !file.isEmpty { waitForFile(file) }
            let start = ContinuousClock.now
            for i in 0..<events {
                if i % 2 == 0 { out.pause() } else { out.resume() }
                let next = start + .seconds(Double(i + 1) / rate)
                let now = ContinuousClock.now
                if next > now { usleep(useconds_t(nanos(next - now) / 1000)) }
            }
            return nanos(ContinuousClock.now - start) / 1e9
        }
        if bursts > 0 {
            var seconds: [Double] = []
            for n in 0..<bursts {
                seconds.append(burst(startFile.isEmpty ? "" : "\(startFile).\(n)"))
                say("DONE \(n)")
                // An odd count leaves the stream paused: it plays again before the next burst.
                if events % 2 == 1 { out.resume() }
            }
            result(["events": events, "bursts": bursts, "seconds": Stats(seconds).median ?? 0])
        } else {
            let seconds = burst(startFile)
            result(["events": events, "seconds": seconds])
            say("DONE")
        }
        while true { sleep(60) }
    }

    /// `live` streams at a time; one created and the oldest destroyed `rate` times per second.
    /// Paced by playing, every stream plays (its node linked by the session manager and
    /// running) before the next is made, so that each one goes through the whole of a
    /// stream's life however fast the session manager links: the daemon's work per stream
    /// event is then the same in every system, and `rate` only a ceiling.
    static func churn(seconds: Double, rate: Double, live: Int, startFile: String, pacedByPlaying: Bool = false) {
        let session = AudioSession(configuration: .init(applicationName: "bench-churn"))
        var outs: [AudioOutput] = []
        var created = 0, destroyed = 0, failed = 0, played = 0, unplayed = 0
        for i in 0..<live {
            if let o = try? silentStream(session, "churn-\(i)") { outs.append(o); created += 1 } else { failed += 1 }
        }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && outs.contains(where: { $0.nodeID == nil }) { usleep(10_000) }
        var startedPlaying = 0
        if pacedByPlaying { startedPlaying = outs.filter { waitPlaying($0, within: .seconds(30)) }.count }
        say("READY")
        if !startFile.isEmpty { waitForFile(startFile) }
        let start = ContinuousClock.now
        let total = Int(seconds * rate)
        var lateMax = 0.0
        for i in 0..<total {
            let due = start + .seconds(Double(i) / rate)
            let now = ContinuousClock.now
            if pacedByPlaying && now - start >= .seconds(seconds) { break }
            if due > now { usleep(useconds_t(nanos(due - now) / 1000)) } else if !pacedByPlaying { lateMax = max(lateMax, nanos(now - due) / 1e6) }
            if !outs.isEmpty {
                outs.removeFirst().stop()
                destroyed += 1
            }
            if let o = try? silentStream(session, "churn-\(live + i)") {
                outs.append(o)
                created += 1
                if pacedByPlaying {
                    if waitPlaying(o, within: .seconds(5)) { played += 1 } else { unplayed += 1 }
                }
            } else { failed += 1 }
            if i % Int(max(1, rate)) == 0 { say("PROGRESS \(created) \(destroyed)") }
        }
        let elapsed = nanos(ContinuousClock.now - start) / 1e9
        for o in outs { o.stop() }
        destroyed += outs.count
        outs.removeAll()
        var r: [String: Any] = ["created": created, "destroyed": destroyed, "failed": failed, "seconds": elapsed, "maxLateMs": lateMax]
        if pacedByPlaying {
            r["played"] = played
            r["unplayed"] = unplayed
            r["initialPlaying"] = startedPlaying
        }
        result(r)
        say("DONE")
        while true { sleep(60) }
    }
}

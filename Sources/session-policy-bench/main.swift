// The cost of one policy decision as the number of sessions grows.
//
// Usage: swift run -c release --scratch-path .build-policy session-policy-bench [--json]
//
// One decision = one `SessionPolicy.handle(_:)` call: a legacy Music stream starting
// (`streamRunning(true)`: arbitration, ducking, hint, publishing) and stopping again
// (`streamRunning(false)`: deactivation). Two graphs per size:
//   idle:   N sessions (N/2 declared clients with one stream each, N/2 legacy streams), 4 of them playing;
//   active: N legacy mixable streams, all playing (the R22 hint flip then reaches every one of them).
import SessionPolicy

struct Result {
    var workload: String
    var sessions: Int
    var iterations: Int
    var medianNanoseconds: Double
    var p99Nanoseconds: Double
}

func nanoseconds(_ d: Duration) -> Double {
    let c = d.components
    return Double(c.seconds) * 1e9 + Double(c.attoseconds) / 1e9
}

func buildIdle(_ n: Int) -> SessionPolicy {
    var p = SessionPolicy()
    _ = p.handle(.endpointAdded(NodeID(1), kind: .sink, ["node.name": "speaker", "device.form-factor": "internal", "device.api": "alsa"]))
    for i in 0..<n {
        let id = UInt32(100 + i)
        if i % 2 == 0 {
            _ = p.handle(.clientAdded(ClientID(id), ["audio.session.category": "playback", "application.name": "app\(i)"]))
        } else {
            _ = p.handle(.clientAdded(ClientID(id), ["application.name": "app\(i)"]))
        }
        _ = p.handle(.streamAdded(NodeID(id), client: ClientID(id), direction: .output, ["media.role": i % 3 == 0 ? "Music" : "Notification"]))
        _ = p.handle(.linkAdded(LinkID(id), output: NodeID(id), input: NodeID(1)))
    }
    // A few playing: mixable ones, so they stay active next to the measured stream.
    for i in 0..<min(4, n) {
        let id = UInt32(100_000 + i)
        _ = p.handle(.clientAdded(ClientID(id), [:]))
        _ = p.handle(.streamAdded(NodeID(id), client: ClientID(id), direction: .output, [:]))
        _ = p.handle(.streamRunning(NodeID(id), true))
    }
    return p
}

func buildActive(_ n: Int) -> SessionPolicy {
    var p = SessionPolicy()
    for i in 0..<n {
        let id = UInt32(100 + i)
        _ = p.handle(.clientAdded(ClientID(id), [:]))
        _ = p.handle(.streamAdded(NodeID(id), client: ClientID(id), direction: .output, [:]))
        _ = p.handle(.streamRunning(NodeID(id), true))
    }
    return p
}

func measure(_ workload: String, _ n: Int, _ build: (Int) -> SessionPolicy) -> Result {
    var p = build(n)
    let measured = NodeID(900_000)
    _ = p.handle(.clientAdded(ClientID(900_000), [:]))
    _ = p.handle(.streamAdded(measured, client: ClientID(900_000), direction: .output, ["media.role": "Music"]))
    let iterations = n >= 10_000 ? 1_000 : (n >= 1_000 ? 5_000 : 20_000)
    let clock = ContinuousClock()
    var samples: [Double] = []
    samples.reserveCapacity(iterations * 2)
    var sink = 0
    for i in 0..<(iterations + 100) {
        let t0 = clock.now
        sink &+= p.handle(.streamRunning(measured, true)).count
        let t1 = clock.now
        sink &+= p.handle(.streamRunning(measured, false)).count
        let t2 = clock.now
        if i >= 100 {  // warm-up
            samples.append(nanoseconds(t1 - t0))
            samples.append(nanoseconds(t2 - t1))
        }
    }
    samples.sort()
    let median = samples[samples.count / 2]
    let p99 = samples[min(samples.count - 1, samples.count * 99 / 100)]
    if sink == Int.min { print(sink) }
    return Result(workload: workload, sessions: n, iterations: samples.count, medianNanoseconds: median, p99Nanoseconds: p99)
}

let json = CommandLine.arguments.contains("--json")
var results: [Result] = []
for n in [10, 100, 1_000, 10_000] {
    results.append(measure("idle", n, buildIdle))
    results.append(measure("active", n, buildActive))
}

func fmt(_ ns: Double) -> String {
    let us = Double(Int(ns / 10 + 0.5)) / 100
    return "\(us)"
}

if json {
    let rows = results.map {
        "{\"workload\":\"\($0.workload)\",\"sessions\":\($0.sessions),\"decisions\":\($0.iterations),\"median_ns\":\(Int($0.medianNanoseconds)),\"p99_ns\":\(Int($0.p99Nanoseconds))}"
    }
    print("[" + rows.joined(separator: ",") + "]")
} else {
    print("workload  sessions  decisions  median µs  p99 µs")
    for r in results {
        let cols = [r.workload, String(r.sessions), String(r.iterations), fmt(r.medianNanoseconds), fmt(r.p99Nanoseconds)]
        let widths = [8, 8, 9, 9, 8]
        var line = ""
        for (c, w) in zip(cols, widths) { line += String(repeating: " ", count: max(0, w - c.count)) + c + "  " }
        print(line)
    }
}

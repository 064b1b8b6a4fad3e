import AudioSession
import Foundation
import Sandbox
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// The library's own lifetime and threading, in this process (a crash here is a
    /// crash of the test run: these are the regressions of a crash in libpipewire).
    @Suite(.serialized)
    struct ClientLibraryTests {
        /// A silent stream on `session`.
        static func silence(_ session: AudioSession, _ name: String) throws -> AudioOutput {
            try AudioOutput(session: session, name: name, properties: ["node.name": name]) { buf, ch in
                buf.update(repeating: 0)
                return buf.count / max(ch, 1)
            }
        }

        /// An application that lets go of its session inside a notification handler (on
        /// the library's PipeWire thread). The session used to be torn down right there:
        /// `pw_core_disconnect` under libpipewire's own dispatch of that core's events,
        /// then `pw_thread_loop_stop` on the loop's thread (a join of itself) and the
        /// loop destroyed while it ran: a crash inside libpipewire, on its thread.
        @Test func aSessionReleasedInItsOwnNotificationHandlerGoesAwayCleanly() async throws {
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            try await withLibrary(in: sandbox) {
                let holder = Mutex<AudioSession?>(nil)
                let released = Atomic<Bool>(false)
                do {
                    let s = AudioSession(configuration: .init(applicationName: "released-in-handler"))
                    try s.setCategory(.playback)
                    try await s.setActive(true)
                    _ = s.addObserver { n in
                        guard case .interruption(.began) = n else { return }
                        holder.withLock { $0 = nil }  // the last reference
                        released.store(true, ordering: .sequentiallyConsistent)
                    }
                    holder.withLock { $0 = s }
                }
                #expect(try sandbox.clients(application: "released-in-handler").count == 1)
                // A call interrupts the session: its handler lets go of it.
                let call = try Client.spawn(sandbox, ["interrupt", "--as", "call", "--duration", "600", "--json"])
                defer { _ = call.terminate() }
                try sandbox.waitUntil(timeout: 15, "the interruption handler to run") {
                    released.load(ordering: .sequentiallyConsistent)
                }
                // The connection is closed (the client leaves the graph) and this process goes on.
                try sandbox.waitUntil(timeout: 15, "the released session's client to leave PipeWire") {
                    try sandbox.clients(application: "released-in-handler").isEmpty
                }
                // And the library still works in this process.
                let again = AudioSession(configuration: .init(applicationName: "after-release"))
                #expect(await again.waitForPolicy(timeout: .seconds(10)))
            }
        }

        /// §8: the sources of the graph are the session's available inputs, and
        /// setPreferredInput accepts one of them and refuses a name that is none.
        /// (Moving a capture stream is not tested: the library makes no capture
        /// streams, so a library session has none to move.)
        @Test func availableInputsListTheSourcesAndSetPreferredInputChecksTheName() async throws {
            let mic = VirtualDevice(name: "usb-mic", nodeDescription: "USB Mic", formFactor: "microphone",
                                    priority: 1500, mediaClass: "Audio/Source")
            let sandbox = try Sandbox.start(SandboxOptions(devices: [.speaker, .headphones, mic]))
            defer { sandbox.stop() }
            try await withLibrary(in: sandbox) {
                let s = AudioSession(configuration: .init(applicationName: "preferred-input"))
                try s.setCategory(.playAndRecord)
                #expect(await s.waitForPolicy(timeout: .seconds(10)))
                try await waitUntil("usb-mic among the available inputs") { s.availableInputs.contains { $0.uid == "usb-mic" } }
                #expect(!s.availableInputs.contains { $0.uid == "speaker" || $0.uid == "headphones" })
                let port = try #require(s.availableInputs.first { $0.uid == "usb-mic" })
                try s.setPreferredInput(port)
                #expect(s.preferredInput?.uid == "usb-mic")
                #expect(throws: SessionError.self) {
                    try s.setPreferredInput(SessionPort(name: "Nothing", uid: "no-such-source", type: .builtInMic))
                }
                // Refused: the previous preference stays.
                #expect(s.preferredInput?.uid == "usb-mic")
                try s.setPreferredInput(nil)
                #expect(s.preferredInput == nil)
            }
        }

        /// Which nodes feed the node `stream` (active links), by node name.
        static func sources(feeding stream: UInt32, _ sandbox: Sandbox) throws -> Set<String> {
            let d = try sandbox.dump()
            let names = Dictionary(uniqueKeysWithValues: Sandbox.objects(d, type: "PipeWire:Interface:Node").compactMap { n -> (Int, String)? in
                guard let id = n["id"] as? Int, let name = Sandbox.props(n)["node.name"] as? String else { return nil }
                return (id, name)
            })
            return Set(Graph.links(d).filter { $0.input == Int(stream) && $0.state == "active" }.compactMap { names[$0.output] })
        }

        /// §8: a session's capture stream (`AudioInput`, on the session's connection)
        /// captures, and `setPreferredInput` moves it to the chosen source and back.
        @Test func setPreferredInputMovesTheSessionsCaptureStream() async throws {
            // Virtual sources: a null sink made an Audio/Source produces nothing on PipeWire 1.6
            // (its node goes to the error state), one made an Audio/Source/Virtual captures on
            // every generation.
            let usb = VirtualDevice(name: "usb-mic", nodeDescription: "USB Mic", formFactor: "microphone",
                                    priority: 1500, mediaClass: "Audio/Source/Virtual")
            let headset = VirtualDevice(name: "headset-mic", nodeDescription: "Headset Mic", formFactor: "headset",
                                        priority: 1000, mediaClass: "Audio/Source/Virtual")
            let sandbox = try Sandbox.start(SandboxOptions(devices: [.speaker, .headphones, usb, headset]))
            defer { sandbox.stop() }
            try await withLibrary(in: sandbox) {
                let s = AudioSession(configuration: .init(applicationName: "preferred-input-move"))
                try s.setCategory(.record)
                #expect(await s.waitForPolicy(timeout: .seconds(10)))
                try await s.setActive(true)
                let frames = Atomic<Int>(0)
                let input = try AudioInput(session: s, name: "recorder", properties: ["node.name": "recorder"]) { buf, ch in
                    frames.add(buf.count / max(ch, 1), ordering: .relaxed)
                }
                defer { input.stop() }
                try await waitUntil("the capture stream to run") { input.state == .streaming && input.nodeID != nil }
                let node = try #require(input.nodeID)
                var initial: Set<String> = []
                try await waitUntil("the capture stream linked to the default source") {
                    initial = try Self.sources(feeding: node, sandbox)
                    return !initial.isEmpty
                }
                try await waitUntil("captured frames") { frames.load(ordering: .relaxed) > 0 }

                // A mic it does not capture from now.
                let target = try #require(["headset-mic", "usb-mic"].first { !initial.contains($0) })
                let port = try #require(s.availableInputs.first { $0.uid == target })
                try s.setPreferredInput(port)
                try await waitUntil("the capture stream moved to \(target) (from \(initial))") {
                    try Self.sources(feeding: node, sandbox) == [target]
                }
                // The policy's route for the session says so too (currentRoute).
                try await waitUntil("currentRoute's input to be \(target)") {
                    s.currentRoute.inputs.map(\.uid) == [target]
                }
                try s.setPreferredInput(nil)
                try await waitUntil("the capture stream back on \(initial)") {
                    try Self.sources(feeding: node, sandbox) == initial
                }
            }
        }

        /// Many sessions and streams made and dropped quickly (the benchmark's churn, in
        /// small): nothing crashes or hangs, and every connection is closed at the end.
        @Test func sessionsAndStreamsChurnWithoutCrashOrLeak() async throws {
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            try await withLibrary(in: sandbox) {
                // Sessions, each with a stream, dropped as soon as the stream runs.
                for i in 0..<40 {
                    let s = AudioSession(configuration: .init(applicationName: "churn-session"))
                    let o = try Self.silence(s, "churn-session-\(i)")
                    try await waitUntil("stream \(i) to run") { o.state == .streaming }
                    if i % 2 == 0 { o.stop() }  // the others go with their session
                }
                // One session, 30 live streams; the oldest replaced 300 times as fast as possible.
                let s = AudioSession(configuration: .init(applicationName: "churn-streams"))
                var outs: [AudioOutput] = []
                for i in 0..<30 { outs.append(try Self.silence(s, "churn-\(i)")) }
                try await waitUntil("30 streams to run") { outs.allSatisfy { $0.state == .streaming } }
                for i in 0..<300 {
                    outs.removeFirst().stop()
                    outs.append(try Self.silence(s, "churn-\(30 + i)"))
                    if i % 50 == 0 { try await Task.sleep(for: .milliseconds(5)) }
                }
                try await waitUntil("the last streams to run") { outs.allSatisfy { $0.state == .streaming } }
                outs.removeAll()
                try sandbox.waitUntil(timeout: 20, "the churned sessions' clients to leave PipeWire") {
                    try sandbox.clients(application: "churn-session").isEmpty
                }
                let nodes = Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Node")
                    .filter { (Sandbox.props($0)["node.name"] as? String)?.hasPrefix("churn-") == true }
                #expect(nodes.count == 0, "streams left after stop: \(nodes.count)")
                _ = s
            }
        }
    }
}

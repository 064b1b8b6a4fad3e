import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// R19 on the live graph: the user mutes the source a declared `record`
    /// session captures from (`pactl set-source-mute`), the session is
    /// interrupted with reason builtInMicMuted; unmuting ends the interruption.
    @Suite(.serialized)
    struct PolicyMicMuteTests {
        /// A virtual microphone: a null sink node of class Audio/Source/Virtual.
        static let mic = VirtualDevice(name: "mic", nodeDescription: "Microphone", formFactor: "microphone",
                                       priority: 2000, mediaClass: "Audio/Source/Virtual")

        /// The current value of `audio-session.event` (subject 0).
        static func lastEvent(_ sandbox: Sandbox) throws -> [String: Any]? {
            try sandbox.sessionMetadata().last { $0.subject == 0 && $0.key == "audio-session.event" }?.json
        }

        static func isEvent(_ e: [String: Any]?, session: Int, phase: String) -> Bool {
            guard let e, let s = e["session"] as? [String: Any] else { return false }
            return s["kind"] as? String == "client" && Graph.int(s["id"]) == session
                && e["type"] as? String == "interruption" && e["phase"] as? String == phase
        }

        /// The mic's Props `mute` as pw-dump shows it.
        static func micMute(_ sandbox: Sandbox) throws -> Bool? {
            let node = Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Node")
                .first { Sandbox.props($0)["node.name"] as? String == mic.name }
            return node.flatMap(Graph.props(param:))?["mute"] as? Bool
        }

        @Test func r19MutingTheCapturedSourceInterruptsTheRecordSessionWithBuiltInMicMutedAndUnmutingEndsIt() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            try sandbox.addDevice(Self.mic)
            let micID = try #require(try sandbox.nodeID(named: Self.mic.name))

            let recorder = try sandbox.spawn(
                ["pw-record", "--target", Self.mic.name, sandbox.directory + "/tmp/capture.wav"],
                environment: ["PIPEWIRE_PROPS": "{ audio.session.category = record }"])
            defer { recorder.terminate(signal: SIGKILL, timeout: 2) }

            // The declared record session is active and captures from the mic.
            var session: [String: Any] = [:]
            try sandbox.waitUntil(timeout: 15, "pw-record's record session capturing from the mic") {
                guard recorder.isRunning else { throw TestFailure("pw-record exited: \(recorder.logTail())") }
                let d = try sandbox.dump()
                guard let node = Graph.streamNode(d, pid: recorder.pid, mediaClass: "Stream/Input/Audio"),
                      let nodeID = node["id"] as? Int, Sandbox.state(node) == "running",
                      Graph.links(d).contains(where: { $0.output == micID && $0.input == nodeID && $0.state == "active" }),
                      let s = try sandbox.sessionState(ofStream: nodeID), s["active"] as? Bool == true,
                      let inputs = (s["route"] as? [String: Any])?["inputs"] as? [[String: Any]],
                      inputs.contains(where: { $0["uid"] as? String == Self.mic.name }) else { return false }
                session = s
                return true
            }
            #expect(session["category"] as? String == "record")
            #expect(session["interrupted"] as? Bool == false)
            let sessionRef = try #require(session["session"] as? [String: Any])
            #expect(sessionRef["kind"] as? String == "client")
            let client = try #require(Graph.int(sessionRef["id"]))
            #expect(!Self.isEvent(try Self.lastEvent(sandbox), session: client, phase: "began"))

            // The user mutes the mic.
            let mute = try sandbox.run(["pactl", "set-source-mute", Self.mic.name, "1"], timeout: 10)
            try #require(mute.status == 0, "pactl: \(mute.stderr)")
            var began: [String: Any]?
            try sandbox.waitUntil(timeout: 10, "interruption began for the record session") {
                let e = try Self.lastEvent(sandbox)
                guard Self.isEvent(e, session: client, phase: "began") else { return false }
                began = e
                return true
            }
            #expect(began?["reason"] as? String == "builtInMicMuted")
            let interrupted = try #require(try sandbox.sessionState(subject: client))
            #expect(interrupted["interrupted"] as? Bool == true)
            #expect(interrupted["interruptionReason"] as? String == "builtInMicMuted")
            // The user's mute is theirs: the module left it on (R41).
            #expect(try Self.micMute(sandbox) == true)

            // The user unmutes it.
            let unmute = try sandbox.run(["pactl", "set-source-mute", Self.mic.name, "0"], timeout: 10)
            try #require(unmute.status == 0, "pactl: \(unmute.stderr)")
            var ended: [String: Any]?
            try sandbox.waitUntil(timeout: 10, "interruption ended for the record session") {
                let e = try Self.lastEvent(sandbox)
                guard Self.isEvent(e, session: client, phase: "ended") else { return false }
                ended = e
                return true
            }
            let beganSeq = try #require(Graph.int(began?["seq"]))
            #expect(Graph.int(ended?["seq"]) == beganSeq + 1)
            let after = try #require(try sandbox.sessionState(subject: client))
            #expect(after["interrupted"] as? Bool == false)
            #expect(try Self.micMute(sandbox) == false)
        }
    }
}

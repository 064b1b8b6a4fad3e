import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// R43 on the live graph: a program that declares nothing and captures a microphone
    /// while it plays is a call; one that only captures is a recording. The program is one
    /// GStreamer process with a capture branch (the sandbox's virtual microphone) and a
    /// playback branch (a tone on the speaker), through PulseAudio (each element its own
    /// connection, as a browser's streams are) and through native PipeWire.
    @Suite(.serialized)
    struct CallsFromGraphTests {
        static let microphone = VirtualDevice(
            name: "mic", nodeDescription: "Microphone", formFactor: "microphone", priority: 1000, mediaClass: "Audio/Source/Virtual")

        static func sandbox(moduleArguments: [String: String] = [:]) throws -> Sandbox {
            var options = SandboxOptions()
            options.devices = [.speaker, .headphones, microphone]
            options.moduleArguments = moduleArguments
            return try Sandbox.start(options)
        }

        /// One process that captures the microphone and, with `plays`, plays a tone on the
        /// speaker (digital silence with `silent`, as Firefox plays while a page only records).
        static func program(_ api: String, plays: Bool, silent: Bool = false) -> [String] {
            // pipewiresrc offers audio and video: the caps make it an audio stream.
            let capture = api == "pulse"
                ? ["pulsesrc", "device=mic"]
                : ["pipewiresrc", "target-object=mic", "always-copy=true", "!", "audio/x-raw,rate=48000,channels=2", "!", "audioconvert"]
            let playback = api == "pulse" ? ["pulsesink", "device=speaker"] : ["pipewiresink", "target-object=speaker"]
            var argv = ["gst-launch-1.0", "-q"] + capture + ["!", "fakesink", "sync=false"]
            if plays {
                argv += ["audiotestsrc", "is-live=true", silent ? "wave=silence" : "wave=sine", "freq=660", "volume=0.3", "!"] + playback
            }
            return argv
        }

        /// The program's capture stream, once it runs and is linked from the microphone.
        static func captureNode(_ sandbox: Sandbox, _ process: ChildProcess) throws -> Int {
            var found: Int?
            try sandbox.waitUntil(timeout: 15, "the program's capture stream to run") {
                guard process.isRunning else { throw TestFailure("the program exited: \(process.logTail())") }
                let d = try sandbox.dump()
                let mic = Graph.nodeID(d, named: "mic")
                for node in try sandbox.nodes(ofProcess: process.pid)
                where (Sandbox.props(node)["media.class"] as? String) == "Stream/Input/Audio" && Sandbox.state(node) == "running" {
                    guard let id = node["id"] as? Int, Graph.links(d).contains(where: { $0.output == mic && $0.input == id }) else { continue }
                    found = id
                }
                return found != nil
            }
            return found ?? -1
        }

        /// Music on the headphones is paused while the program is in a call (0 samples in a
        /// second of it) and plays again after the hang-up.
        @Test(arguments: ["pulse", "pipewire"])
        func r43AProgramThatCapturesTheMicrophoneWhileItPlaysIsACall(_ api: String) throws {
            let sandbox = try Self.sandbox()
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let recorder = try Recorder(sandbox: sandbox, sink: "headphones")
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)

            let call = try sandbox.spawn(Self.program(api, plays: true))
            defer { call.terminate(signal: SIGKILL, timeout: 2) }
            let capture = try Self.captureNode(sandbox, call)
            try sandbox.waitUntil(timeout: 10, "the music to be interrupted by the call") {
                try PolicyInterruptionTests.interrupted(sandbox, node)
            }
            #expect(try sandbox.sessionState(ofStream: capture)?["priority"] as? String == "call")
            try sandbox.waitForMoreRecording(recorder, seconds: 0.1)
            let from = recorder.mark
            try sandbox.waitForMoreRecording(recorder, seconds: 1.0)
            let to = recorder.mark
            #expect(call.isRunning, "the call ended inside the measured window")

            // Hang up: the program goes, what the call interrupted resumes (shouldResume).
            call.terminate(signal: SIGTERM, timeout: 5)
            try sandbox.waitUntil(timeout: 10, "the music to resume after the call") {
                try !PolicyInterruptionTests.interrupted(sandbox, node) && PolicyInterruptionTests.running(sandbox, node)
            }
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            let wav = try recorder.stop()
            let leaked = PolicyInterruptionTests.nonZero(wav, from: from, to: to)
            print("R43 \(api): \(leaked) non-zero samples in \((to - from) / 4) frames of the call")
            #expect(to > from)
            #expect(leaked == 0)
        }

        /// A program that only records is a recording: the music plays on, an alert is silenced (R21).
        @Test(arguments: ["pulse", "pipewire"])
        func r43R21AProgramThatOnlyRecordsLetsTheMusicPlayAndSilencesAlerts(_ api: String) throws {
            let sandbox = try Self.sandbox()
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }

            let recording = try sandbox.spawn(Self.program(api, plays: false))
            defer { recording.terminate(signal: SIGKILL, timeout: 2) }
            let capture = try Self.captureNode(sandbox, recording)
            try sandbox.waitUntil(timeout: 10, "the capture to be a recording") {
                Self.isRecording(try sandbox.sessionState(ofStream: capture))
            }
            try Self.expectAlertsSilencedWhileTheMusicPlays(sandbox, music: music, musicNode: node)
        }

        /// A program that records while it plays silence (Firefox does, for a page that only
        /// records) is a recording too: the module listens to its output and hears nothing.
        /// Without listening (`calls.listen = false`) the same program is a call.
        @Test(arguments: ["pulse", "pipewire"])
        func r43R21AProgramThatRecordsWhileItPlaysSilenceIsARecording(_ api: String) throws {
            let sandbox = try Self.sandbox()
            defer { sandbox.stop() }
            let (music, node, recording, capture) = try Self.recordWhilePlayingSilence(sandbox, api)
            defer { recording.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitUntil(timeout: 10, "the capture to be a recording") {
                Self.isRecording(try sandbox.sessionState(ofStream: capture))
            }
            try Self.expectAlertsSilencedWhileTheMusicPlays(sandbox, music: music, musicNode: node)
            #expect(Self.isRecording(try sandbox.sessionState(ofStream: capture)), "the capture became a call")
        }

        /// The control: without listening, the same program is taken for a call.
        @Test func r43WithoutListeningAProgramThatRecordsWhileItPlaysSilenceIsACall() throws {
            let sandbox = try Self.sandbox(moduleArguments: ["calls.listen": "false"])
            defer { sandbox.stop() }
            let (_, node, recording, capture) = try Self.recordWhilePlayingSilence(sandbox, "pulse")
            defer { recording.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitUntil(timeout: 10, "the music to be interrupted by the program taken for a call") {
                try PolicyInterruptionTests.interrupted(sandbox, node)
            }
            #expect(try sandbox.sessionState(ofStream: capture)?["priority"] as? String == "call")
        }

        /// Music on the headphones, and a program that records the microphone while it plays
        /// silence on the speaker, both running: the music file, the music's node, the
        /// program and its capture node.
        static func recordWhilePlayingSilence(_ sandbox: Sandbox, _ api: String) throws -> (String, Int, ChildProcess, Int) {
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            // The player lives as long as the sandbox.
            let (_, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            let recording = try sandbox.spawn(Self.program(api, plays: true, silent: true))
            let capture = try Self.captureNode(sandbox, recording)
            try sandbox.waitUntil(timeout: 10, "the program's silent output to run") {
                try sandbox.nodes(ofProcess: recording.pid).contains {
                    (Sandbox.props($0)["media.class"] as? String) == "Stream/Output/Audio" && Sandbox.state($0) == "running"
                }
            }
            return (music, node, recording, capture)
        }

        /// A published session that is an active recording (R43's record-only program).
        static func isRecording(_ session: [String: Any]?) -> Bool {
            session?["category"] as? String == "record" && session?["active"] as? Bool == true
        }

        /// While a recording lasts (R21): an alert on the speaker (`music` played with the
        /// Notification role) is silenced, and the music (`musicNode`) is neither interrupted
        /// nor stopped.
        static func expectAlertsSilencedWhileTheMusicPlays(_ sandbox: Sandbox, music: String, musicNode node: Int) throws {
            let (alert, alertNode) = try sandbox.startPlayer(
                ["pw-play", "--media-role", "Notification", "--target", "speaker", music], on: "speaker")
            defer { alert.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitUntil(timeout: 10, "the alert to be silenced") {
                try sandbox.sessionState(ofStream: alertNode)?["silenced"] as? Bool == true
            }
            #expect(try !PolicyInterruptionTests.interrupted(sandbox, node))
            #expect(try PolicyInterruptionTests.running(sandbox, node))
        }
    }
}

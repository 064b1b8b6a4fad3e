import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// `pw-session mpris-bridge` with a real MPRIS player (mpv with mpv-mpris, through
    /// pipewire-pulse) on the sandbox's private session bus: R15, R18 and R31 as the
    /// player itself reports them (`playerctl status`), and what reached the outputs.
    @Suite(.serialized)
    struct PolicyMPRISTests {
        /// Where Debian's mpv-mpris put the plugin (it is autoloaded from /etc/mpv/scripts;
        /// mpv runs with --no-config here, so it is named explicitly): the package's own list.
        static func mprisPlugin() throws -> String {
            guard let p = SandboxConfig.mpvMPRISPlugin() else {
                throw TestFailure("the mpv MPRIS plugin is missing: install the Debian package mpv-mpris (make deps)")
            }
            return p
        }

        struct Setup {
            var sandbox: Sandbox
            var player: ChildProcess
            var node: Int
            var bridge: ChildProcess
            var recorder: Recorder?
        }

        /// A sandbox with the bridge running and mpv playing a minute of tone on the headphones.
        static func start(recordOn sink: String?, audioOutput: String = "pulse") throws -> Setup {
            let sandbox = try Sandbox.start(SandboxOptions())
            do {
                let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
                // The bridge has connected and published its (empty) reports.
                let bridge = try BrowserTests.startBridge(sandbox)
                let recorder = try sink.map { try Recorder(sandbox: sandbox, sink: $0) }
                let (player, node) = try sandbox.startPlayer(
                    ["mpv", "--no-config", "--script=\(try mprisPlugin())", "--no-video", "--ao=\(audioOutput)",
                     "--loop=inf", "--no-terminal", music], on: "headphones", timeout: 30)
                try sandbox.waitUntil(timeout: 15, "mpv to be on the session bus, playing") { try status(sandbox) == "Playing" }
                return Setup(sandbox: sandbox, player: player, node: node, bridge: bridge, recorder: recorder)
            } catch {
                sandbox.stop()
                throw error
            }
        }

        /// `playerctl status` of mpv: "Playing", "Paused", or nil when it is not on the bus.
        static func status(_ sandbox: Sandbox) throws -> String? {
            let r = try sandbox.run(["playerctl", "--player=mpv", "status"], timeout: 10)
            return r.status == 0 ? r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) : nil
        }

        static func playerctl(_ sandbox: Sandbox, _ command: String) throws {
            let r = try sandbox.run(["playerctl", "--player=mpv", command], timeout: 10)
            if r.status != 0 { throw TestFailure("playerctl \(command) failed: \(r.stderr)") }
        }

        static func nodeRunning(_ sandbox: Sandbox, _ node: Int) throws -> Bool {
            Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Node")
                .first { $0["id"] as? Int == node }.flatMap(Sandbox.state) == "running"
        }

        /// The bridge's report: the streams whose player paused itself after its Pause.
        static func released(_ sandbox: Sandbox) throws -> Set<Int> {
            let client = Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Client").first {
                Sandbox.props($0)["audio.session.control.mpris"] != nil
            }
            let raw = client.map { "\(Sandbox.props($0)["audio.session.control.mpris-released"] ?? "")" } ?? ""
            return Set(raw.split(separator: " ").compactMap { Int($0) })
        }

        /// `audio-session.mpris` on the stream's subject, as the module published it.
        static func governingPlayer(_ sandbox: Sandbox, _ node: Int) throws -> String? {
            try sandbox.sessionMetadata().first { $0.subject == node && $0.key == "audio-session.mpris" }
                .flatMap { try? JSONSerialization.jsonObject(with: Data($0.value.utf8)) as? [String: Any] }?["player"] as? String
        }

        static func bridgeSaid(_ bridge: ChildProcess, _ text: String) -> Bool {
            bridge.logTail(lines: 200).contains(text)
        }

        /// Through pipewire-pulse (the player is found by the pid libpulse reported) and
        /// natively (by the client's `pipewire.sec.pid`).
        @Test(.serialized, arguments: ["pulse", "pipewire"])
        func r15ACallPausesTheMPRISPlayerItselfAndItPlaysAgainAfterTheCall(audioOutput: String) throws {
            let s = try Self.start(recordOn: "headphones", audioOutput: audioOutput)
            defer { s.sandbox.stop() }
            defer { s.player.terminate(signal: SIGKILL, timeout: 2) }
            let call = try tone(in: s.sandbox, seconds: 4, frequency: 660, name: "call.wav")
            let caller = try s.sandbox.spawn(["pw-play", "--media-role", "Phone", "--target", "speaker", call])

            try s.sandbox.waitUntil(timeout: 15, "mpv to report Paused") { try Self.status(s.sandbox) == "Paused" }
            try s.sandbox.waitUntil(timeout: 10, "the policy to publish the MPRIS player of the stream") {
                try Self.governingPlayer(s.sandbox, s.node) == "org.mpris.MediaPlayer2.mpv"
            }
            // pw-session status shows it too.
            let st = try s.sandbox.run([try Support.pwSessionPath(), "status", "--json"])
            let doc = try JSONSerialization.jsonObject(with: Data(st.stdout.utf8)) as? [String: Any]
            let session = (doc?["sessions"] as? [[String: Any]])?.first { ($0["streams"] as? [Int])?.contains(s.node) == true }
            #expect(session?["mpris"] as? String == "org.mpris.MediaPlayer2.mpv", "\(st.stdout)")

            // While the call lasts, nothing of the music reaches the headphones.
            let recorder = try #require(s.recorder)
            try s.sandbox.waitForMoreRecording(recorder, seconds: 0.1)
            let from = recorder.mark
            try s.sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            let to = recorder.mark
            if !caller.isRunning { Issue.record("the call ended inside the measured window") }

            try s.sandbox.waitUntil(timeout: 15, "the call to end") { !caller.isRunning }
            try s.sandbox.waitUntil(timeout: 15, "mpv to report Playing again") { try Self.status(s.sandbox) == "Playing" }
            try s.sandbox.waitUntil(timeout: 10, "the music's stream to run again") {
                try Self.nodeRunning(s.sandbox, s.node) && s.sandbox.sessionState(ofStream: s.node)?["playing"] as? Bool == true
            }
            let wav = try recorder.stop()
            let leaked = PolicyInterruptionTests.nonZero(wav, from: from, to: to)
            #expect(to > from)
            #expect(leaked == 0, "non-zero samples on the headphones during the call: \(leaked)")
            #expect(Self.bridgeSaid(s.bridge, "resumed org.mpris.MediaPlayer2.mpv"), "\(s.bridge.logTail())")
        }

        @Test func r18TheUserPausingThePlayerDuringTheCallIsNotResumed() throws {
            let s = try Self.start(recordOn: nil)
            defer { s.sandbox.stop() }
            defer { s.player.terminate(signal: SIGKILL, timeout: 2) }
            let call = try tone(in: s.sandbox, seconds: 60, frequency: 660, name: "call.wav")
            let caller = try s.sandbox.spawn(["pw-play", "--media-role", "Phone", "--target", "speaker", call])
            defer { caller.terminate(signal: SIGKILL, timeout: 2) }
            do {
                try Self.userPausesDuringTheCall(s, caller)
            } catch {
                // What the bridge saw and did, to tell a race in the bridge from one in the test.
                Issue.record("\(error)\nbridge log:\n\(s.bridge.logTail(lines: 60))")
            }
        }

        static func userPausesDuringTheCall(_ s: Setup, _ caller: ChildProcess) throws {
            try s.sandbox.waitUntil(timeout: 15, "mpv to report Paused") { try Self.status(s.sandbox) == "Paused" }
            try s.sandbox.waitUntil(timeout: 10, "the bridge to release the graph pause") {
                try Self.released(s.sandbox).contains(s.node)
            }
            // The user presses play (the call still holds the audio: R16 refuses, the
            // stream stays paused in the graph), then pause.
            try Self.playerctl(s.sandbox, "play")
            // A person is slower than the player's PropertiesChanged signal: mpv-mpris may
            // fold a play and a pause within a few milliseconds into one signal.
            try s.sandbox.waitUntil(timeout: 10, "mpv to report Playing, and the bridge to hear it") {
                try Self.status(s.sandbox) == "Playing" && Self.bridgeSaid(s.bridge, "org.mpris.MediaPlayer2.mpv reports Playing")
            }
            #expect(try !Self.nodeRunning(s.sandbox, s.node), "the call still holds the audio")
            try Self.playerctl(s.sandbox, "pause")
            try s.sandbox.waitUntil(timeout: 10, "mpv to report Paused") { try Self.status(s.sandbox) == "Paused" }
            try s.sandbox.waitUntil(timeout: 10, "the bridge to release the graph pause again") {
                try Self.released(s.sandbox).contains(s.node)
            }
            // The call ends with shouldResume (its stream goes; a transient Phone role notifies others).
            _ = caller.terminate(signal: SIGTERM, timeout: 10)
            try s.sandbox.waitUntil(timeout: 15, "the bridge to decide on the ended interruption") {
                Self.bridgeSaid(s.bridge, "not resuming org.mpris.MediaPlayer2.mpv") || Self.bridgeSaid(s.bridge, "resumed org.mpris.MediaPlayer2.mpv")
            }
            #expect(Self.bridgeSaid(s.bridge, "not resuming org.mpris.MediaPlayer2.mpv: it was played or paused during the interruption"),
                    "\(s.bridge.logTail())")
            #expect(try Self.status(s.sandbox) == "Paused")
            #expect(try !Self.nodeRunning(s.sandbox, s.node))
            #expect(try s.sandbox.sessionState(ofStream: s.node)?["interrupted"] as? Bool == false)
            #expect(!Self.bridgeSaid(s.bridge, "resumed org.mpris.MediaPlayer2.mpv"), "\(s.bridge.logTail())")
        }

        @Test func r31HeadphonesLostPauseTheMPRISPlayerItStaysPausedAndItsOwnPlayWorks() throws {
            let s = try Self.start(recordOn: "speaker")
            defer { s.sandbox.stop() }
            defer { s.player.terminate(signal: SIGKILL, timeout: 2) }
            let recorder = try #require(s.recorder)
            try s.sandbox.removeDevice(named: "headphones")
            try s.sandbox.waitUntil(timeout: 15, "mpv to report Paused") { try Self.status(s.sandbox) == "Paused" }
            try s.sandbox.waitForOrphanOnTheSpeaker(s.node)
            do {
                try s.sandbox.waitUntil(timeout: 10, "the bridge to release the graph pause") {
                    try Self.released(s.sandbox).contains(s.node)
                }
            } catch {
                Issue.record("\(error); the bridge said: \(s.bridge.logTail(lines: 30))")
                throw error
            }
            try s.sandbox.addDevice(.headphones)
            try s.sandbox.waitUntil(timeout: 10, "the headphones back in the policy's route") {
                try s.sandbox.globalOutputs().contains { $0["uid"] as? String == "headphones" }
            }
            try s.sandbox.waitForMoreRecording(recorder, seconds: 0.3)
            let wav = try recorder.stop()
            #expect(wav.nonZeroSampleCount == 0, "non-zero samples on the speaker: \(wav.nonZeroSampleCount)")
            #expect(try Self.status(s.sandbox) == "Paused")
            #expect(try !Self.nodeRunning(s.sandbox, s.node))
            #expect(!Self.bridgeSaid(s.bridge, "resumed org.mpris.MediaPlayer2.mpv"), "\(s.bridge.logTail())")

            // The user presses play: the player's own Play starts the stream again.
            try Self.playerctl(s.sandbox, "play")
            try s.sandbox.waitUntil(timeout: 15, "the stream to run after the user's play") {
                try Self.status(s.sandbox) == "Playing" && Self.nodeRunning(s.sandbox, s.node)
            }
        }

        /// Players that do not honour MPRIS Pause, playing from a child process as browsers do
        /// (`Tests/Fixtures/mpris-player.py`): one answers Pause and plays on, one never answers.
        /// When their headphones go, nothing reaches the speaker, whatever was asked of them
        /// (WirePlumber 0.5.11 and later send Pause themselves and, for a player that never
        /// answers, hold back relinking for about 3 s; the agent sends Pause to a player it
        /// finds), and nobody sends them Play (R31).
        @Test(.serialized, arguments: ["ignore", "never-answer"])
        func r30R31APlayerThatDoesNotHonourPauseLeaksNothingWhenItsHeadphonesGo(_ pause: String) throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let agent = try BrowserTests.startBridge(sandbox)
            defer { agent.terminate(signal: SIGTERM, timeout: 5) }
            let recorder = try Recorder(sandbox: sandbox, sink: "speaker")
            let fixture = Support.checkoutRoot + "/Tests/Fixtures/mpris-player.py"
            let (player, node) = try sandbox.startPlayer(
                ["/usr/bin/python3", fixture, "--name", "fixture", "--pause", pause, music], on: "headphones", timeout: 30,
                streamOwner: { Support.firstChild(of: $0.pid) })
            let child = Support.firstChild(of: player.pid)
            defer {
                player.terminate(signal: SIGKILL, timeout: 2)
                if let child { kill(child, SIGKILL) }
            }
            try sandbox.waitUntil(timeout: 15, "the fixture player on the session bus, playing") {
                let r = try sandbox.run(["playerctl", "--player=fixture", "status"], timeout: 10)
                return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "Playing"
            }
            try sandbox.removeDevice(named: "headphones")
            // WirePlumber 0.5.11+ waits up to about 3 s for a player's answer before relinking.
            try sandbox.waitForOrphanOnTheSpeaker(node, timeout: 20)
            try sandbox.waitForMoreRecording(recorder, seconds: 1.5)
            let wav = try recorder.stop()
            #expect(wav.nonZeroSampleCount == 0, "non-zero samples on the speaker: \(wav.nonZeroSampleCount)")
            #expect(try !Self.nodeRunning(sandbox, node), "the stream must stay paused")
            let calls = player.logTail(lines: 200).split(separator: "\n")
            #expect(!calls.contains("Play"), "nobody may send Play after a route loss: \(calls)")
        }

        /// The session D-Bus restarts: the bridge keeps running, and a player that joins the
        /// new bus is governed like the first (R15: paused by the call, playing after it).
        @Test func r15TheBridgeGovernsPlayersOnARestartedSessionBus() throws {
            let s = try Self.start(recordOn: nil)
            defer { s.sandbox.stop() }
            s.player.terminate(signal: SIGKILL, timeout: 2)
            try s.sandbox.restartSessionBus()
            let music = try tone(in: s.sandbox, seconds: 60, name: "music2.wav")
            let (player, node) = try s.sandbox.startPlayer(
                ["mpv", "--no-config", "--script=\(try Self.mprisPlugin())", "--no-video", "--ao=pulse",
                 "--loop=inf", "--no-terminal", music], on: "headphones", timeout: 30)
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            do {
                try s.sandbox.waitUntil(timeout: 15, "mpv to be on the new session bus, playing") { try Self.status(s.sandbox) == "Playing" }
                let call = try tone(in: s.sandbox, seconds: 3, frequency: 660, name: "call.wav")
                let caller = try s.sandbox.spawn(["pw-play", "--media-role", "Phone", "--target", "speaker", call])
                try s.sandbox.waitUntil(timeout: 15, "mpv to report Paused") { try Self.status(s.sandbox) == "Paused" }
                // The bridge sends Pause before it reports the player it governs, and the
                // module publishes that report in its own time: wait for it, do not race it.
                try s.sandbox.waitUntil(timeout: 10, "the policy to publish the MPRIS player of the stream") {
                    try Self.governingPlayer(s.sandbox, node) == "org.mpris.MediaPlayer2.mpv"
                }
                try s.sandbox.waitUntil(timeout: 15, "the call to end") { !caller.isRunning }
                try s.sandbox.waitUntil(timeout: 15, "mpv to report Playing again") { try Self.status(s.sandbox) == "Playing" }
            } catch {
                // What the bridge saw and did, to tell a race in the bridge from one in the test.
                Issue.record("\(error)\nbridge log:\n\(s.bridge.logTail())")
            }
            #expect(s.bridge.isRunning, "\(s.bridge.logTail())")
        }

        /// A player without MPRIS keeps the graph pause and the policy's own resume (R15).
        @Test func r15AStreamWithoutAnMPRISPlayerIsPausedAndResumedInTheGraph() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let call = try tone(in: sandbox, seconds: 2, frequency: 660, name: "call.wav")
            let bridge = try sandbox.spawn([try Support.pwSessionPath(), "agent", "--verbose"])
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            let caller = try sandbox.spawn(["pw-play", "--media-role", "Phone", "--target", "speaker", call])
            try sandbox.waitUntil(timeout: 15, "the bridge to find no player for the music") {
                Self.bridgeSaid(bridge, "stream \(node): no MPRIS player owns it")
            }
            try sandbox.waitUntil(timeout: 15, "the call to end") { !caller.isRunning }
            try sandbox.waitUntil(timeout: 10, "the music to run again") {
                try Self.nodeRunning(sandbox, node) && sandbox.sessionState(ofStream: node)?["interrupted"] as? Bool == false
            }
            #expect(try Self.governingPlayer(sandbox, node) == nil)
        }
    }
}

import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// The AudioSession library end to end through `pw-session play`: ducking by a
    /// prompt (R3), an alarm's interruption (R1, transient roles), the
    /// silenceSecondaryAudioHint (R22) and overrideOutputAudioPort (R33, R34).
    @Suite(.serialized)
    struct ClientRouteAndHintTests {
        /// The median level (dBFS) of what reached `sink` during `seconds` from now,
        /// the recorder's own start-up silence left out.
        static func level(_ sandbox: Sandbox, sink: String, seconds: Double = 0.6) throws -> Double {
            let recorder = try Recorder(sandbox: sandbox, sink: sink)
            try sandbox.waitForMoreRecording(recorder, seconds: seconds)
            let blocks = try recorder.stop().blockLevels()
            let sounding = blocks.drop { !($0.isFinite && $0 > -60) }.dropFirst(2)
            return Levels(blocks: Array(sounding)).median(0..<sounding.count)
        }

        static func playerSession(_ sandbox: Sandbox) throws -> [String: Any]? {
            try Client.session(sandbox, application: "pw-session play")
        }

        // MARK: R3: a prompt ducks the player

        @Test func r3APromptDucksAPlayingPlayerAndItsLevelOnTheHeadphonesDrops() throws {
            let tmp = try Support.makeTemp("r3-client")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let player = try Client.startPlayer(sandbox, file: file)
            defer { _ = player.terminate() }
            #expect(try Self.playerSession(sandbox)?["ducked"] as? Bool == false)
            let before = try Self.level(sandbox, sink: "headphones")
            #expect(before > -20, "the music did not reach the headphones: \(before) dB")

            let prompt = try Client.spawn(sandbox, ["interrupt", "--as", "prompt", "--duration", "8", "--json"])
            defer { _ = prompt.terminate() }
            try Client.waitFor(prompt, "the prompt to be active", Client.event("active"))
            try sandbox.waitUntil(timeout: 10, "the player's session to be ducked") {
                try Self.playerSession(sandbox)?["ducked"] as? Bool == true
            }
            let s = try Self.playerSession(sandbox)
            #expect((s?["duckGain"] as? Double).map { $0 < 0.5 } == true, "\(String(describing: s))")
            // Ducked, not interrupted: the player keeps playing and is told nothing (R3).
            #expect(s?["interrupted"] as? Bool == false, "\(String(describing: s))")
            #expect(s?["playing"] as? Bool == true, "\(String(describing: s))")
            // The music at the duck level plus the quiet prompt tone: well below the music alone.
            let during = try Self.level(sandbox, sink: "headphones")
            #expect(during < before - 6, "before \(before) dB, during the prompt \(during) dB")

            try Client.waitFor(prompt, "the prompt to deactivate", timeout: 30, Client.event("deactivated"))
            try sandbox.waitUntil(timeout: 10, "the duck to end") {
                try Self.playerSession(sandbox)?["ducked"] as? Bool == false
            }
            #expect(Client.objects(player).filter(Client.event("interruption")).isEmpty, "\(Client.log(player))")
        }

        // MARK: R1: an alarm interrupts the player, and its end resumes it

        @Test func r1AnAlarmInterruptsThePlayerAndItsEndResumesIt() throws {
            let tmp = try Support.makeTemp("alarm-client")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let player = try Client.startPlayer(sandbox, file: file)
            defer { _ = player.terminate() }

            // Alarm: playback with alert priority (above music), non-mixable: it interrupts
            // the music (R1); a transient role, it notifies when it ends (shouldResume, R14).
            let alarm = try Client.spawn(sandbox, ["interrupt", "--as", "alarm", "--duration", "600", "--json"])
            defer { _ = alarm.terminate() }
            try Client.waitFor(alarm, "the alarm to be active", Client.event("active"))
            let began = try Client.waitFor(player, "interruption began", Client.event("interruption", ["phase": "began"]))
            #expect(began[0]["stream"] as? String == "paused", "R11: \(began[0])")
            try sandbox.waitUntil(timeout: 10, "the player's session to be interrupted") {
                try Self.playerSession(sandbox)?["interrupted"] as? Bool == true
            }
            #expect(try Self.playerSession(sandbox)?["playing"] as? Bool == false)

            // The alarm is dismissed: its stream goes away.
            _ = alarm.terminate(signal: SIGINT, timeout: 10)
            let ended = try Client.waitFor(player, "interruption ended", Client.event("interruption", ["phase": "ended"]))
            #expect(ended[0]["shouldResume"] as? Bool == true, "\(ended[0])")
            try Client.waitFor(player, "the player to resume", Client.event("resumed"))
            try sandbox.waitUntil(timeout: 30, "the player to play again") {
                try Self.playerSession(sandbox)?["playing"] as? Bool == true
            }
        }

        // MARK: R33, R34: overrideOutputAudioPort through `pw-session play --commands`
        // (the library moves the stream with `target.object` in the `default` metadata and
        // tells the policy with `audio.session.output-override`; a move made by another
        // program, e.g. pavucontrol, is not reported as an override: the module does not
        // follow the `default` metadata, whose binding from inside the 0.3.65 daemon
        // crashed it)

        /// Whether the stream of process `pid` is linked (active) to `sink`.
        static func linked(_ sandbox: Sandbox, pid: Int32, to sink: String) throws -> Bool {
            let d = try sandbox.dump()
            guard let node = Graph.streamNode(d, pid: pid)?["id"] as? Int, let sinkID = Graph.nodeID(d, named: sink) else { return false }
            return Graph.links(d).contains { $0.output == node && $0.input == sinkID && $0.state == "active" }
        }

        /// Asks the player for its currentRoute until its outputs are `outputs`.
        static func waitForRoute(_ sandbox: Sandbox, _ player: ChildProcess, _ pipe: CommandPipe, outputs: String) throws {
            try sandbox.waitUntil(timeout: 15, poll: 0.2, "the player's currentRoute to be \(outputs)") {
                let before = Client.objects(player).filter(Client.event("route")).count
                pipe.send("route")
                let answers = try Client.waitFor(player, "an answer to route", count: before + 1, Client.event("route"))
                return answers.last?["outputs"] as? String == outputs
            }
        }

        @Test func r33OverrideOutputAudioPortMovesThePlayerToTheSpeakerAndNoneMovesItBack() throws {
            let tmp = try Support.makeTemp("r33-client")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let pipe = try CommandPipe(in: tmp)
            let player = try sandbox.spawn([try Support.pwSessionPath(), "play", file, "--json", "--commands"],
                                           standardInput: pipe.path)
            defer { _ = player.terminate() }
            try Client.waitFor(player, "the player to play", Client.event("playing"))
            try sandbox.waitUntil(timeout: 15, "the player on the headphones (the default output)") {
                try Self.linked(sandbox, pid: player.pid, to: "headphones")
            }
            try Self.waitForRoute(sandbox, player, pipe, outputs: "headphones")

            pipe.send("speaker")
            try Client.waitFor(player, "override speaker", Client.event("override", ["port": "speaker"]))
            try sandbox.waitUntil(timeout: 15, "the player's stream to move to the speaker") {
                try Self.linked(sandbox, pid: player.pid, to: "speaker")
                    && !(try Self.linked(sandbox, pid: player.pid, to: "headphones"))
            }
            try Self.waitForRoute(sandbox, player, pipe, outputs: "speaker")
            // R33: the application is told: routeChange(override), the headphones as the previous route.
            let overrides = try Client.waitFor(player, "routeChange(override)",
                                               Client.event("routeChange", ["reason": "override"]))
            #expect(overrides[0]["previousOutputs"] as? String == "headphones", "\(overrides[0])")
            let speaker = try Recorder(sandbox: sandbox, sink: "speaker")
            try sandbox.waitForMoreRecording(speaker, seconds: 0.5)
            #expect(try speaker.stop().nonZeroSampleCount > 0, "no sample of the player reached the speaker")
            // R33: a route the application chose is no loss: nothing paused, no oldDeviceUnavailable.
            #expect(Client.objects(player).filter(Client.event("paused")).isEmpty, "\(Client.log(player))")
            #expect(Client.objects(player).filter(Client.event("routeChange", ["reason": "oldDeviceUnavailable"])).isEmpty)
            let route = try Self.playerSession(sandbox)?["route"] as? [String: Any]
            let outputs = (route?["outputs"] as? [[String: Any]] ?? []).compactMap { $0["uid"] as? String }
            #expect(outputs == ["speaker"], "status route: \(String(describing: route))")

            pipe.send("default")
            try Client.waitFor(player, "override none", Client.event("override", ["port": "none"]))
            try sandbox.waitUntil(timeout: 15, "the player's stream to go back to the headphones") {
                try Self.linked(sandbox, pid: player.pid, to: "headphones")
                    && !(try Self.linked(sandbox, pid: player.pid, to: "speaker"))
            }
            try Self.waitForRoute(sandbox, player, pipe, outputs: "headphones")
            // Withdrawing the override is a route change by override too.
            try Client.waitFor(player, "a second routeChange(override)", count: 2,
                               Client.event("routeChange", ["reason": "override"]))
            #expect(Client.objects(player).filter(Client.event("commandFailed")).isEmpty, "\(Client.log(player))")
            #expect(player.isRunning)
        }

        @Test func r34OverrideToTheSpeakerWithoutOneIsRefusedAndTheStreamStays() throws {
            let tmp = try Support.makeTemp("r34-client")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Sandbox.start(SandboxOptions(devices: [.headphones]))
            defer { sandbox.stop() }
            let pipe = try CommandPipe(in: tmp)
            let player = try sandbox.spawn([try Support.pwSessionPath(), "play", file, "--json", "--commands"],
                                           standardInput: pipe.path)
            defer { _ = player.terminate() }
            try Client.waitFor(player, "the player to play", Client.event("playing"))
            pipe.send("speaker")
            let failed = try Client.waitFor(player, "the override to be refused", Client.event("commandFailed"))
            #expect(failed[0]["code"] as? String == "badParam", "\(failed[0])")
            #expect(try Self.linked(sandbox, pid: player.pid, to: "headphones"))
            #expect(player.isRunning)
        }

        // MARK: R22: silenceSecondaryAudioHint

        @Test func r22AnAmbientPlayerGetsSilenceSecondaryAudioHintBeginAndEnd() throws {
            let tmp = try Support.makeTemp("r22-client")
            defer { Support.removeTemp(tmp) }
            let long = try Support.makeTone(in: tmp, seconds: 120)
            let short = try Support.makeTone(in: tmp, seconds: 2, name: "short.wav")
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let ambient = try Client.spawn(sandbox, ["play", long, "--category", "ambient", "--json"])
            defer { _ = ambient.terminate() }
            try Client.waitFor(ambient, "the ambient player to play", Client.event("playing"))
            #expect(Client.objects(ambient).filter(Client.event("silenceSecondaryAudioHint")).isEmpty)

            // Non-mixable primary audio of another client starts, plays two seconds and stops.
            let music = try Client.spawn(sandbox, ["play", short, "--category", "playback", "--json"])
            defer { _ = music.terminate() }
            try Client.waitFor(music, "the music to play", Client.event("playing"))
            try Client.waitFor(ambient, "silenceSecondaryAudioHint begin",
                               Client.event("silenceSecondaryAudioHint", ["phase": "begin"]))
            try Client.waitFor(music, "the music to finish", Client.event("finished"))
            let hints = try Client.waitFor(ambient, "silenceSecondaryAudioHint end", count: 2,
                                           Client.event("silenceSecondaryAudioHint"))
            #expect(hints.map { $0["phase"] as? String } == ["begin", "end"], "\(Client.log(ambient))")
            // Mixable, the ambient player was never interrupted (R2) and plays on.
            #expect(Client.objects(ambient).filter(Client.event("interruption")).isEmpty, "\(Client.log(ambient))")
            #expect(ambient.isRunning)
            // The player that caused the hint is not told to silence itself.
            #expect(Client.objects(music).filter(Client.event("silenceSecondaryAudioHint")).isEmpty, "\(Client.log(music))")
        }
    }
}

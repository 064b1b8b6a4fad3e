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

        @Test func R3_aPromptDucksAPlayingPlayerAndItsLevelOnTheHeadphonesDrops() throws {
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

        @Test func R1_anAlarmInterruptsThePlayerAndItsEndResumesIt() throws {
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

        // MARK: R22: silenceSecondaryAudioHint

        @Test func R22_anAmbientPlayerGetsSilenceSecondaryAudioHintBeginAndEnd() throws {
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

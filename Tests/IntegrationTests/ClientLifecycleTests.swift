import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// The interruption life cycle of the Audio Session Programming Guide,
    /// end to end through the AudioSession library (`pw-session play`).
    @Suite(.serialized)
    struct ClientLifecycleTests {
        /// One call against a playing `pw-session play`: began after the policy
        /// stopped the stream (R11), ended with or without shouldResume (R7, R14).
        func call(_ sandbox: Sandbox, player: ChildProcess, seconds: Double, notify: Bool, round: Int) throws -> (began: [String: Any], ended: [String: Any]) {
            var args = ["interrupt", "--as", "call", "--duration", String(seconds)]
            if !notify { args.append("--no-notify") }
            let r = try Client.run(sandbox, args)
            #expect(r.status == 0, "interrupt: \(r.stdout) \(r.stderr)")
            #expect(r.stdout.contains("deactivated notifyOthers=\(notify)"), "\(r.stdout)")
            let began = try Client.waitFor(player, "interruption began #\(round)", count: round,
                                           Client.event("interruption", ["phase": "began"]))
            let ended = try Client.waitFor(player, "interruption ended #\(round)", count: round,
                                           Client.event("interruption", ["phase": "ended"]))
            return (began[round - 1], ended[round - 1])
        }

        @Test func s8DeclinedAndAcceptedCallsResumeThePodcastWhereItStopped() throws {
            let tmp = try Support.makeTemp("s8")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let player = try Client.startPlayer(sandbox, file: file, ["--mode", "spokenAudio"])
            defer { _ = player.terminate() }

            // Declined (short, but longer than the podcast's fade-out: a call that ends
            // within the fade is no interruption, R42), accepted (long).
            for (round, seconds) in [(1, 1.0), (2, 3.0)] {
                let (began, ended) = try call(sandbox, player: player, seconds: seconds, notify: true, round: round)
                // R11: the policy had stopped the stream before began arrived.
                #expect(began["stream"] as? String == "paused", "began: \(began)")
                #expect(began["reason"] as? String == "default")
                #expect(ended["shouldResume"] as? Bool == true, "ended: \(ended)")
                let resumed = try Client.waitFor(player, "resumed #\(round)", count: round, Client.event("resumed"))
                // Where it stopped: not a frame played between the pause and the resume.
                #expect(Client.int(resumed[round - 1], "position") == Client.int(began, "position"), "\(Client.log(player))")
                try sandbox.waitUntil(timeout: 30, "the podcast to play again after call \(round)") {
                    try Client.session(sandbox, application: "pw-session play")?["playing"] as? Bool == true
                }
                // And it is heard again: its samples reach the headphones.
                let recorder = try Recorder(sandbox: sandbox, sink: "headphones")
                try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
                let heard = try recorder.stop()
                #expect(heard.nonZeroSampleCount > 0, "after call \(round) no sample of the podcast reached the headphones")
            }
        }

        @Test func r14WithoutNotifyTheInterruptedPlayerStaysPaused() throws {
            let tmp = try Support.makeTemp("r14")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let player = try Client.startPlayer(sandbox, file: file)
            defer { _ = player.terminate() }

            let (began, ended) = try call(sandbox, player: player, seconds: 1.0, notify: false, round: 1)
            #expect(began["stream"] as? String == "paused")
            #expect(ended["shouldResume"] as? Bool == false, "ended: \(ended)")
            try Client.waitFor(player, "the player to stay paused", Client.event("paused"))
            #expect(Client.objects(player).filter(Client.event("resumed")).isEmpty, "\(Client.log(player))")
            let s = try Client.session(sandbox, application: "pw-session play")
            #expect(s?["playing"] as? Bool == false, "\(String(describing: s))")
        }

        // MARK: setActive errors

        @Test func r6ActivationDuringACallFailsWithInsufficientPriority() throws {
            let tmp = try Support.makeTemp("r6")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 10)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let call = try Client.spawn(sandbox, ["interrupt", "--as", "call", "--duration", "600", "--json"])
            defer { _ = call.terminate() }
            try Client.waitFor(call, "the call to be active", Client.event("active"))

            let r = try Client.run(sandbox, ["play", file, "--json"])
            #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("insufficientPriority"), "\(r.stderr)")
            #expect(!r.stdout.contains("\"playing\""), "\(r.stdout)")
        }

        @Test func r40SetActiveWithoutThePolicyFailsWithMediaServicesFailed() throws {
            let tmp = try Support.makeTemp("nomodule")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 2)
            let sandbox = try Client.sandbox(module: false)
            defer { sandbox.stop() }
            let r = try Client.run(sandbox, ["play", file])
            #expect(r.status == 1, "\(r.stdout) \(r.stderr)")
            #expect(r.stderr.contains("mediaServicesFailed"), "\(r.stderr)")
        }

        @Test func section4InvalidCombinationsAreRefusedWithoutARoundTrip() throws {
            let tmp = try Support.makeTemp("spec4")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 1)
            // No PipeWire at all: only a refusal made before connecting can name the rule.
            var env = ProcessInfo.processInfo.environment
            env["XDG_RUNTIME_DIR"] = tmp
            env["PIPEWIRE_RUNTIME_DIR"] = tmp
            env.removeValue(forKey: "PIPEWIRE_REMOTE")
            let exe = try Support.pwSessionPath()
            let cases: [([String], String)] = [
                (["--category", "record", "--options", "duckOthers"], "incompatibleCategory"),
                (["--category", "playback", "--mode", "voiceChat"], "incompatibleCategory"),
                (["--category", "playAndRecord", "--mode", "voicePrompt"], "incompatibleCategory"),
                (["--category", "loud"], "badParam"),
                (["--category", "playback", "--options", "mixWithOthers,tuba"], "badParam"),
            ]
            for (args, code) in cases {
                let r = try Support.runOutside([exe, "play", file] + args, environment: env, in: tmp)
                #expect(r.status == 2, "\(args): \(r.stderr)")
                #expect(r.stderr.contains(code), "\(args): \(r.stderr)")
            }
        }

        // MARK: Routes

        @Test func r31UnpluggingTheHeadphonesPausesThePlayerAndPluggingInDoesNotResumeIt() throws {
            let tmp = try Support.makeTemp("r31")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 120)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let player = try Client.startPlayer(sandbox, file: file)
            defer { _ = player.terminate() }

            try sandbox.removeDevice(named: "headphones")
            let lost = try Client.waitFor(player, "routeChange oldDeviceUnavailable",
                                          Client.event("routeChange", ["reason": "oldDeviceUnavailable"]))
            #expect((lost[0]["previousOutputs"] as? String ?? "").contains("headphones"), "\(lost[0])")
            try Client.waitFor(player, "the player to pause", Client.event("paused"))

            try sandbox.addDevice(.headphones)
            try Client.waitFor(player, "routeChange newDeviceAvailable",
                               Client.event("routeChange", ["reason": "newDeviceAvailable"]))
            #expect(Client.objects(player).filter(Client.event("resumed")).isEmpty, "\(Client.log(player))")
            let s = try Client.session(sandbox, application: "pw-session play")
            #expect(s?["playing"] as? Bool == false, "\(String(describing: s))")
        }
    }
}

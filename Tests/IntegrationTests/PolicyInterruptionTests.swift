import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// R1, R4, R10, R14, R15, S2, S4, S6 on the live graph: pauses measured on the
    /// headphones' monitor (the interrupter plays on the speaker unless noted).
    @Suite(.serialized)
    struct PolicyInterruptionTests {
        /// Non-zero samples recorded between two byte marks of a recording (s16 stereo, 44-byte header).
        static func nonZero(_ wav: WAVFile, from a: Int, to b: Int) -> Int {
            let lo = max(0, (a - 44) / 2), hi = min(wav.samples.count, max(0, (b - 44) / 2))
            guard lo < hi else { return 0 }
            return wav.samples[lo..<hi].reduce(0) { $0 + ($1 != 0 ? 1 : 0) }
        }

        static func interrupted(_ sandbox: Sandbox, _ node: Int) throws -> Bool {
            try sandbox.sessionState(ofStream: node)?["interrupted"] as? Bool == true
        }

        static func running(_ sandbox: Sandbox, _ node: Int) throws -> Bool {
            Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Node")
                .first { $0["id"] as? Int == node }.flatMap(Sandbox.state) == "running"
        }

        /// Music (or `victim`) on the headphones is paused while `interrupter` plays and resumes after it.
        /// Returns the samples recorded while paused and the music's level before and after.
        static func pauseAndResume(victim: [String] = [], victimEnvironment: [String: String] = [:],
                                   interrupter: (String) -> [String], environment: [String: String] = [:])
            throws -> (paused: Int, window: Int, before: Double, after: Double) {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let other = try tone(in: sandbox, seconds: 3, frequency: 660, name: "call.wav")
            let recorder = try Recorder(sandbox: sandbox, sink: "headphones")
            let argv = (victim.isEmpty ? ["pw-play", "--media-role", "Music"] : victim) + [music]
            let (player, node) = try sandbox.startPlayer(argv, environment: victimEnvironment, on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            let beforeMark = recorder.mark

            let call = try sandbox.spawn(interrupter(other), environment: environment)
            try sandbox.waitUntil(timeout: 10, "the music to be interrupted") { try interrupted(sandbox, node) }
            // The interruption is published after the pause (R11); what the recorder
            // writes lags the graph by a few cycles: start counting 0.1 s later.
            try sandbox.waitForMoreRecording(recorder, seconds: 0.1)
            let pausedFrom = recorder.mark
            // One second inside the call (3 s long): the music resumes as soon as the
            // call's stream goes, before its process has exited.
            try sandbox.waitForMoreRecording(recorder, seconds: 1.0)
            let pausedTo = recorder.mark
            if !call.isRunning { Issue.record("the interrupter ended inside the measured window") }
            try sandbox.waitUntil(timeout: 15, "the interrupter to end") { !call.isRunning }
            try sandbox.waitUntil(timeout: 10, "the music to resume") {
                try !interrupted(sandbox, node) && running(sandbox, node)
            }
            // Its fade-in (R42, 500 ms) and its level after it.
            try sandbox.waitForMoreRecording(recorder, seconds: 1.2)
            let afterMark = recorder.mark
            let wav = try recorder.stop()
            let levels = Levels(blocks: wav.blockLevels())
            let block = 1024 * 4
            let before = levels.median((beforeMark - 44) / block - 10..<(beforeMark - 44) / block - 1)
            let after = levels.median((afterMark - 44) / block - 10..<(afterMark - 44) / block - 1)
            let paused = nonZero(wav, from: pausedFrom, to: pausedTo)
            print("interruption: \(paused) non-zero samples in \((pausedTo - pausedFrom) / 4) frames while paused; " +
                  String(format: "music %.2f dB before, %.2f dB after", before, after))
            return (paused, (pausedTo - pausedFrom) / 4, before, after)
        }

        /// R7: a call program that has quit (its client is gone) can start no follow-up
        /// stream, so the music is given back at once, not after the grace period (here a
        /// minute long: waiting for it would fail the test).
        @Test func r7ACallWhoseProgramQuitGivesTheMusicBackWithoutTheGracePeriod() throws {
            var options = SandboxOptions()
            options.moduleArguments = ["resume.grace-ms": "60000"]
            let sandbox = try Sandbox.start(options)
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let other = try tone(in: sandbox, seconds: 1, frequency: 660, name: "call.wav")
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            let call = try sandbox.spawn(["pw-play", "--media-role", "Phone", "--target", "speaker", other])
            try sandbox.waitUntil(timeout: 10, "the music to be interrupted") { try Self.interrupted(sandbox, node) }
            try sandbox.waitUntil(timeout: 15, "the call's program to exit") { !call.isRunning }
            try sandbox.waitUntil(timeout: 15, "the music to play again, well within the grace period") {
                try !Self.interrupted(sandbox, node) && Self.running(sandbox, node)
            }
        }

        @Test func r10LegacyPhoneCallPausesTheMusicAndItResumesAfterTheCall() throws {
            let r = try Self.pauseAndResume(interrupter: { ["pw-play", "--media-role", "Phone", "--target", "speaker", $0] })
            #expect(r.window > 0)
            #expect(r.paused == 0)
            #expect(abs(r.after - r.before) <= 0.5)
        }

        /// R15 with a program that pauses its own stream during the call (a player paused
        /// through its controls, a PulseAudio program that corks): the policy's resume at
        /// the end of the call undoes only its own pause, and the program's own start plays
        /// at once. Before, the resume turned the node on while the program had it stopped;
        /// the Start the daemon sent was skipped by the program's side, its own start later
        /// changed nothing in the daemon, and it stayed silent (Firefox, now and then).
        @Test func r15AProgramThatPausedItselfDuringTheCallPlaysWhenItStartsAgain() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let call = try tone(in: sandbox, seconds: 2, frequency: 660, name: "call.wav")
            let recorder = try Recorder(sandbox: sandbox, sink: "headphones")
            let fixture = Support.checkoutRoot + "/build/meson/audio-session-pausing-player"
            let (player, node) = try sandbox.startPlayer([fixture, "Music", "headphones"], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }

            let caller = try sandbox.spawn(["pw-play", "--media-role", "Phone", "--target", "speaker", call])
            defer { caller.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitUntil(timeout: 10, "the music to be interrupted") { try Self.interrupted(sandbox, node) }
            try sandbox.waitUntil(timeout: 10, "the music's fade-out to end in its pause") { try !Self.running(sandbox, node) }
            // The program pauses its stream while the policy holds it paused: nothing in the
            // graph changes, the node is already stopped.
            kill(player.pid, SIGUSR1)
            try sandbox.waitUntil(timeout: 10, "the player to pause its stream") { player.logTail().contains("paused") }
            try sandbox.waitUntil(timeout: 15, "the call to end") { !caller.isRunning }
            try sandbox.waitUntil(timeout: 10, "the interruption to end") { try !Self.interrupted(sandbox, node) }
            #expect(try !Self.running(sandbox, node), "the node runs while its program still has it paused")

            kill(player.pid, SIGUSR2)
            try sandbox.waitUntil(timeout: 10, "the player to start its stream") { player.logTail().contains("playing") }
            let started = recorder.mark
            try sandbox.waitUntil(timeout: 10, "the music to reach the headphones again") {
                recorder.nonZeroSamples(from: started, to: recorder.mark) > 0
            }
            _ = try recorder.stop()
        }

        @Test func s2DeclaredVoiceChatCallPausesTheMusicAndItResumesAfterTheCall() throws {
            let declaration = "{ audio.session.category=playAndRecord audio.session.mode=voiceChat " +
                "audio.session.deactivation=notifyOthersOnDeactivation }"
            let r = try Self.pauseAndResume(interrupter: { ["pw-play", "--target", "speaker", $0] },
                                            environment: ["PIPEWIRE_PROPS": declaration])
            #expect(r.window > 0)
            #expect(r.paused == 0)
            #expect(abs(r.after - r.before) <= 0.5)
        }

        @Test func r4S4APromptPausesAPodcastAndItResumesAfterThePrompt() throws {
            let podcast = "{ audio.session.category=playback audio.session.mode=spokenAudio }"
            let r = try Self.pauseAndResume(victim: ["pw-play"], victimEnvironment: ["PIPEWIRE_PROPS": podcast],
                                            interrupter: { ["pw-play", "--media-role", "Navigation", "--target", "speaker", $0] })
            #expect(r.window > 0)
            #expect(r.paused == 0)
            #expect(abs(r.after - r.before) <= 0.5)
        }

        /// R1: the second non-mixable music program interrupts the first; S6: the first
        /// does not resume when the second ends without notifyOthersOnDeactivation.
        @Test func r1S6SecondMusicInterruptsTheFirstWhichDoesNotResume() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let a = try tone(in: sandbox, seconds: 60, name: "a.wav")
            let b = try tone(in: sandbox, seconds: 1, frequency: 660, name: "b.wav")
            let (first, nodeA) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", a], on: "headphones")
            defer { first.terminate(signal: SIGKILL, timeout: 2) }
            let second = try sandbox.spawn(["pw-play", "--media-role", "Music", "--target", "speaker", b])
            try sandbox.waitUntil(timeout: 10, "A to be interrupted") { try Self.interrupted(sandbox, nodeA) }
            #expect(try !Self.running(sandbox, nodeA))
            try sandbox.waitUntil(timeout: 15, "B to end") { !second.isRunning }
            // B's session is gone once its client is: every decision about it is made.
            try sandbox.waitUntil(timeout: 10, "B's session to go") {
                try sandbox.sessionMetadata().filter { $0.key == "audio-session.session" }.count == 1
            }
            let recorder = try Recorder(sandbox: sandbox, sink: "headphones")
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            let wav = try recorder.stop()
            print("S6: after B ended, \(wav.nonZeroSampleCount) non-zero samples of A on the headphones")
            #expect(wav.nonZeroSampleCount == 0)
            let state = try sandbox.sessionState(ofStream: nodeA)
            #expect(state?["playing"] as? Bool == false, "\(String(describing: state))")
            #expect(try !Self.running(sandbox, nodeA))
        }
    }
}

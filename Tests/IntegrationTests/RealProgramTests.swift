import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Programs from Debian as people run them, not our own fixtures: a media player
    /// (mpv, over PipeWire and over PulseAudio), GStreamer pipelines (pulsesink and
    /// pipewiresink, the role set through `stream-properties`) and a speech synthesizer
    /// (espeak-ng) as the prompt. Headphone loss (R30), a call (R10, R15), a prompt over
    /// a podcast (S4) and ducking (R3).
    @Suite(.serialized)
    struct RealProgramTests {
        static let mpv = ["mpv", "--no-config", "--no-video", "--no-terminal", "--really-quiet"]

        /// A GStreamer pipeline playing the file given as its last argument into `sink`.
        static func gst(_ sink: String) -> [String] {
            ["sh", "-c", "exec gst-launch-1.0 -q filesrc location=\"$0\" ! wavparse ! audioconvert ! audioresample ! " +
                "\(sink) stream-properties=\"props,media.role=Music\""]
        }

        /// `pw-session run` with a declaration, then the program.
        static func wrapped(_ declaration: [String], _ program: [String]) throws -> [String] {
            [try Support.pwSessionPath(), "run"] + declaration + ["--"] + program
        }

        static func expectNoLeak(_ player: @escaping (String) -> [String], _ name: String) throws {
            let leaks = try PolicyHeadphoneLossTests.run(player: player, module: true, trials: 3)
            print("\(name), module loaded: non-zero samples on the speaker per trial: \(leaks)")
            #expect(leaks.count == 3)
            #expect(leaks.allSatisfy { $0 == 0 }, "\(name): leaked samples per trial: \(leaks)")
        }

        @Test func r30MpvOverPipeWireLeaksNothingWhenTheHeadphonesGo() throws {
            try Self.expectNoLeak({ Self.mpv + ["--ao=pipewire", $0] }, "mpv --ao=pipewire")
        }

        @Test func r30MpvOverPulseLeaksNothingWhenTheHeadphonesGo() throws {
            try Self.expectNoLeak({ Self.mpv + ["--ao=pulse", $0] }, "mpv --ao=pulse")
        }

        @Test func r30GStreamerPulsesinkLeaksNothingWhenTheHeadphonesGo() throws {
            try Self.expectNoLeak({ Self.gst("pulsesink") + [$0] }, "gst-launch-1.0 … pulsesink")
        }

        @Test func r30GStreamerPipewiresinkLeaksNothingWhenTheHeadphonesGo() throws {
            try Self.expectNoLeak({ Self.gst("pipewiresink") + [$0] }, "gst-launch-1.0 … pipewiresink")
        }

        @Test func r10R15ACallPausesMpvAndItPlaysAgainAfterTheCall() throws {
            let r = try PolicyInterruptionTests.pauseAndResume(
                victim: Self.mpv + ["--ao=pulse"],
                interrupter: { ["pw-play", "--media-role", "Phone", "--target", "speaker", $0] })
            #expect(r.window > 0)
            #expect(r.paused == 0)
            #expect(abs(r.after - r.before) <= 0.5)
        }

        @Test func r10R15ACallPausesAGStreamerPipelineAndItPlaysAgainAfterTheCall() throws {
            let r = try PolicyInterruptionTests.pauseAndResume(
                victim: Self.gst("pipewiresink"),
                interrupter: { ["pw-play", "--media-role", "Phone", "--target", "speaker", $0] })
            #expect(r.window > 0)
            #expect(r.paused == 0)
            #expect(abs(r.after - r.before) <= 0.5)
        }

        /// S4 with the documented recipe: a podcast played by a PulseAudio program wrapped
        /// by `pw-session run` (PULSE_PROP puts its declaration on its client as well as its
        /// stream), a spoken prompt from espeak-ng wrapped as a voice prompt. The podcast
        /// pauses under the prompt and the policy resumes it when the prompt is over: the
        /// prompt notifies others by default, and nobody but the policy can resume a wrapped
        /// program (R15).
        @Test func s4R15ASpokenPromptPausesAWrappedPulsePodcastWhichResumesAfterIt() throws {
            let podcast = try Self.wrapped(["--category", "playback", "--mode", "spokenAudio"], ["paplay"])
            // One clause: espeak-ng opens a stream per clause, and a gap between two clauses
            // longer than the grace period (a loaded machine) rightly lets the podcast play in
            // it, which this test's window would count as a leak. Several clauses are
            // `interruptionsOfAPodcastUnderSpeech`'s subject.
            let sentence = "In three hundred meters at the roundabout take the second exit and continue on the main road"
            let r = try PolicyInterruptionTests.pauseAndResume(
                victim: podcast,
                interrupter: { _ in
                    (try? Self.wrapped(["--category", "playback", "--mode", "voicePrompt",
                                        "--options", "interruptSpokenAudioAndMixWithOthers,duckOthers"],
                                       ["espeak-ng", "-s", "140", sentence])) ?? ["false"]
                },
                environment: ["PULSE_SINK": "speaker"])
            #expect(r.window > 0)
            #expect(r.paused == 0)
            #expect(abs(r.after - r.before) <= 0.5)
        }

        /// The interruptions a spoken prompt gives a wrapped podcast: espeak-ng opens a
        /// stream per phrase, milliseconds apart. Returns the podcast's began and ended events.
        static func interruptionsOfAPodcastUnderSpeech(moduleArguments: [String: String]) throws -> (began: Int, ended: Int) {
            var options = SandboxOptions()
            options.moduleArguments = moduleArguments
            let sandbox = try Sandbox.start(options)
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "podcast.wav")
            let monitor = try sandbox.spawn(["pw-metadata", "-n", "audio-session", "-m"])
            let podcast = try Self.wrapped(["--category", "playback", "--mode", "spokenAudio"], ["paplay", music])
            let (player, node) = try sandbox.startPlayer(podcast, on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            guard let session = (try sandbox.sessionState(ofStream: node)?["session"] as? [String: Any])?["id"] as? Int else {
                throw TestFailure("the podcast has no published session")
            }
            let prompt = try Self.wrapped(["--category", "playback", "--mode", "voicePrompt",
                                           "--options", "interruptSpokenAudioAndMixWithOthers,duckOthers"],
                                          ["espeak-ng", "-s", "160", "Turn left. Then, after the bridge, keep right."])
            let r = try sandbox.run(prompt, environment: ["PULSE_SINK": "speaker"], timeout: 30)
            #expect(r.status == 0, "\(r.stderr)")
            try sandbox.waitUntil(timeout: 10, "the podcast to play again") {
                try sandbox.sessionState(ofStream: node)?["interrupted"] as? Bool == false &&
                    PolicyInterruptionTests.running(sandbox, node)
            }
            let events = (monitor.stdoutPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "")
                .split(separator: "\n")
                .filter { $0.contains("audio-session.event") && $0.contains("\"kind\":\"client\",\"id\":\(session)}") }
            let began = events.filter { $0.contains("\"phase\":\"began\"") }.count
            let ended = events.filter { $0.contains("\"phase\":\"ended\"") }.count
            print("podcast under espeak-ng (\(moduleArguments)): \(began) began, \(ended) ended")
            return (began, ended)
        }

        /// R13 and the grace period: the podcast is interrupted once for the whole prompt and
        /// resumed once after it. Without the grace period and without fades (the control:
        /// a gap between phrases shorter than the fade-out ends the interruption mid-fade,
        /// R42) it is given back and taken again between the phrases.
        @Test func r13AMultiStreamSpeechPromptInterruptsThePodcastOnce() throws {
            let control = try Self.interruptionsOfAPodcastUnderSpeech(
                moduleArguments: ["resume.grace-ms": "0", "fade.out-ms": "0", "fade.in-ms": "0"])
            #expect(control.began > 1, "without a grace period: \(control)")
            let graced = try Self.interruptionsOfAPodcastUnderSpeech(moduleArguments: [:])
            #expect(graced.began == 1, "\(graced)")
            #expect(graced.ended == 1, "\(graced)")
        }
    }
}

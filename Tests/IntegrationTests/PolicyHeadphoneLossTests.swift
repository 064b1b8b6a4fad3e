import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// R30 / S7: headphones removed while a stream plays on them. What reaches the
    /// speaker is recorded from its monitor until WirePlumber has relinked the
    /// orphaned stream to the speaker and another 0.3 s has been recorded.
    @Suite(.serialized)
    struct PolicyHeadphoneLossTests {
        static let trials = 20

        /// One trial: plug the headphones in (if needed), play on them, unplug them;
        /// returns the non-zero samples that reached the speaker.
        static func trial(_ sandbox: Sandbox, player argv: [String]) throws -> Int {
            if try sandbox.nodeID(named: "headphones") == nil {
                try sandbox.addDevice(.headphones)
            }
            try sandbox.waitUntil(timeout: 15, "headphones to be the default sink") {
                sandbox.defaultSinkName() == "headphones"
            }
            let recorder = try Recorder(sandbox: sandbox, sink: "speaker")
            let (player, node) = try sandbox.startPlayer(argv, on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }

            try sandbox.removeDevice(named: "headphones")
            // WirePlumber moves the orphaned stream to the speaker: wait for that link.
            try sandbox.waitForOrphanOnTheSpeaker(node)
            try sandbox.waitForMoreRecording(recorder, seconds: 0.3)
            let wav = try recorder.stop()
            return wav.nonZeroSampleCount
        }

        static func run(player: @escaping (String) -> [String], module: Bool, trials: Int) throws -> [Int] {
            let sandbox = try Sandbox.start(SandboxOptions(loadModule: module))
            defer { sandbox.stop() }
            let file = try tone(in: sandbox, seconds: 60, name: "music.wav")
            var leaks: [Int] = []
            for _ in 0..<trials { leaks.append(try trial(sandbox, player: player(file))) }
            return leaks
        }

        @Test func r30HeadphonesRemovedWhilePwPlayPlaysLeaksNothingToTheSpeaker() throws {
            let leaks = try Self.run(player: { ["pw-play", "--media-role", "Music", $0] }, module: true, trials: Self.trials)
            print("pw-play, module loaded: non-zero samples on speaker per trial: \(leaks)")
            #expect(leaks.count == Self.trials)
            #expect(leaks.allSatisfy { $0 == 0 }, "leaked samples per trial: \(leaks)")
        }

        @Test func r30HeadphonesRemovedWhilePaplayPlaysLeaksNothingToTheSpeaker() throws {
            let leaks = try Self.run(player: { ["paplay", "--property=media.role=Music", $0] }, module: true, trials: Self.trials)
            print("paplay, module loaded: non-zero samples on speaker per trial: \(leaks)")
            #expect(leaks.count == Self.trials)
            #expect(leaks.allSatisfy { $0 == 0 }, "leaked samples per trial: \(leaks)")
        }

        /// The control: stock PipeWire + WirePlumber move the stream to the speaker and it plays.
        @Test func withoutTheModuleThePwPlayStreamLeaksToTheSpeaker() throws {
            let leaks = try Self.run(player: { ["pw-play", "--media-role", "Music", $0] }, module: false, trials: 3)
            print("pw-play, no module: non-zero samples on speaker per trial: \(leaks)")
            #expect(leaks.allSatisfy { $0 > 0 }, "leaked samples per trial: \(leaks)")
        }

        @Test func withoutTheModuleThePaplayStreamLeaksToTheSpeaker() throws {
            let leaks = try Self.run(player: { ["paplay", "--property=media.role=Music", $0] }, module: false, trials: 3)
            print("paplay, no module: non-zero samples on speaker per trial: \(leaks)")
            #expect(leaks.allSatisfy { $0 > 0 }, "leaked samples per trial: \(leaks)")
        }

        /// The paused stream stays paused (R31: no automatic resume) and its session says why.
        @Test func r31TheOrphanedStreamStaysPausedAndGetsARouteChange() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let file = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", file], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.removeDevice(named: "headphones")
            try sandbox.waitUntil(timeout: 10, "a routeChange oldDeviceUnavailable for the stream") {
                try sandbox.sessionMetadata().contains {
                    $0.key == "audio-session.event" && $0.value.contains("\"oldDeviceUnavailable\"") &&
                        $0.value.contains("\"id\":\(node)}")
                }
            }
            try sandbox.addDevice(.headphones)
            // The policy has seen them back (WirePlumber 0.4.13 does not always make them the
            // default sink again, and which sink is default does not matter here).
            try sandbox.waitUntil(timeout: 10, "the headphones back in the policy's route") {
                try sandbox.globalOutputs().contains { $0["uid"] as? String == "headphones" }
            }
            let state = try sandbox.sessionState(subject: node)
            #expect(state?["playing"] as? Bool == false, "\(String(describing: state))")
            let n = Graph.streamNode(try sandbox.dump(), pid: player.pid)
            #expect(n.flatMap(Sandbox.state) != "running")
        }
    }
}

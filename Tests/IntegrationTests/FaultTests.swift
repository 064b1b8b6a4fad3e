import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Programs and the session manager die without warning (kill -9): the policy ends
    /// what they caused and never leaves a user's volume changed (R7, R15, R41).
    @Suite(.serialized)
    struct FaultTests {
        static func interrupted(_ sandbox: Sandbox, _ node: Int) throws -> Bool {
            try sandbox.sessionState(ofStream: node)?["interrupted"] as? Bool == true
        }

        @Test func r15APhoneClientKilledMidCallLetsTheMusicResume() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let call = try tone(in: sandbox, seconds: 60, frequency: 660, name: "call.wav")
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            let phone = try sandbox.spawn(["pw-play", "--media-role", "Phone", call])
            try sandbox.waitUntil(timeout: 10, "the call to interrupt the music") { try Self.interrupted(sandbox, node) }
            phone.terminate(signal: SIGKILL, timeout: 5)
            try sandbox.waitUntil(timeout: 10, "the music to resume after the call's process was killed") {
                try !Self.interrupted(sandbox, node) && PolicyInterruptionTests.running(sandbox, node)
            }
            #expect(sandbox.daemonProcesses.allSatisfy { $0.isRunning })
        }

        /// Music on the headphones at the user's volume 0.5 (saved by WirePlumber), ducked by a
        /// navigation prompt that plays on. Returns the music's player and node, the prompt, and
        /// what the user set as it was before the duck: WirePlumber's saved state of the music,
        /// the stream's volume (wpctl) and its channelVolumes.
        static func duckedMusicAtTheUsersVolume(_ sandbox: Sandbox) throws
            -> (player: ChildProcess, node: Int, prompt: ChildProcess, savedBefore: Data?, volume: String, channels: String) {
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let promptFile = try tone(in: sandbox, seconds: 60, frequency: 880, name: "prompt.wav")
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            try sandbox.waitUntil(timeout: 10, "WirePlumber to save the music's state") { PolicyDuckTests.restoreStream(sandbox) != nil }
            let savedDefault = PolicyDuckTests.restoreStream(sandbox)
            _ = try sandbox.run(["wpctl", "set-volume", String(node), "0.5"])
            try sandbox.waitUntil(timeout: 10, "WirePlumber to save the user's volume") {
                PolicyDuckTests.restoreStream(sandbox) != savedDefault
            }
            let savedBefore = PolicyDuckTests.restoreStream(sandbox)
            let volume = try ClientRestartTests.streamVolume(sandbox, node: node)
            let channels = try PolicyDuckTests.channelVolumes(sandbox, node)
            let prompt = try sandbox.spawn(["pw-play", "--media-role", "Navigation", promptFile])
            try sandbox.waitUntil(timeout: 10, "the music to be ducked") {
                (try sandbox.sessionState(subject: node)?["duckGain"] as? Double).map { $0 < 0.99 } == true
            }
            return (player, node, prompt, savedBefore, volume, channels)
        }

        @Test func r41WirePlumberKilledMidDuckLeavesTheUsersVolumeAsSetAfterItsRestart() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let (player, node, navigation, savedBefore, volumeBefore, channelsBefore) = try Self.duckedMusicAtTheUsersVolume(sandbox)
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            defer { navigation.terminate(signal: SIGKILL, timeout: 2) }
            // Killed, and started again by its service: the sandbox's generation of WirePlumber.
            try sandbox.restartWirePlumber(signal: SIGKILL)
            try sandbox.waitUntil(timeout: 30, "wireplumber to come back") {
                Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Client").contains {
                    (($0["info"] as? [String: Any])?["props"] as? [String: Any])?["application.name"] as? String == "WirePlumber"
                }
            }
            // WirePlumber's links may have gone with it (the prompt stalls, its duck ends):
            // whatever state the duck is in, the user's volume is the one the user set.
            let duckAfterRestart = try sandbox.sessionState(subject: node)?["duckGain"] as? Double
            #expect(try PolicyDuckTests.channelVolumes(sandbox, node) == channelsBefore)
            navigation.terminate(signal: SIGKILL, timeout: 5)
            try sandbox.waitUntil(timeout: 10, "the duck to end") {
                (try sandbox.sessionState(subject: node)?["duckGain"] as? Double) == 1.0
            }
            #expect(try ClientRestartTests.streamVolume(sandbox, node: node) == volumeBefore)
            #expect(try PolicyDuckTests.channelVolumes(sandbox, node) == channelsBefore)
            let saved = PolicyDuckTests.restoreStream(sandbox)
            #expect(saved == savedBefore, "WirePlumber's saved state: \(saved.map { String(decoding: $0, as: UTF8.self) } ?? "none")")
            print("fault: duck gain \(duckAfterRestart.map { String($0) } ?? "none") after the restart; music volume \(volumeBefore) before, \(try ClientRestartTests.streamVolume(sandbox, node: node)) after; channelVolumes \(channelsBefore)")
        }

        /// R41: PipeWire itself dies (kill -9) while the music is ducked, and is started
        /// again with the same saved state: no ducked value was saved as the music's
        /// volume, and a new music stream starts at the volume the user set.
        @Test func r41PipeWireKilledMidDuckSavesNoDuckedVolume() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let (player, _, navigation, savedBefore, _, _) = try Self.duckedMusicAtTheUsersVolume(sandbox)
            let music = sandbox.directory + "/tmp/music.wav"
            // Mid-ramp or ducked: the daemon dies, and its clients with it.
            try sandbox.restartPipeWire(signal: SIGKILL)
            player.terminate(signal: SIGKILL, timeout: 2)
            navigation.terminate(signal: SIGKILL, timeout: 2)
            let saved = PolicyDuckTests.restoreStream(sandbox)
            #expect(saved == savedBefore, "saved state after the crash: \(saved.map { String(decoding: $0, as: UTF8.self) } ?? "none")")
            // A new music stream gets the user's volume back, not a ducked one.
            let (again, newNode) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            defer { again.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitUntil(timeout: 10, "WirePlumber to restore the music's volume") {
                try ClientRestartTests.streamVolume(sandbox, node: newNode) == "Volume: 0.50"
            }
            // Its session's state may wait for the publishing interval (longer while the graph
            // is busy): read once it is published.
            var published: [String: Any]?
            try sandbox.waitUntil(timeout: 10, "the new music's session to be published") {
                published = try sandbox.sessionState(subject: newNode)
                return published != nil
            }
            #expect(published?["duckGain"] as? Double == 1.0, "\(String(describing: published))")
        }
    }
}

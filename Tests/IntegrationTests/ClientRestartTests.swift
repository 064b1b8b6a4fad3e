import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    @Suite(.serialized)
    struct ClientRestartTests {
        /// Stops pipewire, wireplumber and pipewire-pulse and starts them again in the same
        /// sandbox, with the module and the virtual outputs.
        static func restartPipeWire(_ sandbox: Sandbox) throws {
            try sandbox.restartPipeWire()
        }

        static func streamVolume(_ sandbox: Sandbox, node: Int) throws -> String {
            let r = try sandbox.run(["wpctl", "get-volume", String(node)])
            return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        static func playerNode(_ sandbox: Sandbox) throws -> Int? {
            let s = try Client.session(sandbox, application: "pw-session play")
            return (s?["streams"] as? [NSNumber])?.first?.intValue
        }

        @Test func r40PipeWireRestartedUnderAPlayerLostResetReactivatedWithTheUsersVolume() throws {
            let tmp = try Support.makeTemp("r40")
            defer { Support.removeTemp(tmp) }
            let file = try Support.makeTone(in: tmp, seconds: 300)
            let sandbox = try Client.sandbox()
            defer { sandbox.stop() }
            let player = try Client.startPlayer(sandbox, file: file, ["--mode", "spokenAudio"])
            defer { _ = player.terminate() }

            // The user turns the player down.
            guard let node = try Self.playerNode(sandbox) else { throw TestFailure("no player stream") }
            #expect(try sandbox.run(["wpctl", "set-volume", String(node), "0.35"]).status == 0)
            try sandbox.waitUntil(timeout: 10, "the volume to apply") { try Self.streamVolume(sandbox, node: node) == "Volume: 0.35" }

            // WirePlumber's restore-stream has recorded it (it saves a moment later).
            let stateFile = sandbox.savedStreamStatePath
            try sandbox.waitUntil(timeout: 30, "WirePlumber to save the player's volume") {
                ((try? String(contentsOfFile: stateFile, encoding: .utf8)) ?? "").split(separator: "\n").contains {
                    // WirePlumber 0.4: `…:channelVolumes=0.04…`; 0.5: `…={"channelVolumes":[0.04…`.
                    let line = $0.replacingOccurrences(of: " ", with: "")
                    return line.hasPrefix("Output/Audio:") &&
                        (line.contains(":channelVolumes=0.04") || line.contains("\"channelVolumes\":[0.04"))
                }
            }

            try Self.restartPipeWire(sandbox)

            try Client.waitFor(player, "mediaServicesWereLost", timeout: 30, Client.event("mediaServicesWereLost"))
            try Client.waitFor(player, "mediaServicesWereReset", timeout: 30, Client.event("mediaServicesWereReset"))
            try Client.waitFor(player, "reactivation", timeout: 30, Client.event("resumed"))
            let events = Client.objects(player).compactMap { $0["event"] as? String }
            let lost = events.firstIndex(of: "mediaServicesWereLost"), reset = events.firstIndex(of: "mediaServicesWereReset")
            #expect(lost != nil && reset != nil && lost! < reset!, "\(events)")

            // Re-declared (the same category and mode) and playing again.
            try sandbox.waitUntil(timeout: 30, "the player to play again") {
                let s = try Client.session(sandbox, application: "pw-session play")
                return s?["playing"] as? Bool == true && s?["mode"] as? String == "spokenAudio" && s?["active"] as? Bool == true
            }
            guard let again = try Self.playerNode(sandbox) else { throw TestFailure("no player stream after the restart") }
            try sandbox.waitUntil(timeout: 10, "the user's volume on the new stream") {
                try Self.streamVolume(sandbox, node: again) == "Volume: 0.35"
            }
        }
    }
}

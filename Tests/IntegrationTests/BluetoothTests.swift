import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// A Bluetooth headset through PipeWire's own bluez5 plugin (in WirePlumber), against the
    /// fake BlueZ of data/fake-bluez.py on the sandbox's private system bus.
    @Suite(.serialized)
    struct BluetoothTests {
        /// The speaker alone beside the headset: what a laptop has when the headset goes.
        static func sandbox(module: Bool = true) throws -> Sandbox {
            var options = SandboxOptions(devices: [.speaker], loadModule: module)
            options.bluetooth = true
            options.fakeBluez = Support.checkoutRoot + "/data/fake-bluez.py"
            return try Sandbox.start(options)
        }

        static func headsetSink(_ sandbox: Sandbox) throws -> [String: Any]? {
            Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Node").first {
                (Sandbox.props($0)["node.name"] as? String)?.hasPrefix("bluez_output.") == true
            }
        }

        static func logs(_ sandbox: Sandbox) -> String {
            ["fake-bluez", "wireplumber"].map { name in
                let text = (try? String(contentsOfFile: sandbox.directory + "/logs/\(name).log", encoding: .utf8)) ?? ""
                return "\(name) log:\n" + text.split(separator: "\n").suffix(300).joined(separator: "\n")
            }.joined(separator: "\n")
        }

        /// The plugin makes the headset's A2DP sink from what the fake BlueZ says.
        @Test func theHeadsetIsARealBluez5Sink() throws {
            let sandbox = try Self.sandbox()
            defer { sandbox.stop() }
            do {
                try Self.fake(sandbox, "Connect")
                try sandbox.waitUntil(timeout: 20, "the headset's bluez_output sink") { try Self.headsetSink(sandbox) != nil }
            } catch {
                let objects = ((try? sandbox.dump()) ?? []).compactMap { o -> String? in
                    guard let t = o["type"] as? String, t.hasSuffix("Device") || t.hasSuffix("Node") else { return nil }
                    return "\(t) \(Sandbox.props(o)["device.name"] ?? Sandbox.props(o)["node.name"] ?? "?") \(Sandbox.props(o)["device.profile"] ?? "")"
                }
                let card = Sandbox.objects((try? sandbox.dump()) ?? [], type: "PipeWire:Interface:Device").first.flatMap { $0["id"] as? Int }
                let params = card.map { (try? sandbox.run(["pw-cli", "enum-params", String($0), "EnumProfile"], timeout: 10).stdout) ?? "" } ?? ""
                let current = card.map { (try? sandbox.run(["pw-cli", "enum-params", String($0), "Profile"], timeout: 10).stdout) ?? "" } ?? ""
                Issue.record("\(error)\nobjects: \(objects)\nEnumProfile: \(params)\nProfile: \(current)\n\(Self.logs(sandbox))")
                return
            }
            let props = Sandbox.props(try #require(try Self.headsetSink(sandbox)))
            #expect(props["media.class"] as? String == "Audio/Sink")
            #expect(props["device.api"] as? String == "bluez5")
        }

        /// Connects the headset, makes it the default output (as when it connects) and plays
        /// music there (pw-play, no role declared beyond Music), with a recorder on the speaker.
        static func musicOnTheHeadset(_ sandbox: Sandbox) throws -> (sink: String, player: ChildProcess, node: Int, speaker: Recorder) {
            try fake(sandbox, "Connect")
            try sandbox.waitUntil(timeout: 20, "the headset's bluez_output sink") { try headsetSink(sandbox) != nil }
            guard let sink = Sandbox.props(try headsetSink(sandbox) ?? [:])["node.name"] as? String else {
                throw TestFailure("the headset's sink has no node.name")
            }
            try sandbox.waitUntil(timeout: 15, "the headset to be the default output") {
                _ = try sandbox.run(["pactl", "set-default-sink", sink], timeout: 10)
                return sandbox.defaultSinkName() == sink
            }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let recorder = try Recorder(sandbox: sandbox, sink: "speaker")
            let (player, node) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: sink)
            return (sink, player, node, recorder)
        }

        /// The fake's controls (org.audiosession.FakeBluez on /org/bluez).
        static func fake(_ sandbox: Sandbox, _ method: String, _ args: [String] = []) throws {
            try sandbox.fakeBluez(method, args)
        }

        /// R30, R31 with a Bluetooth headset, in each way BlueZ reports a loss: the device
        /// disconnects (Connected false, then its transport goes), only the transport goes,
        /// or the headset goes out of range (its objects removed). Nothing reaches the
        /// speaker, the policy reports the headset as the previous route, and the music stays
        /// paused when the headset comes back.
        @Test(arguments: ["device", "transport", "gone"])
        func r30R31AHeadsetLostWhileMusicPlaysLeaksNothingAndStaysPaused(_ how: String) throws {
            let sandbox = try Self.sandbox()
            defer { sandbox.stop() }
            let (sink, player, node, recorder) = try Self.musicOnTheHeadset(sandbox)
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitUntil(timeout: 10, "the headset in the policy's route, as bluetoothA2DP") {
                try sandbox.globalOutputs().contains { $0["uid"] as? String == sink && $0["type"] as? String == "bluetoothA2DP" }
            }
            let monitor = try Client.spawn(sandbox, ["monitor", "--json"])
            defer { _ = monitor.terminate(signal: SIGINT) }
            try sandbox.waitUntil(timeout: 30, "the monitor to listen") { Client.log(monitor).contains("monitoring") }

            try Self.fake(sandbox, "Disconnect", [how])
            try sandbox.waitUntil(timeout: 15, "the headset's sink to go") { try Self.headsetSink(sandbox) == nil }
            try sandbox.waitUntil(timeout: 15, "the orphaned stream to be moved to the speaker") {
                let d = try sandbox.dump()
                guard let speaker = Graph.nodeID(d, named: "speaker") else { return false }
                return Graph.links(d).contains { $0.output == node && $0.input == speaker }
            }
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            #expect(try !PolicyInterruptionTests.running(sandbox, node), "the music must not play on the speaker")

            try Self.fake(sandbox, "Connect")
            try sandbox.waitUntil(timeout: 20, "the headset's sink back") { try Self.headsetSink(sandbox) != nil }
            try sandbox.waitForMoreRecording(recorder, seconds: 0.5)
            let wav = try recorder.stop()
            #expect(wav.nonZeroSampleCount == 0, "non-zero samples on the speaker: \(wav.nonZeroSampleCount)")
            #expect(try !PolicyInterruptionTests.running(sandbox, node), "R31: the music stays paused when the headset returns")
            try Client.waitFor(monitor, "routeChange oldDeviceUnavailable with the headset as the previous route", timeout: 10) { o in
                let previous = (o["previousRoute"] as? [String: Any])?["outputs"] as? [[String: Any]] ?? []
                return o["type"] as? String == "routeChange" && o["reason"] as? String == "oldDeviceUnavailable"
                    && previous.contains { $0["uid"] as? String == sink && $0["type"] as? String == "bluetoothA2DP" }
            }
        }

        /// The control: without the module, WirePlumber moves the music to the speaker when
        /// the headset disconnects, and it is heard there (what the test above would see if
        /// the policy did nothing).
        @Test func withoutTheModuleALostHeadsetsMusicReachesTheSpeaker() throws {
            let sandbox = try Self.sandbox(module: false)
            defer { sandbox.stop() }
            let (_, player, _, recorder) = try Self.musicOnTheHeadset(sandbox)
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try Self.fake(sandbox, "Disconnect", ["device"])
            try sandbox.waitUntil(timeout: 15, "the music to be heard on the speaker") {
                recorder.nonZeroSamples(from: 0, to: recorder.mark) > 0
            }
            _ = try recorder.stop()
        }
    }
}

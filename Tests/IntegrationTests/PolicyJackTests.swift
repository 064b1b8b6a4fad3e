import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// a headphone jack pulled out keeps the sink node; the card's
    /// port becomes unavailable and the card switches to its speaker port. The
    /// card here is `audio-session-fake-jack` (Tests/Fixtures/fake-jack.c): an SPA
    /// Device exported to PipeWire the way WirePlumber exports ALSA cards, with a
    /// headphone and a speaker route, and its sink `fake-jack`. SIGUSR1 pulls the
    /// jack out, SIGUSR2 puts it back.
    @Suite(.serialized)
    struct PolicyJackTests {
        static let card = "fake-jack"

        static func startCard(_ sandbox: Sandbox) throws -> ChildProcess {
            let card = try sandbox.spawn([Support.checkoutRoot + "/build/meson/audio-session-fake-jack", Self.card])
            try sandbox.waitUntil(timeout: 15, "the fake card's sink") {
                guard card.isRunning else { throw TestFailure("the fake card exited: \(card.logTail())") }
                return try sandbox.nodeID(named: Self.card) != nil
            }
            return card
        }

        /// The fake card's Device object in pw-dump.
        static func cardDevice(_ sandbox: Sandbox) throws -> [String: Any]? {
            Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Device").first {
                Sandbox.props($0)["device.name"] as? String == "fake-jack-card"
            }
        }

        /// The name of the card's active output route, from pw-dump.
        static func activeRoute(_ sandbox: Sandbox) throws -> String? {
            let device = try cardDevice(sandbox)
            let params = (device?["info"] as? [String: Any])?["params"] as? [String: Any]
            let routes = params?["Route"] as? [[String: Any]]
            return routes?.first?["name"] as? String
        }

        /// The port type the policy gives the card's sink in the global route.
        static func portType(_ sandbox: Sandbox) throws -> String? {
            try sandbox.globalOutputs().first { $0["uid"] as? String == Self.card }?["type"] as? String
        }

        /// How many Route requests the card has had over PipeWire (its "route NAME set" lines).
        static func routeRequests(_ card: ChildProcess) -> Int {
            guard let path = card.stdoutPath, let log = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
            return log.split(separator: "\n").count { $0.hasPrefix("route ") && $0.hasSuffix(" set") }
        }

        /// Puts the jack in (SIGUSR2) or pulls it out (SIGUSR1), then waits for the card to be on
        /// its headphone or speaker route and for the session manager's answer: WirePlumber
        /// restores the volume of every newly active route with a Route request of its own. A
        /// person takes longer than that between pulling a jack and putting it back; a test that
        /// does not wait can put it back while WirePlumber still works on the pull, and its late
        /// request then switches the card to the speaker with the jack in (WirePlumber's doing,
        /// not the policy's).
        static func setJack(_ sandbox: Sandbox, card: ChildProcess, in jackIn: Bool) throws {
            let route = jackIn ? "analog-output-headphones" : "analog-output-speaker"
            let requests = routeRequests(card)
            card.signal(jackIn ? SIGUSR2 : SIGUSR1)
            try sandbox.waitUntil(timeout: 10, "the card on \(route) and WirePlumber's Route request for it") {
                guard card.isRunning else { throw TestFailure("the fake card exited: \(card.logTail())") }
                return try routeRequests(card) > requests && activeRoute(sandbox) == route
            }
        }

        /// The sequence number of the latest event (0: none yet).
        static func lastEventSeq(_ sandbox: Sandbox) throws -> Int {
            let event = try sandbox.sessionMetadata().first { $0.subject == 0 && $0.key == "audio-session.event" }
            return (event?.json?["seq"] as? Int) ?? 0
        }

        /// Whether the latest event, newer than `after`, is a routeChange with `reason` for the node's session.
        /// (Node ids are reused from trial to trial: the sequence number tells events apart.)
        static func routeChange(_ sandbox: Sandbox, node: Int, reason: String, after: Int) throws -> Bool {
            guard let e = try sandbox.sessionMetadata().first(where: { $0.subject == 0 && $0.key == "audio-session.event" })?.json,
                  (e["seq"] as? Int ?? 0) > after, e["type"] as? String == "routeChange", e["reason"] as? String == reason,
                  let session = e["session"] as? [String: Any] else { return false }
            return session["id"] as? Int == node
        }

        /// One trial: jack in, play on the card, pull the jack; returns the non-zero
        /// samples that reached the card's sink once the card has switched ports.
        static func trial(_ sandbox: Sandbox, card: ChildProcess, file: String, module: Bool) throws -> Int {
            if try activeRoute(sandbox) != "analog-output-headphones" {
                try setJack(sandbox, card: card, in: true)
            }
            if module {
                try sandbox.waitUntil(timeout: 10, "the card's sink seen as headphones") { try portType(sandbox) == "headphones" }
            }
            let (player, node) = try sandbox.startPlayer(
                ["pw-play", "--media-role", "Music", "--target", Self.card, file], on: Self.card)
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            let before = module ? try lastEventSeq(sandbox) : 0

            try setJack(sandbox, card: card, in: false)
            if module {
                // R30: the policy has paused the stream and told its session why.
                try sandbox.waitUntil(timeout: 10, "routeChange(oldDeviceUnavailable) for stream \(node)") {
                    try routeChange(sandbox, node: node, reason: "oldDeviceUnavailable", after: before)
                }
                #expect(try sandbox.sessionState(subject: node)?["playing"] as? Bool == false)
            }
            // What the card plays now goes to its speaker.
            let recorder = try Recorder(sandbox: sandbox, sink: Self.card)
            try sandbox.waitForMoreRecording(recorder, seconds: 0.3)
            return try recorder.stop().nonZeroSampleCount
        }

        static func run(module: Bool, trials: Int) throws -> [Int] {
            let sandbox = try Sandbox.start(SandboxOptions(devices: [.speaker], loadModule: module))
            defer { sandbox.stop() }
            let card = try startCard(sandbox)
            defer { card.terminate() }
            let file = try tone(in: sandbox, seconds: 60, name: "music.wav")
            var heard: [Int] = []
            for _ in 0..<trials { heard.append(try trial(sandbox, card: card, file: file, module: module)) }
            return heard
        }

        @Test func r30JackPulledOutPausesTheStreamBeforeTheSpeakerPortPlaysIt() throws {
            let heard = try Self.run(module: true, trials: 5)
            print("jack out, module loaded: non-zero samples on the card after the switch, per trial: \(heard)")
            #expect(heard.count == 5)
            #expect(heard.allSatisfy { $0 == 0 }, "per trial: \(heard)")
        }

        /// The control: without the module the stream goes on, through the card's speaker port.
        @Test func withoutTheModuleTheStreamPlaysOnThroughTheSpeakerPort() throws {
            let heard = try Self.run(module: false, trials: 2)
            print("jack out, no module: non-zero samples on the card after the switch, per trial: \(heard)")
            #expect(heard.allSatisfy { $0 > 0 }, "per trial: \(heard)")
        }

        /// R31/R32: the jack back in restores the headphone port; the paused stream stays paused.
        @Test func r31JackBackInRestoresTheHeadphonePortAndTheStreamStaysPaused() throws {
            let sandbox = try Sandbox.start(SandboxOptions(devices: [.speaker]))
            defer { sandbox.stop() }
            let card = try Self.startCard(sandbox)
            defer { card.terminate() }
            let file = try tone(in: sandbox, seconds: 60, name: "music.wav")
            _ = try Self.trial(sandbox, card: card, file: file, module: true)
            // trial() killed its player; play again and pull the jack, then put it back.
            try sandbox.waitUntil(timeout: 10, "the speaker port in the global route") { try Self.portType(sandbox) == "builtInSpeaker" }
            try Self.setJack(sandbox, card: card, in: true)
            try sandbox.waitUntil(timeout: 10, "the headphone port back") { try Self.portType(sandbox) == "headphones" }
            let (player, node) = try sandbox.startPlayer(
                ["pw-play", "--media-role", "Music", "--target", Self.card, file], on: Self.card)
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            try Self.setJack(sandbox, card: card, in: false)
            try sandbox.waitUntil(timeout: 10, "the stream paused") { try sandbox.sessionState(subject: node)?["playing"] as? Bool == false }
            try Self.setJack(sandbox, card: card, in: true)
            try sandbox.waitUntil(timeout: 10, "the session's route on the headphone port again") {
                let outputs = ((try sandbox.sessionState(subject: node)?["route"] as? [String: Any])?["outputs"] as? [[String: Any]]) ?? []
                return outputs.first?["type"] as? String == "headphones"
            }
            #expect(try sandbox.sessionState(subject: node)?["playing"] as? Bool == false)
            let recorder = try Recorder(sandbox: sandbox, sink: Self.card)
            try sandbox.waitForMoreRecording(recorder, seconds: 0.3)
            #expect(try recorder.stop().nonZeroSampleCount == 0, "the paused stream was heard after the jack came back")
        }

        /// R33: the user choosing the card's speaker port (pavucontrol, `pw-cli set-param … Route`)
        /// while the jack stays in is never a loss: the stream plays on.
        @Test func r33UserChoosingTheSpeakerPortIsNotALoss() throws {
            let sandbox = try Sandbox.start(SandboxOptions(devices: [.speaker]))
            defer { sandbox.stop() }
            let card = try Self.startCard(sandbox)
            defer { card.terminate() }
            let file = try tone(in: sandbox, seconds: 60, name: "music.wav")
            try sandbox.waitUntil(timeout: 10, "the card's sink seen as headphones") { try Self.portType(sandbox) == "headphones" }
            let (player, node) = try sandbox.startPlayer(
                ["pw-play", "--media-role", "Music", "--target", Self.card, file], on: Self.card)
            defer { player.terminate(signal: SIGKILL, timeout: 2) }
            // A stream that declares nothing is published once its first moments are over
            // (about 100 ms, longer while its start waits for what follows): the port is
            // chosen once the policy has the stream playing.
            try sandbox.waitUntil(timeout: 10, "the stream's session published playing") {
                try sandbox.sessionState(subject: node)?["playing"] as? Bool == true
            }
            let before = try Self.lastEventSeq(sandbox)
            let device = try #require(try Self.cardDevice(sandbox)?["id"] as? Int)
            let r = try sandbox.run(["pw-cli", "set-param", String(device), "Route", "{ index: 1, device: 0 }"])
            #expect(r.status == 0, "pw-cli: \(r.stdout) \(r.stderr)")
            try sandbox.waitUntil(timeout: 10, "the speaker port in the global route") { try Self.portType(sandbox) == "builtInSpeaker" }
            let recorder = try Recorder(sandbox: sandbox, sink: Self.card)
            try sandbox.waitForMoreRecording(recorder, seconds: 0.3)
            #expect(try recorder.stop().nonZeroSampleCount > 0, "the stream stopped after the user's port choice")
            // Checked after the recording, so that a policy that took the choice for a loss
            // has had time to say so.
            #expect(try !Self.routeChange(sandbox, node: node, reason: "oldDeviceUnavailable", after: before))
            #expect(try sandbox.sessionState(subject: node)?["playing"] as? Bool == true)
        }
    }
}

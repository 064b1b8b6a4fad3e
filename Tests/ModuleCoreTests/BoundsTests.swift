import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// Declarations have a size; the core keeps only what it reads (docs/trust.md).
@Suite struct BoundsTests {
    /// Every PipeWire key the policy reads survives the bounds (a key dropped here is a
    /// rule that silently stops working: loopbacks were no longer seen through without
    /// `node.link-group`).
    @Test func everyKeyThePolicyReadsIsKept() {
        let read = ["api.alsa.path", "application.name", "application.process.binary", "device.api", "device.bus",
                    "device.description", "device.form-factor", "device.port.type", "factory.name", "media.role",
                    "node.description", "node.link-group", "node.name", "node.nick", "node.virtual"]
        for key in read {
            #expect(PropertyBounds.kept([key: "v"])[key] == "v", "\(key) is dropped")
        }
    }

    let sink = RecordingEffectSink()
    let core: ModuleCore

    init() {
        core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
        core.handle(.clientAdded(ClientID(5), ["application.name": "app", "audio.session.category": "playback"]))
        _ = sink.take()
    }

    func refusals(_ calls: [EffectCall]) -> [String] {
        calls.events.filter { $0["type"] as? String == "declarationRefused" }
            .compactMap { ($0["error"] as? [String: Any])?["code"] as? String }
    }

    @Test func aDeclarationValueLongerThan256BytesIsRefusedAndThePreviousStaysInForce() {
        let long = String(repeating: "a", count: 257)
        core.handle(.clientChanged(ClientID(5), ["application.name": "app", "audio.session.category": "playback",
                                                 "audio.session.mode": long]))
        #expect(refusals(sink.take()) == ["badParam"])
        let kept = core.policy.snapshot().clients[ClientID(5)]?.facts.sessionKeys
        #expect(kept?["audio.session.mode"] == nil)
        #expect(kept?["audio.session.category"] == "playback")
        #expect(core.policy.sessions[.client(ClientID(5))]?.category == .playback)
    }

    @Test func seventeenAudioSessionKeysAreRefused() {
        var props: Properties = ["audio.session.category": "ambient"]
        for i in 0..<16 { props["audio.session.x\(i)"] = "1" }
        core.handle(.clientChanged(ClientID(5), props))
        #expect(refusals(sink.take()) == ["badParam"])
        #expect(core.policy.sessions[.client(ClientID(5))]?.category == .playback)
        #expect(core.policy.snapshot().clients[ClientID(5)]?.facts.sessionKeys.count ?? 99 <= 3)
    }

    @Test func anOptionsListOfSeventeenEntriesIsRefused() {
        let options = Array(repeating: "mixWithOthers", count: 17).joined(separator: ",")
        core.handle(.streamAdded(NodeID(50), client: ClientID(6), direction: .output,
                                 ["audio.session.category": "playback", "audio.session.options": options]))
        #expect(refusals(sink.take()) == ["badParam"])
        #expect(core.policy.snapshot().streams[NodeID(50)]?.facts.sessionKeys["audio.session.options"] == nil)
    }

    @Test func propertiesThePolicyDoesNotReadAreNotKeptAndLongNamesAreCut() {
        var props: Properties = ["media.role": "Music", "application.name": String(repeating: "n", count: 10_000)]
        for i in 0..<1000 { props["junk.\(i)"] = String(repeating: "j", count: 1000) }
        core.handle(.streamAdded(NodeID(60), client: ClientID(7), direction: .output, props))
        let kept = core.policy.snapshot().streams[NodeID(60)]?.facts
        #expect(kept?.role == "Music")
        #expect(kept?.sessionKeys.isEmpty == true)
        #expect(kept?.applicationName?.utf8.count == 256)
        #expect(refusals(sink.take()).isEmpty)
    }

    @Test func recordsOfAClientAndItsStreamsGoWithThem() {
        let long = String(repeating: "a", count: 300)
        core.handle(.streamAdded(NodeID(70), client: ClientID(8), direction: .output, ["audio.session.category": "playback"]))
        core.handle(.streamChanged(NodeID(70), ["audio.session.category": long]))
        core.handle(.streamRemoved(NodeID(70)))
        core.handle(.clientRemoved(ClientID(8)))
        core.handle(.clientRemoved(ClientID(5)))
        core.flush()
        #expect(core.recordCount == 0)
        #expect(core.policy.snapshot().clients.isEmpty)
        #expect(core.policy.snapshot().streams.isEmpty)
    }
}

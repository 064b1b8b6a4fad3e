import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// Declarations have a size (`DeclarationLimits`); the policy keeps only typed facts, each
/// string cut to the translation's limit (docs/trust.md).
@Suite struct BoundsTests {
    let sink = RecordingEffectSink()
    let core: ModuleCore

    init() {
        core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
        core.clientAdded(ClientID(5), ["application.name": "app", "audio.session.category": "playback"], identity: ClientIdentity())
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
        let kept = core.policy.snapshot().clients[ClientID(5)]?.facts.declaration.declaration
        #expect(kept == .valid(Declaration(category: .playback)))
        #expect(core.policy.sessions[.client(ClientID(5))]?.category == .playback)
    }

    @Test func seventeenAudioSessionKeysAreRefused() {
        var props: Properties = ["audio.session.category": "ambient"]
        for i in 0..<16 { props["audio.session.x\(i)"] = "1" }
        core.handle(.clientChanged(ClientID(5), props))
        #expect(refusals(sink.take()) == ["badParam"])
        #expect(core.policy.sessions[.client(ClientID(5))]?.category == .playback)
        #expect(core.policy.snapshot().clients[ClientID(5)]?.facts.declaration.size.keys ?? 99 <= 3)
    }

    @Test func anOptionsListOfSeventeenEntriesIsRefused() {
        let options = Array(repeating: "mixWithOthers", count: 17).joined(separator: ",")
        core.handle(.streamAdded(NodeID(50), client: ClientID(6), direction: .output,
                                 ["audio.session.category": "playback", "audio.session.options": options]))
        #expect(refusals(sink.take()) == ["badParam"])
        #expect(core.policy.snapshot().streams[NodeID(50)]?.facts.declaration == DeclarationFacts())
    }

    @Test func propertiesThePolicyDoesNotReadAreNotKeptAndLongNamesAreCut() {
        var props: Properties = ["media.role": "Music", "application.name": String(repeating: "n", count: 10_000)]
        for i in 0..<1000 { props["junk.\(i)"] = String(repeating: "j", count: 1000) }
        core.handle(.streamAdded(NodeID(60), client: ClientID(7), direction: .output, props))
        let kept = core.policy.snapshot().streams[NodeID(60)]?.facts
        #expect(kept?.role == "Music")
        #expect(kept?.declaration == DeclarationFacts())
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

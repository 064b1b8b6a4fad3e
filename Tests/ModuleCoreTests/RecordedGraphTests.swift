import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// ModuleCore driven by the event sequences the module sees in the sandbox
/// (see `Recorded`), asserting the exact calls on the effect table.
@Suite struct RecordedGraphTests {
    let sink = RecordingEffectSink()
    let core: ModuleCore

    init() {
        core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
    }

    func feed(_ events: [Event]) -> [EffectCall] {
        for e in events { core.handle(e) }
        return sink.take()
    }

    /// The last value written to `audio-session.session` for `subject`.
    func lastSession(_ calls: [EffectCall], _ subject: UInt32) -> [String: Any]? {
        calls.metadataWrites.last { $0.key == "audio-session.session" && $0.subject == subject }?.value
    }

    func outputUIDs(_ route: Any?) -> [String]? {
        guard let route = route as? [String: Any], let outputs = route["outputs"] as? [[String: Any]] else { return nil }
        return outputs.compactMap { $0["uid"] as? String }
    }

    @Test func idleGraphPublishesTheGlobalRouteWithBothSinksAndNoSession() throws {
        let calls = feed(Recorded.idleGraph)
        #expect(calls.streamEffects.isEmpty)
        #expect(calls.events.isEmpty)
        let writes = calls.metadataWrites
        #expect(writes.allSatisfy { $0.key == "audio-session.global" && $0.subject == 0 && $0.type == "Spa:String:JSON" })
        let global = try #require(writes.last?.value)
        #expect(outputUIDs(global["currentRoute"]) == ["headphones", "speaker"])
        #expect(global.int("playingSessions") == 0)
        #expect(global.bool("isOtherAudioPlaying") == false)
    }

    @Test func legacyMusicStreamIsPublishedAsAPlayingPlaybackSessionOnTheHeadphonesAndNotTouched() throws {
        _ = feed(Recorded.idleGraph)
        let calls = feed(Recorded.musicPlays)
        #expect(calls.streamEffects.isEmpty)
        #expect(calls.events.isEmpty)
        let session = try #require(lastSession(calls, Recorded.musicStreamID))
        #expect(session.sessionRef?.kind == "stream")
        #expect(session.sessionRef?.id == Int(Recorded.musicStreamID))
        #expect(session.bool("legacy") == true)
        #expect(session.string("category") == "playback")
        #expect(session.string("application") == "pw-cat")
        #expect(session.bool("active") == true)
        #expect(session.bool("playing") == true)
        #expect(session.bool("interrupted") == false)
        #expect(session["streams"] as? [Int] == [Int(Recorded.musicStreamID)])
        #expect(outputUIDs(session["route"]) == ["headphones"])
        let global = try #require(calls.metadataWrites.last { $0.key == "audio-session.global" }?.value)
        #expect(global.int("playingSessions") == 1)
        #expect(global.bool("isOtherAudioPlaying") == true)
    }

    @Test func r10PhoneStreamPausesTheMusicStreamBeforeItsInterruptionBeganIsPublished() throws {
        _ = feed(Recorded.idleGraph + Recorded.musicPlays)
        let calls = feed(Recorded.phonePlays)
        #expect(calls.streamEffects == [.pause(Recorded.musicStreamID)])

        let events = calls.events
        try #require(events.count == 1)
        #expect(events[0].int("seq") == 1)
        #expect(events[0].sessionRef?.kind == "stream")
        #expect(events[0].sessionRef?.id == Int(Recorded.musicStreamID))
        #expect(events[0].string("type") == "interruption")
        #expect(events[0].string("phase") == "began")
        #expect(events[0].string("reason") == "default")

        // R11: the began goes out after the pause.
        let pauseIndex = try #require(calls.firstIndex(of: .pause(Recorded.musicStreamID)))
        let beganIndex = try #require(calls.firstIndex {
            if case .publish(0, "audio-session.event", _, _) = $0 { return true } else { return false }
        })
        #expect(pauseIndex < beganIndex)

        let music = try #require(lastSession(calls, Recorded.musicStreamID))
        #expect(music.bool("interrupted") == true)
        #expect(music.string("interruptionReason") == "default")
        #expect(music.bool("playing") == false)
        let phone = try #require(lastSession(calls, Recorded.phoneStreamID))
        #expect(phone.string("category") == "playAndRecord")
        #expect(phone.string("mode") == "voiceChat")
        #expect(phone.string("priority") == "call")
        #expect(phone.bool("active") == true)
        #expect(outputUIDs(phone["route"]) == ["headphones"])
    }

    @Test func r30HeadphonesRemovedPausesTheCallFirstAndDoesNotResumeTheMusicOntoTheSpeaker() throws {
        _ = feed(Recorded.idleGraph + Recorded.musicPlays + Recorded.phonePlays)
        let calls = feed(Recorded.headphonesRemoved)
        // The only stream effect, and the first call of all.
        #expect(calls.streamEffects == [.pause(Recorded.phoneStreamID)])
        #expect(calls.first == .pause(Recorded.phoneStreamID))
        #expect(calls.resumedNodes.isEmpty)

        let events = calls.events
        try #require(events.count == 2)
        #expect(events[0].int("seq") == 2)
        #expect(events[0].sessionRef?.id == Int(Recorded.phoneStreamID))
        #expect(events[0].string("type") == "routeChange")
        #expect(events[0].string("reason") == "oldDeviceUnavailable")
        #expect(outputUIDs(events[0]["previousRoute"]) == ["headphones"])
        #expect(outputUIDs(events[0]["currentRoute"]) == [])
        // The call ended; the music it interrupted had played on the lost headphones: no shouldResume.
        #expect(events[1].int("seq") == 3)
        #expect(events[1].sessionRef?.id == Int(Recorded.musicStreamID))
        #expect(events[1].string("type") == "interruption")
        #expect(events[1].string("phase") == "ended")
        #expect(events[1].bool("shouldResume") == false)

        let global = try #require(calls.metadataWrites.last { $0.key == "audio-session.global" }?.value)
        #expect(outputUIDs(global["currentRoute"]) == ["speaker"])
        #expect(global.int("playingSessions") == 0)
    }

    @Test func eventSequenceNumbersIncreaseByOneFromOneAcrossTheWholeRecording() {
        var all: [EffectCall] = []
        for phase in [Recorded.idleGraph, Recorded.musicPlays, Recorded.phonePlays, Recorded.headphonesRemoved] {
            all += feed(phase)
        }
        let seqs = all.events.compactMap { $0.int("seq") }
        #expect(seqs.count == all.events.count)
        #expect(seqs == Array(1...3))
        #expect(core.sequence == 3)
    }

    @Test func everyMetadataWriteIsJSONOfTheDocumentedTypeUnderADocumentedKeyAndSubject() {
        var all: [EffectCall] = []
        for phase in [Recorded.idleGraph, Recorded.musicPlays, Recorded.phonePlays, Recorded.headphonesRemoved] {
            all += feed(phase)
        }
        let writes = all.metadataWrites
        #expect(!writes.isEmpty)
        for w in writes {
            #expect(w.type == "Spa:String:JSON")
            switch w.key {
            case "audio-session.event", "audio-session.global":
                #expect(w.subject == 0)
            case "audio-session.session":
                // A legacy session's subject is its stream node, and its value says so.
                #expect([Recorded.musicStreamID, Recorded.phoneStreamID].contains(w.subject))
                if let v = w.value {
                    #expect(v.sessionRef?.kind == "stream")
                    #expect(v.sessionRef?.id == Int(w.subject))
                }
            default:
                Issue.record("undocumented key \(w.key)")
            }
        }
    }

    @Test func streamThatEndsRemovesItsSessionKey() {
        _ = feed(Recorded.idleGraph + Recorded.musicPlays)
        let calls = feed([
            .streamRunning(NodeID(Recorded.musicStreamID), false),
            .linkRemoved(LinkID(Recorded.musicLinks[0])), .linkRemoved(LinkID(Recorded.musicLinks[1])),
            .streamRemoved(NodeID(Recorded.musicStreamID)),
            .clientRemoved(ClientID(Recorded.musicClientID)),
        ])
        #expect(calls.streamEffects.isEmpty)
        let last = calls.metadataWrites.last { $0.key == "audio-session.session" }
        #expect(last?.subject == Recorded.musicStreamID)
        #expect(last != nil && last?.value == nil)
        #expect(core.policy.publishedSessionCount == 0)
    }

    @Test func r3NavigationPromptDucksTheMusicWithTheDefaultRampsAndRestoresIt() {
        _ = feed(Recorded.idleGraph + Recorded.musicPlays)
        let promptClient: UInt32 = 60, prompt: UInt32 = 61
        let began = feed(Recorded.play(
            client: promptClient, Recorded.pwCatClient(id: promptClient, pid: 17000, serial: 80),
            stream: prompt, Recorded.pwPlayStream(id: prompt, client: promptClient, role: "Navigation", serial: 81),
            links: [62, 63], sink: Recorded.headphonesID))
        #expect(began.streamEffects == [.duck(Recorded.musicStreamID, gain: 0.2, rampMilliseconds: 250)])
        let ended = feed([.streamRunning(NodeID(prompt), false)])
        #expect(ended.streamEffects == [.duck(Recorded.musicStreamID, gain: 1, rampMilliseconds: 500)])
    }
}

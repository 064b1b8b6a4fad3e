import AudioSessionCoreABI
import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// Module issue item 1: bursts of property changes are decided once, on the settled
/// graph; nothing that keeps audio from leaking waits.
@Suite struct DebounceTests {
    let sink = DeferringEffectSink()
    let core: ModuleCore
    static let client = Recorded.musicClientID, stream = Recorded.musicStreamID

    init() {
        core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
        for e in Recorded.idleGraph + Recorded.musicPlays { core.handle(e) }
        _ = sink.recording.take()
    }

    func declaring(_ category: String) -> Event {
        var p = Recorded.musicClient
        p["audio.session.category"] = category
        return .clientChanged(ClientID(Self.client), p)
    }

    /// The module also hands the core each update the client sent itself (for the global
    /// switches): without a switch in it, the burst still waits for the flush.
    @Test func theClientsOwnUpdatesWithoutASwitchDoNotDecideTheBurstEarly() {
        for category in ["playback", "ambient", "soloAmbient"] {
            let event = declaring(category)
            core.handle(event)
            var props = Recorded.musicClient
            props["audio.session.category"] = category
            core.ownPropertiesWritten(ClientID(Self.client), props)
        }
        #expect(core.pendingChangeCount == 1)
        #expect(sink.recording.take().streamEffects.isEmpty)
    }

    @Test func aBurstOfDeclarationChangesIsDecidedOnceOnTheLastOne() throws {
        // 50 rewrites, every other one invalid, the last one valid (ambient).
        for i in 0..<49 { core.handle(declaring(i % 2 == 0 ? "Not A Category" : "playback")) }
        core.handle(declaring("ambient"))
        #expect(sink.recording.calls.isEmpty, "decided before the flush: \(sink.recording.calls)")
        #expect(sink.flushRequests == 1)
        #expect(core.pendingChangeCount == 1)

        core.flush()
        let calls = sink.recording.take()
        // No declaration error for the intermediate invalid values: they were never decided.
        #expect(calls.metadataWrites.filter { $0.key == "audio-session.event" }.isEmpty, "\(calls)")
        let session = try #require(core.policy.sessions[.client(ClientID(Self.client))])
        #expect(session.category == .ambient)
        #expect(core.pendingChangeCount == 0)
    }

    @Test func withoutDeferringEachChangeIsDecidedAtOnce() {
        let immediate = RecordingEffectSink()
        let core = ModuleCore(configuration: PolicyConfiguration(), effects: immediate)
        for e in Recorded.idleGraph + Recorded.musicPlays { core.handle(e) }
        _ = immediate.take()
        core.handle(declaring("Not A Category"))
        #expect(immediate.take().events.contains { $0.string("type") == "declarationRefused" })
    }

    /// An owner's activation of a stream the policy does not hold is not decided (it asks
    /// nothing), but only once nothing is held: a held change may make it a request. Here a
    /// call declared in a held change pauses the music, and the music's owner starting it
    /// again is then a request the call refuses, as if each change had been decided at once.
    @Test func anOwnersActivationIsDecidedAfterTheHeldChangesThatMayMakeItARequest() {
        let phone = ClientID(Recorded.phoneClientID), music = NodeID(Self.stream)
        var call = Recorded.phoneClient
        call["audio.session.category"] = "playAndRecord"
        call["audio.session.mode"] = "voiceChat"
        call["audio.session.active"] = "true"
        let immediate = RecordingEffectSink()
        let reference = ModuleCore(configuration: PolicyConfiguration(), effects: immediate)
        for e in Recorded.idleGraph + Recorded.musicPlays { reference.handle(e) }
        _ = immediate.take()
        for c in [core, reference] {
            c.clientAdded(phone, Recorded.phoneClient, identity: ClientIdentity())
            #expect(c.policy.asksNothing(.streamActivatedByOwner(music)))
            c.handle(.clientChanged(phone, call))
        }
        #expect(core.pendingChangeCount == 1)
        core.handle(.streamActivatedByOwner(music))
        reference.handle(.streamActivatedByOwner(music))
        #expect(core.pendingChangeCount == 0)
        #expect(core.policy.holdsPaused(music))
        #expect(!core.policy.asksNothing(.streamActivatedByOwner(music)))
        let calls = sink.recording.take()
        #expect(calls.pausedNodes.contains(Self.stream), "\(calls)")
        #expect(calls.streamEffects == immediate.take().streamEffects)
        #expect(core.policy.snapshot() == reference.policy.snapshot())
    }

    @Test func anyOtherEventDecidesTheHeldChangesFirstThenItself() throws {
        // A Phone stream's properties are held; then the headphones go away.
        core.handle(declaring("ambient"))
        #expect(sink.recording.calls.isEmpty)
        for e in Recorded.headphonesRemoved { core.handle(e) }
        // The pause happened now, without a flush, and after the held change was decided.
        let calls = sink.recording.take()
        #expect(calls.pausedNodes == [Self.stream], "\(calls)")
        #expect(core.pendingChangeCount == 0)
        let firstPause = try #require(calls.firstIndex(of: .pause(Self.stream)))
        let sessionWrite = calls.firstIndex {
            if case .publish(_, "audio-session.session", _, let v?) = $0 { return v.contains("\"ambient\"") } else { return false }
        }
        #expect(sessionWrite.map { $0 < firstPause } == true, "the declaration was not decided before the loss: \(calls)")
    }

    @Test func changesOfDifferentObjectsAreDecidedInTheOrderOfTheirLastChange() {
        var streamProps = Recorded.musicStream
        streamProps["media.role"] = "Movie"
        core.handle(declaring("playback"))
        core.handle(.streamChanged(NodeID(Self.stream), streamProps))
        core.handle(declaring("ambient"))
        #expect(sink.flushRequests == 1)
        core.flush()
        #expect(core.policy.sessions[.client(ClientID(Self.client))]?.category == .ambient)
    }

    @Test func theCABIHoldsChangesUntilAsCoreFlush() throws {
        final class Box { var requests = 0 }
        let box = Box()
        var table = as_core_effects()  // other callbacks NULL: skipped
        table.version = UInt32(AS_CORE_EFFECTS_VERSION)
        table.schedule_flush = { data in
            guard let data else { return }
            Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().requests += 1
        }
        let data = Unmanaged.passUnretained(box).toOpaque()
        let c = try #require(withUnsafePointer(to: &table) { as_core_new(nil, $0, data, nil, 0) })
        defer { as_core_free(c) }
        let props = CProps(["audio.session.category": "bogus"])
        props.with { as_core_client_added(c, 7, $0, nil) }
        props.with { as_core_client_changed(c, 7, $0) }
        props.with { as_core_client_changed(c, 7, $0) }
        #expect(box.requests == 1)
        as_core_flush(c)
        props.with { as_core_client_changed(c, 7, $0) }
        #expect(box.requests == 2)
    }

    /// The music's legacy session as written to the metadata since the last `take()`
    /// (nil: removed).
    func musicSessionWrites(_ calls: [EffectCall]) -> [[String: Any]?] {
        calls.metadataWrites.filter { $0.subject == Self.stream && $0.key == "audio-session.session" }.map(\.value)
    }

    /// A stream's stop waits for the loop's next turn like a property change: the daemon
    /// stops a running node as it destroys it, and the removal may follow at once.
    @Test func aStreamsStopIsDecidedOnTheLoopsNextTurn() throws {
        let requests = sink.flushRequests
        core.handle(.streamRunning(NodeID(Self.stream), false))
        #expect(sink.recording.calls.isEmpty, "decided before the flush: \(sink.recording.calls)")
        #expect(core.pendingChangeCount == 1)
        #expect(sink.flushRequests == requests + 1)
        core.flush()
        let writes = musicSessionWrites(sink.recording.take())
        #expect(writes.count == 1)
        #expect(writes.first??["playing"] as? Bool == false)
        #expect(core.pendingChangeCount == 0)
    }

    /// Stopped and destroyed in one call of the daemon: one decision, and the metadata hears
    /// only that the session went (not the stopped state in between).
    @Test func aStopAndTheNodesRemovalAreDecidedInOneStep() throws {
        core.handle(.streamRunning(NodeID(Self.stream), false))
        core.handle(.streamRemoved(NodeID(Self.stream)))
        let writes = musicSessionWrites(sink.recording.take())
        #expect(writes.count == 1)
        #expect(writes.first.map { $0 == nil } == true, "\(writes)")
        #expect(core.pendingChangeCount == 0)
        #expect(core.policy.sessions[.stream(NodeID(Self.stream))] == nil)
    }

    /// Anything that happens between the stop and the removal is decided in order: the stop
    /// first, then the other event, then the removal.
    @Test func anEventBetweenTheStopAndTheRemovalIsDecidedAfterTheStop() throws {
        core.handle(.streamRunning(NodeID(Self.stream), false))
        core.handle(.streamRunning(NodeID(Self.stream), true))
        var writes = musicSessionWrites(sink.recording.take())
        #expect(writes.compactMap { $0?["playing"] as? Bool } == [false, true])
        core.handle(.streamRunning(NodeID(Self.stream), false))
        core.handle(declaring("playback"))
        core.handle(.streamRemoved(NodeID(Self.stream)))
        writes = musicSessionWrites(sink.recording.take())
        #expect(writes.first??["playing"] as? Bool == false)
        #expect(writes.last.map { $0 == nil } == true, "\(writes)")
        #expect(core.pendingChangeCount == 0)
    }
}

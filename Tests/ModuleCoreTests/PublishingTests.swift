import AudioSessionCoreABI
import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// A recording sink with the module's timers: the core asks for them, the test runs them out.
final class TimingEffectSink: RecordingEffectSink {
    override var timers: Bool { true }
}

/// The tests' clock: it moves only when a test moves it.
final class TestClock: @unchecked Sendable {
    var nanoseconds: UInt64 = 1_000_000_000
    func advance(milliseconds: UInt64) { nanoseconds += milliseconds * 1_000_000 }
}

/// The published state is written at most once an interval (`publish.interval-ms`), and ever
/// less often while it keeps changing (up to eight intervals): a burst of changes costs the
/// daemon a few writes a key, the graph's own events carry the writes, and nothing around an
/// event waits.
@Suite struct PublishingTests {
    let sink = TimingEffectSink()
    let clock = TestClock()
    let core: ModuleCore
    static let music = Recorded.musicStreamID
    static let token = ModuleCore.publishTimerToken

    init() {
        var c = PolicyConfiguration()
        c.publishIntervalMilliseconds = 20
        let clock = self.clock
        core = ModuleCore(configuration: c, effects: sink, clock: { clock.nanoseconds })
        for e in Recorded.idleGraph + Recorded.musicPlays { core.handle(e) }
        settle()
    }

    /// Runs the publishing timer out until nothing is held, then lets an interval pass.
    func settle() {
        while runPublishTimer() {}
        clock.advance(milliseconds: 20)
        _ = sink.take()
    }

    /// Runs the publishing timer out if the core asked for it (the clock moves to its due
    /// time); whether it had.
    @discardableResult
    func runPublishTimer() -> Bool {
        guard let i = sink.timerRequests.firstIndex(where: { $0.token == Self.token && $0.milliseconds != ModuleCore.parkedMilliseconds })
        else { return false }
        let request = sink.timerRequests.remove(at: i)
        clock.advance(milliseconds: UInt64(request.milliseconds))
        core.timerFired(Self.token)
        return true
    }

    /// The publishing timer's request, if one is pending (a parked timer is none).
    var pendingPublishTimer: UInt32? {
        sink.timerRequests.first { $0.token == Self.token && $0.milliseconds != ModuleCore.parkedMilliseconds }?.milliseconds
    }

    /// The music stops (written at once: the metadata was quiet) and starts again 5 ms
    /// later, within the interval: its start is held.
    func holdTheMusicsStart() {
        core.handle(.streamRunning(NodeID(Self.music), false))
        _ = sink.take()
        clock.advance(milliseconds: 5)
        core.handle(.streamRunning(NodeID(Self.music), true))
    }

    /// A program that declares nothing connects and makes its stream: a new legacy session.
    func chimeComes(_ c: ClientID, _ n: NodeID) {
        core.handle(.clientAdded(c, ["application.name": "chime", "pipewire.sec.pid": "4242"]))
        core.handle(.streamAdded(n, client: c, direction: .output, ["application.name": "chime"]))
    }

    func sessionWrites(_ calls: [EffectCall], subject: UInt32) -> [MetadataWrite] {
        calls.metadataWrites.filter { $0.key == "audio-session.session" && $0.subject == subject }
    }

    @Test func aChangeAfterAQuietIntervalIsWrittenAtOnceAndTheNextOnesWaitForAnEventAnIntervalLater() throws {
        core.handle(.streamRunning(NodeID(Self.music), false))
        let first = sink.take()
        // The session and the global state, both at once; no timer is needed yet.
        #expect(sessionWrites(first, subject: Self.music).count == 1, "\(first)")
        #expect(first.metadataWrites.contains { $0.key == "audio-session.global" }, "\(first)")
        #expect(pendingPublishTimer == nil)

        // Within the interval: started, stopped, started again. Nothing is written yet; the
        // timer stands by for two intervals after the write (5 ms gone: 35 ms left).
        for running in [true, false, true] {
            clock.advance(milliseconds: 5)
            core.handle(.streamRunning(NodeID(Self.music), running))
        }
        #expect(sink.take().metadataWrites.isEmpty)
        #expect(pendingPublishTimer == 35)

        // The first event an interval after the write carries what is held: each key once,
        // as it stands (playing).
        clock.advance(milliseconds: 5)
        core.handle(.streamRunning(NodeID(Self.music), true))
        let end = sink.take()
        let writes = sessionWrites(end, subject: Self.music)
        #expect(writes.count == 1, "\(end)")
        #expect(try #require(writes.first?.value).bool("playing") == true)
        #expect(end.metadataWrites.filter { $0.key == "audio-session.global" }.count == 1)
        #expect(core.pendingPublicationCount == 0)
    }

    @Test func withoutEventsTheTimerWritesWhatIsHeldTwoIntervalsAfterTheLastWrite() throws {
        holdTheMusicsStart()
        #expect(sink.take().metadataWrites.isEmpty)
        #expect(pendingPublishTimer == 35)
        #expect(runPublishTimer())
        let writes = sessionWrites(sink.take(), subject: Self.music)
        #expect(writes.count == 1)
        #expect(try #require(writes.first?.value).bool("playing") == true)
        // Nothing held: the timer is not asked for again.
        #expect(pendingPublishTimer == nil)
    }

    /// An owner's activation of a stream the policy does not hold asks it nothing (one comes
    /// with every stream that starts): the module core drops it before it does anything
    /// else, so it carries no held write either; the timer (or the next decision) does.
    @Test func anActivationThatAsksNothingIsDroppedAndCarriesNoWrite() throws {
        holdTheMusicsStart()
        #expect(sink.take().metadataWrites.isEmpty)
        let held = core.pendingPublicationCount
        #expect(held > 0)
        // An interval after the write: a decision now would write what is held.
        clock.advance(milliseconds: 20)
        #expect(core.policy.asksNothing(.streamActivatedByOwner(NodeID(Self.music))))
        core.handle(.streamActivatedByOwner(NodeID(Self.music)))
        let calls = sink.take()
        #expect(calls.isEmpty, "\(calls)")
        #expect(core.pendingPublicationCount == held)
        #expect(runPublishTimer())
        let writes = sessionWrites(sink.take(), subject: Self.music)
        #expect(writes.count == 1)
        #expect(try #require(writes.first?.value).bool("playing") == true)
    }

    /// A stream started and stopped every 7 ms: the events carry the writes, the timer never
    /// comes due, and the state is written ever less often, each write the latest state.
    /// Returns the times of the session's writes (ms after the first event), the time of the
    /// last event and when the publishing timer is due at the end (nil: not asked for).
    func toggleEvery7Milliseconds(for events: Int) -> (writes: [UInt64], end: UInt64, due: UInt64?) {
        var times: [UInt64] = []
        var due: UInt64?
        let start = clock.nanoseconds
        for i in 0..<events {
            clock.advance(milliseconds: 7)
            // The timer, once asked for, would have fired before this event if it was due.
            if let due { #expect(due > clock.nanoseconds, "event \(i)") }
            core.handle(.streamRunning(NodeID(Self.music), i % 2 == 1))
            for w in sessionWrites(sink.take(), subject: Self.music) {
                times.append((clock.nanoseconds - start) / 1_000_000)
                // What is written is the state the event left.
                #expect(w.value?.bool("playing") == (i % 2 == 1), "event \(i)")
            }
            if let ms = pendingPublishTimer {
                due = clock.nanoseconds + UInt64(ms) * 1_000_000
                sink.timerRequests.removeAll()
            }
        }
        return (times, (clock.nanoseconds - start) / 1_000_000, due.map { ($0 - start) / 1_000_000 })
    }

    /// Moves the clock to `due` (ms after the burst's start, `end` ms after it now) and runs
    /// the publishing timer out.
    func firePublishTimer(due: UInt64, end: UInt64) {
        clock.advance(milliseconds: due - end)
        core.timerFired(Self.token)
    }

    @Test func aBusyGraphCarriesTheWritesEverLessOftenAndTheTimerNeverComesDue() {
        // About a second (980 ms): 140 changes of the session's state.
        let writes = toggleEvery7Milliseconds(for: 140).writes
        // The first change at once (the metadata was quiet), then the wait doubles with each
        // write the events carry: 20, 40, 80, then 160 ms (eight intervals) at most. A write
        // whose state came back to what the metadata says is left out, so some waits add up.
        #expect(writes.first == 7, "\(writes)")
        let gaps = zip(writes.dropFirst(), writes).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 20 && $0 < 2 * (160 + 7) }, "\(writes)")
        #expect(gaps.suffix(3).allSatisfy { $0 >= 160 }, "\(writes)")
        // At most one write every 20 ms would be 49 writes; the longer waits make it fewer than ten.
        #expect(writes.count >= 4 && writes.count < 10, "\(writes)")
    }

    @Test func afterABurstTheTimerWritesTheLastStateAndTheNextChangeIsWrittenAtOnce() throws {
        let burst = toggleEvery7Milliseconds(for: 140)
        // The events stop with the music playing (the last event started it) and that state
        // held: the timer writes it one interval after the longest wait at the latest.
        let lastWrite = try #require(burst.writes.last)
        let due = try #require(burst.due)
        #expect(core.pendingPublicationCount > 0)
        #expect(due > burst.end && due <= lastWrite + 160 + 20, "\(burst)")
        firePublishTimer(due: due, end: burst.end)
        let writes = sessionWrites(sink.take(), subject: Self.music)
        #expect(writes.count == 1)
        #expect(try #require(writes.first?.value).bool("playing") == true)
        #expect(core.pendingPublicationCount == 0)
        // The next change an interval later is written at once, and one after it waits one
        // interval only (20 ms), as before the burst.
        clock.advance(milliseconds: 20)
        core.handle(.streamRunning(NodeID(Self.music), false))
        #expect(sessionWrites(sink.take(), subject: Self.music).count == 1)
        clock.advance(milliseconds: 5)
        core.handle(.streamRunning(NodeID(Self.music), true))
        #expect(sink.take().metadataWrites.isEmpty)
        #expect(pendingPublishTimer == 35)
    }

    @Test func aChangeAfterAQuietSpellIsWrittenAtOnceAndTheNextWaitsOneInterval() {
        // A burst that ends with an event carrying its fourth write: the wait has grown to
        // its longest (160 ms), and nothing is left held for the timer.
        var writes = 0
        var i = 0
        while i < 200 {
            clock.advance(milliseconds: 7)
            core.handle(.streamRunning(NodeID(Self.music), i % 2 == 1))
            i += 1
            if !sessionWrites(sink.take(), subject: Self.music).isEmpty {
                writes += 1
                if writes == 4 { break }
            }
        }
        #expect(writes == 4)
        #expect(core.pendingPublicationCount == 0)
        sink.timerRequests.removeAll()
        // 200 ms of quiet, then a change: written at once.
        clock.advance(milliseconds: 200)
        core.handle(.streamRunning(NodeID(Self.music), i % 2 == 1))
        #expect(sessionWrites(sink.take(), subject: Self.music).count == 1)
        // The wait is one interval again: a change 5 ms later is held for the timer two
        // intervals after the write (35 ms from now), not eight.
        clock.advance(milliseconds: 5)
        core.handle(.streamRunning(NodeID(Self.music), i % 2 == 0))
        #expect(sink.take().metadataWrites.isEmpty)
        #expect(pendingPublishTimer == 35)
    }

    @Test func aStateThatCameBackWithinTheIntervalIsNotWrittenAgain() {
        holdTheMusicsStart()
        clock.advance(milliseconds: 5)
        core.handle(.streamRunning(NodeID(Self.music), false))
        runPublishTimer()
        #expect(sink.take().metadataWrites.isEmpty)
        #expect(!runPublishTimer())
        // A whole interval without a change: quiet again, the next change is written at once.
        clock.advance(milliseconds: 20)
        core.handle(.streamRunning(NodeID(Self.music), true))
        #expect(sessionWrites(sink.take(), subject: Self.music).count == 1)
    }

    @Test func aHeldSessionsStateIsMadeWhenItIsWrittenOnceForTheWholeInterval() throws {
        holdTheMusicsStart()
        for _ in 0..<3 {
            clock.advance(milliseconds: 1)
            core.handle(.streamRunning(NodeID(Self.music), false))
            clock.advance(milliseconds: 1)
            core.handle(.streamRunning(NodeID(Self.music), true))
        }
        #expect(sessionWrites(sink.take(), subject: Self.music).isEmpty)
        // Held: the state is not made yet; the policy still has the one last written.
        #expect(core.policy.unsettledSessionCount == 1)
        #expect(core.policy.publishedSnapshot(.stream(NodeID(Self.music)))?.isPlaying == false)
        runPublishTimer()
        let writes = sessionWrites(sink.take(), subject: Self.music)
        #expect(writes.count == 1)
        let value = try #require(writes.last?.value)
        #expect(value["playing"] as? Bool == true, "\(value)")
        #expect(core.policy.unsettledSessionCount == 0)
    }

    @Test func aDecisionThatLeavesTheStateAsWrittenWritesNothingAndTheMetadataStaysQuiet() {
        // The headphones announce the same properties again: the music, linked to them, is
        // looked at again and says what the metadata already says.
        guard case .endpointAdded(let e, _, let facts)? = Recorded.idleGraph.first(where: {
            if case .endpointAdded(NodeID(Recorded.headphonesID), _, _) = $0 { return true } else { return false }
        }) else {
            Issue.record("the recording has no headphones")
            return
        }
        core.handle(.endpointChanged(e, facts))
        core.flush()
        #expect(sink.take().metadataWrites.isEmpty)
        #expect(pendingPublishTimer == nil)
        #expect(core.pendingPublicationCount == 0)
        // Still quiet: the music's stop right after is written at once.
        clock.advance(milliseconds: 1)
        core.handle(.streamRunning(NodeID(Self.music), false))
        #expect(sessionWrites(sink.take(), subject: Self.music).count == 1)
    }

    @Test func aSessionThatComesAndGoesWithinOneIntervalIsNeverWritten() {
        core.handle(.streamRunning(NodeID(Self.music), false))
        _ = sink.take()
        let c = ClientID(200), n = NodeID(201)
        core.handle(.clientAdded(c, ["application.name": "blip", "pipewire.sec.pid": "4242"]))
        core.handle(.streamAdded(n, client: c, direction: .output, ["media.role": "Notification", "application.name": "blip"]))
        core.handle(.streamRemoved(n))
        core.handle(.clientRemoved(c))
        runPublishTimer()
        let calls = sink.take()
        #expect(calls.metadataWrites.allSatisfy { $0.subject != n.raw && $0.subject != c.raw }, "\(calls)")
        #expect(core.pendingPublicationCount == 0)
    }

    /// A new legacy stream's first moments (made without a route, linked, playing) are not
    /// written one by one: its session is written once, settled, five intervals (100 ms)
    /// after it came (by the timer one interval later when no event comes), and removed
    /// once when it goes.
    @Test func aNewLegacyStreamIsWrittenOnceSettledFiveIntervalsAfterItCame() throws {
        clock.advance(milliseconds: 25)
        let start = clock.nanoseconds
        let c = ClientID(300), n = NodeID(301)
        chimeComes(c, n)
        // The timer is asked for one interval after the wait ends: an event then writes it first.
        #expect(sink.timerRequests.filter { $0.token == Self.token }.map(\.milliseconds) == [120])
        sink.timerRequests.removeAll()
        clock.advance(milliseconds: 10)
        core.handle(.linkAdded(LinkID(302), output: n, input: NodeID(Recorded.headphonesID)))
        clock.advance(milliseconds: 10)
        core.handle(.streamRunning(n, true))
        var calls = sink.take()
        #expect(sessionWrites(calls, subject: n.raw).isEmpty, "\(calls)")
        #expect(calls.events.isEmpty, "\(calls.events)")
        // Other keys are written as before: the global state (one more session plays) at once.
        #expect(calls.metadataWrites.contains { $0.key == "audio-session.global" }, "\(calls)")
        #expect(core.pendingPublicationCount == 1)
        // A timer that fires before the wait ends (another key's) does not write it.
        clock.nanoseconds = start + 99_000_000
        core.timerFired(Self.token)
        #expect(sessionWrites(sink.take(), subject: n.raw).isEmpty)
        #expect(pendingPublishTimer == 21)
        // No event came after the wait: the timer writes it.
        clock.nanoseconds = start + 120_000_000
        core.timerFired(Self.token)
        calls = sink.take()
        let writes = sessionWrites(calls, subject: n.raw)
        #expect(writes.count == 1, "\(calls)")
        let value = try #require(writes.first?.value)
        #expect(value.bool("playing") == true, "\(value)")
        #expect(core.pendingPublicationCount == 0)
        // Written once: it is an old session now, its changes go as every other key's.
        clock.advance(milliseconds: 25)
        core.handle(.streamRunning(n, false))
        #expect(sessionWrites(sink.take(), subject: n.raw).map { $0.value?.bool("playing") } == [false])
        clock.advance(milliseconds: 25)
        core.handle(.streamRemoved(n))
        let removal = sessionWrites(sink.take(), subject: n.raw)
        #expect(removal.count == 1 && removal.first?.value == nil, "\(removal)")
    }

    /// The graph's first event in the last interval of a new session's wait, or after it,
    /// writes it: the timer, there for when no event comes, is parked rather than left to
    /// wake the daemon for nothing.
    @Test func aNewLegacyStreamIsWrittenByTheFirstEventNearTheEndOfItsWaitAndTheTimerIsParked() throws {
        clock.advance(milliseconds: 25)
        let start = clock.nanoseconds
        let c = ClientID(300), n = NodeID(301)
        chimeComes(c, n)
        core.handle(.linkAdded(LinkID(302), output: n, input: NodeID(Recorded.headphonesID)))
        core.handle(.streamRunning(n, true))
        #expect(sessionWrites(sink.take(), subject: n.raw).isEmpty)
        #expect(pendingPublishTimer != nil)
        // More than an interval before the wait ends, an event of the graph (the music
        // linked once more) leaves it waiting.
        clock.nanoseconds = start + 79_000_000
        core.handle(.linkAdded(LinkID(900), output: NodeID(Self.music), input: NodeID(Recorded.headphonesID)))
        #expect(sessionWrites(sink.take(), subject: n.raw).isEmpty)
        // The first event in the wait's last interval writes it, settled.
        clock.nanoseconds = start + 81_000_000
        core.handle(.linkRemoved(LinkID(900)))
        let calls = sink.take()
        let writes = sessionWrites(calls, subject: n.raw)
        #expect(writes.count == 1, "\(calls)")
        #expect(try #require(writes.first?.value).bool("playing") == true)
        #expect(core.pendingPublicationCount == 0)
        // Nothing waits: the timer is parked, not left to fire.
        #expect(pendingPublishTimer == nil)
        #expect(sink.timerRequests.contains { $0.token == Self.token && $0.milliseconds == ModuleCore.parkedMilliseconds })
    }

    /// A stream that plays and goes within its wait (a notification sound) is never
    /// written, and nothing of it is kept.
    @Test func aNewLegacyStreamThatGoesWithinItsWaitIsNeverWritten() {
        clock.advance(milliseconds: 25)
        let records = core.recordCount
        let c = ClientID(300), n = NodeID(301)
        chimeComes(c, n)
        clock.advance(milliseconds: 10)
        core.handle(.linkAdded(LinkID(302), output: n, input: NodeID(Recorded.headphonesID)))
        core.handle(.streamRunning(n, true))
        clock.advance(milliseconds: 60)
        core.handle(.streamRunning(n, false))
        core.handle(.linkRemoved(LinkID(302)))
        core.handle(.streamRemoved(n))
        core.handle(.clientRemoved(c))
        while runPublishTimer() {}
        let calls = sink.take()
        #expect(sessionWrites(calls, subject: n.raw).isEmpty, "\(calls)")
        #expect(core.pendingPublicationCount == 0)
        #expect(core.recordCount == records)
    }

    /// The daemon gives a removed node's id to the next one soon: a new stream with the id
    /// of one whose removal is held is new all the same. The removal is written first, then
    /// the new session once its wait ends.
    @Test func aNewStreamWithTheIdOfOneThatWentIsNewAndTheRemovalIsWrittenFirst() throws {
        let music = NodeID(Self.music)
        // Written at once (quiet), then the music goes within the interval: its removal is held.
        core.handle(.streamRunning(music, false))
        #expect(sessionWrites(sink.take(), subject: Self.music).count == 1)
        clock.advance(milliseconds: 5)
        for l in Recorded.musicLinks { core.handle(.linkRemoved(LinkID(l))) }
        core.handle(.streamRemoved(music))
        #expect(sessionWrites(sink.take(), subject: Self.music).isEmpty)
        #expect(core.pendingPublicationCount > 0)
        // Another program's stream gets the same id.
        clock.advance(milliseconds: 2)
        let start = clock.nanoseconds
        let c = ClientID(300)
        chimeComes(c, music)
        core.handle(.linkAdded(LinkID(302), output: music, input: NodeID(Recorded.headphonesID)))
        core.handle(.streamRunning(music, true))
        let removal = sessionWrites(sink.take(), subject: Self.music)
        #expect(removal.count == 1 && removal.first?.value == nil, "\(removal)")
        // The new session waits as every new one does.
        var writes: [MetadataWrite] = []
        while writes.isEmpty, runPublishTimer() {
            writes = sessionWrites(sink.take(), subject: Self.music)
        }
        #expect(clock.nanoseconds - start >= 100_000_000)
        #expect(writes.count == 1)
        let value = try #require(writes.first?.value)
        #expect(value["application"] as? String == "chime", "\(value)")
        #expect(core.pendingPublicationCount == 0)
    }

    /// A declared session is written at once: its program waits for its state.
    @Test func aNewDeclaredSessionIsWrittenAtOnce() {
        clock.advance(milliseconds: 25)
        let c = ClientID(300)
        core.handle(.clientAdded(c, ["audio.session.category": "ambient", "application.name": "declared"]))
        #expect(sessionWrites(sink.take(), subject: c.raw).count == 1)
    }

    /// A new legacy stream that comes with an event (a call that interrupts the music) is
    /// written with it, in the same turn: a program reading the event finds its state.
    @Test func aNewLegacyStreamThatComesWithAnEventIsWrittenWithIt() throws {
        clock.advance(milliseconds: 25)
        for e in Recorded.phonePlays { core.handle(e) }
        let calls = sink.take()
        #expect(!calls.events.isEmpty, "\(calls)")
        let phone = sessionWrites(calls, subject: Recorded.phoneStreamID)
        #expect(try #require(phone.last?.value).bool("playing") == true, "\(calls)")
        #expect(core.pendingPublicationCount == 0)
    }

    @Test func nothingWaitsAroundAnEvent() throws {
        // The interval runs: the music's stop is held.
        core.handle(.streamRunning(NodeID(Self.music), false))
        core.handle(.streamRunning(NodeID(Self.music), true))
        _ = sink.take()
        // A call: the music is interrupted (an event), in the same interval.
        for e in Recorded.phonePlays { core.handle(e) }
        let calls = sink.take()
        let keys = calls.metadataWrites.map(\.key)
        let event = try #require(keys.firstIndex(of: "audio-session.event"), "\(calls)")
        // The state the call's decision leaves is written with the event, not an interval later.
        let musicState = calls.metadataWrites.indices.filter {
            calls.metadataWrites[$0].key == "audio-session.session" && calls.metadataWrites[$0].subject == Self.music
        }
        #expect(musicState.contains { $0 > event }, "\(keys)")
        let last = try #require(musicState.last.map { calls.metadataWrites[$0].value })
        #expect(last?.bool("playing") == false)
        #expect(core.pendingPublicationCount == 0)
    }

    /// A key held from before an event that the event's decision publishes again is
    /// written once, after the event, with the state the decision leaves: never the held
    /// state first. A held key the decision leaves alone is written before the event.
    @Test func aHeldKeyTheEventPublishesAgainIsWrittenOnlyAfterTheEvent() throws {
        // Held: the music pauses and plays again, and the global state with it.
        core.handle(.streamRunning(NodeID(Self.music), false))
        core.handle(.streamRunning(NodeID(Self.music), true))
        core.handle(.streamRunning(NodeID(Self.music), false))
        #expect(core.pendingPublicationCount > 0)
        _ = sink.take()
        // The music plays again, and a call interrupts it: one decision, with events.
        core.handle(.streamRunning(NodeID(Self.music), true))
        for e in Recorded.phonePlays { core.handle(e) }
        let writes = sink.take().metadataWrites
        let event = try #require(writes.firstIndex { $0.key == "audio-session.event" }, "\(writes)")
        let music = writes.indices.filter { writes[$0].key == "audio-session.session" && writes[$0].subject == Self.music }
        #expect(!music.isEmpty && music.allSatisfy { $0 > event }, "\(writes.map { "\($0.subject) \($0.key)" })")
        #expect(core.pendingPublicationCount == 0)
    }

    @Test func aRecreatedMetadataObjectIsWrittenWholeAtOnce() {
        core.handle(.streamRunning(NodeID(Self.music), false))
        core.handle(.streamRunning(NodeID(Self.music), true))
        _ = sink.take()
        core.republish()
        let calls = sink.take()
        #expect(calls.metadataWrites.filter { $0.key == "audio-session.global" }.count == 1)
        #expect(sessionWrites(calls, subject: Self.music).last?.value?.bool("playing") == true)
        #expect(core.pendingPublicationCount == 0)
    }

    @Test func aBurstOverManySessionsIsWrittenOverSeveralTurns() {
        core.handle(.streamRunning(NodeID(Self.music), false))
        _ = sink.take()
        for i in 0..<100 {
            let c = ClientID(UInt32(1000 + 2 * i)), n = NodeID(UInt32(1001 + 2 * i))
            core.handle(.clientAdded(c, ["application.name": "player\(i)"]))
            core.handle(.streamAdded(n, client: c, direction: .output, ["application.name": "player\(i)"]))
        }
        #expect(sink.take().metadataWrites.isEmpty)
        runPublishTimer()
        let first = sink.take().metadataWrites
        #expect(first.count == 64)
        // The rest on the next turn of the loop.
        #expect(sink.timerRequests.map(\.milliseconds) == [0])
        runPublishTimer()
        let rest = sink.take().metadataWrites
        // Each new session once (legacy streams: the subject is the node).
        let subjects: [UInt32] = (first + rest).map(\.subject).sorted()
        let streams: [UInt32] = (0..<100).map { UInt32(1001 + 2 * $0) }
        #expect(subjects == streams)
    }

    @Test func withoutTimersEveryChangeIsWrittenAtOnce() {
        let immediate = RecordingEffectSink()
        var c = PolicyConfiguration()
        c.publishIntervalMilliseconds = 20
        let core = ModuleCore(configuration: c, effects: immediate)
        for e in Recorded.idleGraph + Recorded.musicPlays { core.handle(e) }
        _ = immediate.take()
        for running in [false, true, false] {
            core.handle(.streamRunning(NodeID(Self.music), running))
            #expect(sessionWrites(immediate.take(), subject: Self.music).count == 1)
        }
    }
}

/// The module keeps the longest time one decision held the daemon's loop (a warning goes
/// to the log past one graph cycle).
@Suite struct DecisionTimeTests {
    @Test func theLongestDecisionIsKept() {
        let sink = RecordingEffectSink()
        let core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
        #expect(core.longestDecisionNanoseconds == 0)
        for e in Recorded.idleGraph + Recorded.musicPlays { core.handle(e) }
        #expect(core.longestDecisionNanoseconds > 0)
        // Far below a graph cycle: nothing was logged as slow.
        #expect(!sink.take().logs.contains { $0.1.contains("held the daemon's loop") })
    }

    /// Held property changes are decided on the loop's next turn: that turn counts too.
    @Test func theHeldChangesDecidedOnTheNextTurnCount() {
        let sink = DeferringEffectSink()
        let core = ModuleCore(configuration: PolicyConfiguration(), effects: sink)
        var declared = Recorded.musicClient
        declared["audio.session.category"] = "playback"
        for _ in 0..<3 { core.handle(.clientChanged(ClientID(Recorded.musicClientID), declared)) }
        #expect(core.pendingChangeCount == 1)
        #expect(core.longestDecisionNanoseconds == 0)
        core.flush()
        #expect(core.pendingChangeCount == 0)
        #expect(core.longestDecisionNanoseconds > 0)
    }
}

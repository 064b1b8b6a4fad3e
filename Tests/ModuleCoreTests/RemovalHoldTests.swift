import AudioSessionCoreABI
import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// A stream that leaves a quiet graph waits, with its stop, for what its program does next,
/// and so does a stream that starts there without touching another: the start, the removal,
/// the next stream and that stream's first link are one decision. Anything else, or the
/// wait's end, decides them first; in a graph where a program waits for them (a call, a
/// pause), they are decided at once.
@Suite struct RemovalHoldTests {
    let sink = DeferringTimingEffectSink()
    let clock = TestClock()
    let core: ModuleCore
    static let token = ModuleCore.publishTimerToken
    static let client = ClientID(Recorded.musicClientID)
    static let first = NodeID(Recorded.musicStreamID), next = NodeID(70)
    static let headphones = NodeID(Recorded.headphonesID)

    /// A stream without a role: a legacy session that mixes with others.
    static var chime: Properties {
        var p = Recorded.musicStream
        p["media.role"] = nil
        return p
    }

    init() {
        core = sink.core(clock: clock)
        play(Self.first, links: Recorded.musicLinks)
        endTheWait()
        #expect(core.policy.snapshot().streams[Self.first]?.running == true)
        _ = sink.take()
    }

    /// The stream appears, is linked (two ports) and runs, as the daemon reports it.
    func play(_ n: NodeID, links: [UInt32]) {
        core.handle(.streamAdded(n, client: Self.client, direction: .output, Self.chime))
        core.handle(.streamActivatedByOwner(n))
        for l in links { core.handle(.linkAdded(LinkID(l), output: n, input: Self.headphones)) }
        core.handle(.streamRunning(n, true))
        core.flush()
    }

    /// Runs the publishing timer out, as the module's loop would, until nothing waits; the
    /// time that took (ns).
    @discardableResult
    func endTheWait() -> UInt64 {
        let start = clock.nanoseconds
        var fired = 0
        while core.pendingChangeCount > 0, fired < 10, firePublishingTimer() { fired += 1 }
        #expect(core.pendingChangeCount == 0)
        return clock.nanoseconds - start
    }

    /// Runs the publishing timer out, as the module's loop would, until it is parked.
    func runThePublishingTimerOut() {
        while firePublishingTimer() {}
    }

    /// Fires the publishing timer at its due time (the clock moves there) if the core armed
    /// it; whether it had.
    func firePublishingTimer() -> Bool {
        guard let i = sink.timerRequests.lastIndex(where: { $0.token == Self.token && $0.milliseconds != ModuleCore.parkedMilliseconds })
        else { return false }
        let request = sink.timerRequests.remove(at: i)
        sink.timerRequests.removeAll { $0.token == Self.token }
        clock.advance(milliseconds: UInt64(request.milliseconds))
        core.timerFired(Self.token)
        return true
    }

    /// Whatever is left to write is written; then the next stream plays and its start waits,
    /// until 5 ms before its session's own wait (100 ms) ends.
    func playTheNextUntilItsSessionsWaitAlmostEnds() {
        runThePublishingTimerOut()
        clock.advance(milliseconds: 20)
        _ = sink.take()
        play(Self.next, links: [80, 81])
        #expect(core.pendingChangeCount == 1, "the start waits")
        clock.advance(milliseconds: 95)
    }

    /// The writes of stream `n`'s session among `calls`.
    func sessionWrites(_ calls: [EffectCall], _ n: NodeID) -> [MetadataWrite] {
        calls.metadataWrites.filter { $0.key == "audio-session.session" && $0.subject == n.raw }
    }

    /// The daemon destroys a running stream: it stops it, removes it, then its links.
    func destroy(_ n: NodeID, links: [UInt32]) {
        core.handle(.streamRunning(n, false))
        core.handle(.streamRemoved(n))
        for l in links { core.handle(.linkRemoved(LinkID(l))) }
        core.flush()
    }

    @Test func aQuietStreamsRemovalTheNextStreamAndItsLinkAreOneDecision() {
        let before = core.decisionCount
        destroy(Self.first, links: Recorded.musicLinks)
        #expect(core.decisionCount == before)
        #expect(core.policy.hasStream(Self.first))
        core.handle(.streamAdded(Self.next, client: Self.client, direction: .output, Self.chime))
        core.handle(.streamActivatedByOwner(Self.next))
        core.flush()
        #expect(core.decisionCount == before)
        core.handle(.linkAdded(LinkID(80), output: Self.next, input: Self.headphones))
        #expect(core.decisionCount == before + 1)
        #expect(!core.policy.hasStream(Self.first))
        #expect(core.policy.hasStream(Self.next))
        #expect(core.policy.snapshot().links.keys.map(\.raw).sorted() == [80])
        #expect(core.pendingChangeCount == 0)
        // The start waits in the quiet graph.
        core.handle(.streamRunning(Self.next, true))
        #expect(core.decisionCount == before + 1)
        #expect(core.policy.snapshot().streams[Self.next]?.running == false)
        #expect(core.pendingChangeCount == 1)
    }

    /// A program replaces its stream with another: the new one's start waits, and rides with
    /// the next replacement (the start, the stop and removal, the next stream and its link).
    @Test func aStartTheNextRemovalTheNextStreamAndItsLinkAreOneDecision() {
        let second = NodeID(71)
        play(Self.next, links: [80, 81])
        #expect(core.pendingChangeCount == 1, "the start waits")
        let before = core.decisionCount
        destroy(Self.first, links: Recorded.musicLinks)
        core.handle(.streamAdded(second, client: Self.client, direction: .output, Self.chime))
        core.handle(.linkAdded(LinkID(82), output: second, input: Self.headphones))
        #expect(core.decisionCount == before + 1)
        #expect(core.policy.snapshot().streams[Self.next]?.running == true)
        #expect(!core.policy.hasStream(Self.first))
        #expect(core.policy.hasStream(second))
        #expect(core.pendingChangeCount == 0)
    }

    /// A program that keeps replacing its streams, each made once the last one plays: the
    /// new stream's session, whose wait ends while the stream's start still waits for the
    /// next replacement, is written once, playing, when that start is decided; not first
    /// with the state the start is about to change.
    @Test func aNewSessionWhoseStartWaitsIsWrittenOnceWhenTheStartIsDecided() throws {
        // The new session's wait ends within the next interval: the first stream goes now,
        // and its stop and removal wait too.
        playTheNextUntilItsSessionsWaitAlmostEnds()
        destroy(Self.first, links: Recorded.musicLinks)
        var calls = sink.take()
        #expect(sessionWrites(calls, Self.next).isEmpty, "\(calls)")
        // The next stream and its link: the start is decided with them, and written.
        let second = NodeID(71)
        core.handle(.streamAdded(second, client: Self.client, direction: .output, Self.chime))
        core.handle(.linkAdded(LinkID(82), output: second, input: Self.headphones))
        calls = sink.take()
        let writes = sessionWrites(calls, Self.next)
        #expect(writes.count == 1, "\(calls)")
        #expect(try #require(writes.first?.value).bool("playing") == true)
        // Nothing else is left to write it again.
        runThePublishingTimerOut()
        #expect(sessionWrites(sink.take(), Self.next).isEmpty)
    }

    /// A new stream that goes as its session's wait ends, while its start waits: its stop
    /// and removal wait too, and its session, never written, is never written.
    @Test func aNewSessionWhoseStreamGoesWhileItsStartWaitsIsNeverWritten() {
        playTheNextUntilItsSessionsWaitAlmostEnds()
        destroy(Self.next, links: [80, 81])
        #expect(core.pendingChangeCount == 2, "the start and the removal wait")
        runThePublishingTimerOut()
        #expect(!core.policy.hasStream(Self.next))
        #expect(core.pendingChangeCount == 0)
        let calls = sink.take()
        #expect(sessionWrites(calls, Self.next).isEmpty, "\(calls)")
    }

    /// PipeWire gives a new node the id of one just removed: the new stream, its link and its
    /// quick end wait after the old one's removal and are decided in order.
    @Test func aNewStreamWithTheIdOfOneWhoseRemovalWaitsIsDecidedAfterIt() {
        destroy(Self.first, links: Recorded.musicLinks)
        core.handle(.streamAdded(Self.first, client: Self.client, direction: .output, Self.chime))
        core.handle(.streamRemoved(Self.first))
        core.flush()
        #expect(core.pendingChangeCount == 0)
        #expect(!core.policy.hasStream(Self.first))
        core.handle(.streamAdded(Self.first, client: Self.client, direction: .output, Self.chime))
        core.handle(.linkAdded(LinkID(90), output: Self.first, input: Self.headphones))
        #expect(core.policy.snapshot().streams[Self.first]?.running == false)
        #expect(core.policy.snapshot().links.keys.map(\.raw) == [90])
        #expect(core.pendingChangeCount == 0)
    }

    /// While a call plays, a stream's start is decided at once: it may be held back.
    @Test func aStartWhileACallPlaysIsDecidedAtOnce() {
        for e in Recorded.phonePlays { core.handle(e) }
        core.flush()
        #expect(core.policy.snapshot().streams[NodeID(Recorded.phoneStreamID)]?.running == true)
        play(Self.next, links: [80, 81])
        #expect(core.pendingChangeCount == 0)
        #expect(core.policy.snapshot().streams[Self.next] != nil)
    }

    /// A removal nothing follows is decided when its wait (150 ms) is over, by the timer.
    @Test func aRemovalNothingFollowsIsDecidedAfterItsWait() {
        destroy(Self.first, links: Recorded.musicLinks)
        #expect(core.policy.hasStream(Self.first))
        #expect(endTheWait() == 150_000_000)
        #expect(!core.policy.hasStream(Self.first))
        #expect(core.policy.snapshot().links.isEmpty)
    }

    /// Anything else that happens decides the held removal first, with its stop.
    @Test func anyOtherEventDecidesTheHeldRemovalFirst() {
        destroy(Self.first, links: Recorded.musicLinks)
        let before = core.decisionCount
        var p = Recorded.musicClient
        p["audio.session.category"] = "ambient"
        core.handle(.clientChanged(Self.client, p))
        core.flush()
        #expect(!core.policy.hasStream(Self.first))
        #expect(core.policy.sessions[.client(Self.client)]?.category == .ambient)
        // The stop and the removal in one step, then the change.
        #expect(core.decisionCount == before + 2)
        #expect(core.pendingChangeCount == 0)
    }

    /// While a call plays, a stream's removal is decided at once: a program may wait for it.
    @Test func aRemovalWhileACallPlaysIsDecidedAtOnce() {
        for e in Recorded.phonePlays { core.handle(e) }
        core.flush()
        let phone = NodeID(Recorded.phoneStreamID)
        #expect(core.policy.snapshot().streams[phone]?.running == true)
        let before = core.decisionCount
        core.handle(.streamRunning(phone, false))
        core.handle(.streamRemoved(phone))
        #expect(core.decisionCount == before + 1)
        #expect(!core.policy.hasStream(phone))
        #expect(core.pendingChangeCount == 0)
    }
}

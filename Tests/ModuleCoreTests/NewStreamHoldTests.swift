import AudioSessionCoreABI
import AudioSessionModuleCore
import SessionPolicy
import PipeWireFacts
import Testing

/// A recording sink with the loop's turns and the module's timers.
final class DeferringTimingEffectSink: RecordingEffectSink {
    override var defers: Bool { true }
    override var timers: Bool { true }

    /// A core on this sink, publishing every 20 ms on `clock`, that knows the recorded idle
    /// graph and the music client (its effects taken).
    func core(clock: TestClock) -> ModuleCore {
        var c = PolicyConfiguration()
        c.publishIntervalMilliseconds = 20
        let core = ModuleCore(configuration: c, effects: self, clock: { clock.nanoseconds })
        for e in Recorded.idleGraph { core.handle(e) }
        core.handle(.clientAdded(ClientID(Recorded.musicClientID), Recorded.musicClient))
        _ = take()
        return core
    }
}

/// A new stream carries no sound before it is linked: the core holds it until its first
/// link and decides the two in one step; any other event, or its wait, decides it first.
@Suite struct NewStreamHoldTests {
    let sink = DeferringTimingEffectSink()
    let clock = TestClock()
    let core: ModuleCore
    static let token = ModuleCore.publishTimerToken
    static let stream = NodeID(Recorded.musicStreamID), client = ClientID(Recorded.musicClientID)

    init() {
        core = sink.core(clock: clock)
    }

    var added: Event {
        .streamAdded(Self.stream, client: Self.client, direction: .output, Recorded.musicStream)
    }
    var firstLink: Event {
        .linkAdded(LinkID(Recorded.musicLinks[0]), output: Self.stream, input: NodeID(Recorded.headphonesID))
    }

    @Test func aNewStreamAndItsFirstLinkAreOneDecision() {
        let before = core.decisionCount
        core.handle(added)
        core.handle(.streamActivatedByOwner(Self.stream))
        core.flush()
        #expect(core.decisionCount == before)
        #expect(!core.policy.hasStream(Self.stream))
        core.handle(firstLink)
        #expect(core.decisionCount == before + 1)
        #expect(core.policy.hasStream(Self.stream))
        #expect(core.policy.snapshot().links[LinkID(Recorded.musicLinks[0])] != nil)
        #expect(core.pendingChangeCount == 0)
    }

    /// A stream no link comes for is decided when its wait (150 ms) is over, by the timer.
    @Test func aNewStreamNoLinkComesForIsDecidedAfterItsWait() {
        let start = clock.nanoseconds
        core.handle(added)
        core.flush()
        // The timer runs out as the module's loop would run it (earlier for what else waits).
        var fired = 0
        while !core.policy.hasStream(Self.stream), fired < 10,
              let i = sink.timerRequests.lastIndex(where: { $0.token == Self.token && $0.milliseconds != ModuleCore.parkedMilliseconds }) {
            let request = sink.timerRequests.remove(at: i)
            sink.timerRequests.removeAll { $0.token == Self.token }
            clock.advance(milliseconds: UInt64(request.milliseconds))
            #expect(core.policy.hasStream(Self.stream) == false)
            core.timerFired(Self.token)
            fired += 1
        }
        #expect(core.policy.hasStream(Self.stream))
        #expect(clock.nanoseconds - start == 150_000_000)
        #expect(core.pendingChangeCount == 0)
    }

    /// Any other event decides the held stream first, then its owner's activation, then itself.
    @Test func anyOtherEventDecidesTheHeldStreamFirst() {
        core.handle(added)
        core.handle(.streamActivatedByOwner(Self.stream))
        let before = core.decisionCount
        core.handle(.streamRunning(Self.stream, true))
        #expect(core.policy.hasStream(Self.stream))
        #expect(core.policy.snapshot().streams[Self.stream]?.running == true)
        #expect(core.decisionCount == before + 2)
        #expect(core.pendingChangeCount == 0)
    }

    /// A property change held while a new stream waits still asks for the loop's next turn,
    /// which decides both, in order.
    @Test func aPropertyChangeWhileANewStreamWaitsIsDecidedOnTheNextTurn() {
        core.handle(added)
        let requests = sink.flushRequests
        var p = Recorded.musicClient
        p["audio.session.category"] = "ambient"
        core.handle(.clientChanged(Self.client, p))
        #expect(sink.flushRequests == requests + 1)
        core.flush()
        #expect(core.policy.hasStream(Self.stream))
        #expect(core.policy.sessions[.client(Self.client)]?.category == .ambient)
        #expect(core.pendingChangeCount == 0)
    }
}

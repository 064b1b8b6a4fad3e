import PropertyBased
import PipeWireFacts
@testable import SessionPolicy
import Testing

/// A new stream carries no sound before it is linked: the module holds it until its first
/// link and hands the policy both (and the owner's activation in between) in one step
/// (`handleAddAndLink`).
@Suite struct AddAndLinkTests {
    @Test("A new stream and its first link decided together leave the policy as decided one after the other")
    func aNewStreamAndItsFirstLinkDecidedTogetherLeaveThePolicyAsDecidedApart() async {
        await propertyCheck(count: 400, input: RandomGraph.sequences) { codes in
            var apart = SessionPolicy(), together = SessionPolicy()
            var compared = 0
            for (i, code) in codes.enumerated() {
                let event = RandomGraph.event(code)
                if case .streamAdded(let n, _, let direction, _) = event, apart.snapshot().streams[n] == nil,
                   apart.snapshot().relays[n] == nil {
                    // Its first link: to the headphones, the speaker, or from the microphone.
                    let e = NodeID([50, 60, 5][Int(code) % 3])
                    let l = LinkID(UInt32(200 + i))
                    let link: Event = direction == .input || e == NodeID(5)
                        ? .linkAdded(l, output: e, input: n) : .linkAdded(l, output: n, input: e)
                    let activated = code % 2 == 0
                    var steps = [event]
                    if activated { steps.append(.streamActivatedByOwner(n)) }
                    steps.append(link)
                    let heardApart = StopAndRemovalTests.heardDecidingApart(steps, &apart)
                    var fx: [Effect] = []
                    together.handleAddAndLink(event, activated: activated, link: link, into: &fx)
                    let heardTogether = StopAndRemovalTests.heardWithEchoes(fx, &together)
                    #expect(heardTogether == heardApart, "\(event) then \(link)")
                    #expect(together.snapshot() == apart.snapshot(), "\(event) then \(link)")
                    compared += 1
                    guard heardTogether == heardApart && together.snapshot() == apart.snapshot() else { return }
                    continue
                }
                for echo in moduleEchoes(of: apart.handle(event)) { _ = apart.handle(echo) }
                for echo in moduleEchoes(of: together.handle(event)) { _ = together.handle(echo) }
                // Streams play: a new stream's decision then meets others running.
                if case .linkAdded = event {
                    for n in idleStreams(apart) {
                        _ = StopAndRemovalTests.heardDecidingApart([.streamRunning(n, true)], &apart)
                        _ = StopAndRemovalTests.heardDecidingApart([.streamRunning(n, true)], &together)
                    }
                }
            }
            _ = compared
        }
    }

    /// A player interrupted by a call makes a new stream, starts it and it is linked: decided
    /// together or apart, the stream is held back when it starts to run, and the policy is
    /// left the same.
    @Test func anInterruptedPlayersNewStreamIsHeldBackWhenItRunsTogetherAsApart() {
        var apart = SessionPolicy()
        let setup: [Event] = [
            .endpointAdded(N(50), kind: .sink, headphonesProps),
            .clientAdded(C(2), ["audio.session.category": "playback", "audio.session.active": "true"]),
            .streamAdded(N(11), client: C(2), direction: .output, [:]),
            .linkAdded(L(100), output: N(11), input: N(50)),
            .streamRunning(N(11), true),
            .clientAdded(C(1), ["audio.session.category": "playAndRecord", "audio.session.mode": "voiceChat",
                                "audio.session.active": "true"]),
            .streamAdded(N(10), client: C(1), direction: .output, [:]),
            .linkAdded(L(101), output: N(10), input: N(50)),
            .streamRunning(N(10), true),
        ]
        for e in setup { for echo in moduleEchoes(of: apart.handle(e)) { _ = apart.handle(echo) } }
        #expect(apart.holdsPaused(N(11)))
        var together = apart
        let add = Event.streamAdded(N(12), client: C(2), direction: .output, [:])
        let link = Event.linkAdded(L(102), output: N(12), input: N(50))
        let heardApart = StopAndRemovalTests.heardDecidingApart([add, .streamActivatedByOwner(N(12)), link, .streamRunning(N(12), true)], &apart)
        var fx: [Effect] = []
        together.handleAddAndLink(add, activated: true, link: link, into: &fx)
        var heardTogether = StopAndRemovalTests.heardWithEchoes(fx, &together)
        heardTogether += StopAndRemovalTests.heardDecidingApart([.streamRunning(N(12), true)], &together)
        #expect(heardApart.contains(.pause(N(12))), "\(heardApart)")
        #expect(heardTogether == heardApart)
        let same = together.snapshot() == apart.snapshot()
        #expect(same)
        #expect(together.holdsPaused(N(12)))
    }
}

import PropertyBased
import PipeWireFacts
@testable import SessionPolicy
import Testing

/// The module skips an event the policy says asks nothing (`asksNothing(_:)`): it must be
/// one that, decided, would change nothing and emit nothing.
@Suite struct AsksNothingTests {
    @Test("An event that asks nothing, decided anyway, changes nothing and emits nothing")
    func anEventThatAsksNothingChangesNothingAndEmitsNothing() async {
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            var policy = SessionPolicy()
            var events: [Event] = []
            for code in codes {
                let event = RandomGraph.event(code)
                events.append(event)
                // A removed stream's links, as the daemon removes them after the node.
                if case .streamRemoved(let n) = event {
                    for (l, link) in policy.snapshot().links.sorted(by: { $0.key < $1.key }) where link.output == n || link.input == n {
                        events.append(.linkRemoved(l))
                    }
                }
            }
            for event in events {
                if policy.asksNothing(event) {
                    let before = policy.snapshot()
                    let effects = policy.handle(event)
                    #expect(effects.isEmpty, "\(event): \(effects)")
                    #expect(policy.snapshot() == before, "\(event)")
                    if !effects.isEmpty || policy.snapshot() != before { return }
                } else {
                    for echo in moduleEchoes(of: policy.handle(event)) { _ = policy.handle(echo) }
                }
            }
        }
    }

    /// The daemon removes a stream's node before its links; the policy forgets the links
    /// with the stream, so their removal, one decision per stream that goes, asks nothing.
    @Test func theLinksOfARemovedStreamAskNothingWhenTheyGo() {
        var policy = SessionPolicy()
        _ = policy.handle(.endpointAdded(N(50), kind: .sink, headphonesProps))
        _ = policy.handle(.clientAdded(C(1), [:]))
        _ = policy.handle(.streamAdded(N(10), client: C(1), direction: .output, ["media.role": "Music"]))
        _ = policy.handle(.linkAdded(L(100), output: N(10), input: N(50)))
        _ = policy.handle(.streamRunning(N(10), true))
        /// Whether the removal of `l` asks nothing, asked both ways.
        func asksNothing(_ l: LinkID) -> (copied: Bool, inPlace: Bool) {
            var inPlace = policy
            return (policy.asksNothing(.linkRemoved(l)), inPlace.asksNothingInPlace(.linkRemoved(l)))
        }
        let whileLinked = asksNothing(L(100))
        #expect(!whileLinked.copied && !whileLinked.inPlace)
        _ = policy.handle(.streamRunning(N(10), false))
        _ = policy.handle(.streamRemoved(N(10)))
        let afterRemoval = asksNothing(L(100))
        #expect(afterRemoval.copied && afterRemoval.inPlace)
        // A link never added asks nothing either; one the policy knows does.
        let neverAdded = asksNothing(L(7))
        #expect(neverAdded.copied && neverAdded.inPlace)
        _ = policy.handle(.linkAdded(L(7), output: N(5), input: N(50)))
        let added = asksNothing(L(7))
        #expect(!added.copied && !added.inPlace)
    }
}

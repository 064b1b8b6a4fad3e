import PropertyBased
import PipeWireFacts
@testable import SessionPolicy
import Testing

/// The caches and indexes that keep a decision cheap (cached traits, streams by client in
/// node order, membership of the activity sets) must always equal a recomputation.
@Suite("Derived state (caches and indexes)")
struct DerivedStateTests {
    @Test("After every event of any sequence, the index equals one rebuilt from the model")
    func theIndexEqualsOneRebuiltFromTheModelAfterEveryEvent() async {
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            var policy = SessionPolicy()
            for code in codes {
                let event = RandomGraph.event(code)
                for echo in moduleEchoes(of: policy.handle(event)) { _ = policy.handle(echo) }
                let ok = policy.indexIsConsistent()
                let diff = ok ? [] : policy.indexDifferences()
                #expect(ok, "\(event): \(diff)")
                if !ok { return }
            }
            let restored = SessionPolicy(restoring: policy.snapshot())
            #expect(restored.indexIsConsistent())
        }
    }

    @Test("A client's streams stay in node order whatever the order they come and go")
    func aClientsStreamsStayInNodeOrderWhateverTheOrderTheyComeAndGo() {
        var list: NodeList = []
        for raw: UInt32 in [7, 3, 9, 3, 1, 8] { list.insert(N(raw)) }
        #expect(list.sorted() == [N(1), N(3), N(7), N(8), N(9)])
        #expect(list.remove(N(7)) == N(7))
        #expect(list.remove(N(7)) == nil)
        #expect(list.contains(N(8)) && !list.contains(N(7)))
        #expect(Array(list) == [N(1), N(3), N(8), N(9)])
    }

    @Test("R22 the hint reaches every active session when another client's primary audio starts and stops")
    func r22TheHintReachesEveryActiveSessionWhenAnotherClientsPrimaryAudioStartsAndStops() {
        var w = World()
        for i: UInt32 in 0..<5 {
            w.legacy(10 + i, client: 2 + i, role: nil)  // desktop: playback + mixWithOthers
            w.play(10 + i)
        }
        w.legacy(30, client: 20, role: "Music")
        let on = w.decide(.streamRunning(N(30), true))
        #expect(on == (0..<5).map { .notify(legacyS(10 + $0), .silenceSecondaryAudioHint(begin: true)) })
        let off = w.decide(.streamRunning(N(30), false))
        #expect(off == (0..<5).map { .notify(legacyS(10 + $0), .silenceSecondaryAudioHint(begin: false)) })
    }
}

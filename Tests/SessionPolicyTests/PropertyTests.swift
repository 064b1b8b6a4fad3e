import PropertyBased
import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Invariants over random event sequences")
struct PropertyTests {
    @Test("Pauses match resumes or ends, effects name known streams, gains stay in [duck level, 1], began/ended alternate")
    func pausesMatchResumesEffectsNameKnownStreamsGainsStayInRangeBeganAndEndedAlternate() async {
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            var checker = InvariantChecker()
            for code in codes { checker.run(RandomGraph.event(code)) }
            // Every remaining pause is matched by the stream's end.
            for n in checker.policy.snapshot().streams.keys.sorted() { checker.run(.streamRemoved(n)) }
            #expect(checker.paused.isEmpty)
            #expect(checker.problems == [])
        }
    }

    @Test("R42 with the module's fades, the module's silence reports coming at any point: the same invariants, began only once silent, no stream plays held silent")
    func withFadesTheInvariantsHoldAndBeganFollowsTheSilence() async {
        var fades = PolicyConfiguration()
        fades.fadeOutMilliseconds = 300
        fades.fadeInMilliseconds = 500
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            // Every seventh code is the module's report that a stream's fade reached silence.
            let events = codes.map { code in
                code % 7 == 0 ? Event.streamFadedOut(N(10 + code / 7 % 6)) : RandomGraph.event(code)
            }
            let problems = invariantProblems(events, configuration: fades)
            #expect(problems == [])
        }
    }

    @Test("A policy restored from the model after any sequence has the same state and makes the same decisions")
    func aPolicyRestoredFromTheModelHasTheSameStateAndMakesTheSameDecisions() async {
        await propertyCheck(count: 300, input: RandomGraph.sequences, RandomGraph.sequences) { codes, more in
            var original = SessionPolicy()
            for code in codes { _ = original.handle(RandomGraph.event(code)) }
            var rebuilt = SessionPolicy(restoring: original.snapshot())
            #expect(rebuilt.snapshot() == original.snapshot())
            #expect(rebuilt.sessions == original.sessions)
            for code in more {
                let event = RandomGraph.event(code)
                let a = decisions(original.handle(event))
                let b = decisions(rebuilt.handle(event))
                #expect(a == b, "\(event)")
                if a != b { return }
            }
            #expect(rebuilt.snapshot() == original.snapshot())
        }
    }
}

import PropertyBased
@testable import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Invariants over random event sequences")
struct PropertyTests {
    /// Every seventh code is the module's report that a stream's fade reached silence.
    static func eventOrFadeReport(_ code: UInt32) -> Event {
        code % 7 == 0 ? Event.streamFadedOut(N(10 + code / 7 % 6)) : RandomGraph.event(code)
    }

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

    @Test("Nothing is kept of what has gone: once every link, stream, endpoint and client has left and the timers have run, the policy holds no state for any of them")
    func onceEverythingHasGoneNothingIsKept() async {
        let fades = PolicyConfiguration.moduleFades
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            var policy = SessionPolicy(configuration: fades)
            var timers: Set<UInt64> = []
            func run(_ e: Event) {
                for effect in policy.handle(e) {
                    if case .scheduleTimer(let token, _) = effect { timers.insert(token) }
                }
            }
            for code in codes {
                run(Self.eventOrFadeReport(code))
                if code % 11 == 0 {
                    run(.playerReportChanged(C(UInt32(code % 3 + 1)), PlayerReport(governed: [N(10 + code % 6): "p"], released: [N(10 + code % 6)])))
                }
            }
            let m = policy.snapshot()
            for l in m.links.keys.sorted() { run(.linkRemoved(l)) }
            for n in m.streams.keys.sorted() { run(.streamRemoved(n)) }
            for n in m.relays.keys.sorted() { run(.streamRemoved(n)) }
            // The module reads the routes of endpoint nodes it knows, and announces each
            // one's removal: a reading taken before the node was added goes with it.
            for n in Set(m.endpoints.keys).union(m.earlyRoutes.keys).sorted() { run(.endpointRemoved(n)) }
            for c in m.clients.keys.sorted() { run(.clientRemoved(c)) }
            while let token = timers.min() {
                timers.remove(token)
                run(.timerFired(token))
            }
            let left = policy.snapshot()
            #expect(left.clients.isEmpty && left.streams.isEmpty && left.endpoints.isEmpty && left.links.isEmpty)
            #expect(left.relays.isEmpty && left.monitors.isEmpty && left.earlyRoutes.isEmpty)
            #expect(left.playerReports.isEmpty && left.switchRequests.isEmpty && left.publishedPlayers.isEmpty)
            #expect(left.marks.isEmpty, "\(left.marks)")
            #expect(left.held.isEmpty && left.published.isEmpty, "\(left.held) \(left.published.keys)")
        }
    }

    @Test("R42 with the module's fades, the module's silence reports coming at any point: the same invariants, began only once silent, no stream plays held silent")
    func withFadesTheInvariantsHoldAndBeganFollowsTheSilence() async {
        let fades = PolicyConfiguration.moduleFades
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            let events = codes.map(Self.eventOrFadeReport)
            let problems = invariantProblems(events, configuration: fades)
            #expect(problems == [])
        }
    }

    @Test("R43 listening to outputs, the module's reports of sound coming at any point: the same invariants, listening started and stopped once each, only for outputs not yet heard, within the bound, the index equal to a rebuild")
    func listeningToOutputsKeepsTheInvariants() async {
        var listens = PolicyConfiguration()
        listens.listensToOutputs = true
        listens.listenedStreamsPerProgram = 2
        listens.listenedStreamsInAll = 3
        await propertyCheck(count: 300, input: RandomGraph.sequences) { codes in
            // Every fifth code is the module's report that a stream carried sound; the
            // streams share one process, so their program captures and plays as one.
            let events = codes.map { code -> Event in
                if code % 5 == 0 { return .streamHeard(N(10 + code / 5 % 6)) }
                let k = Int(code)
                guard k % 22 == 3, code % 3 != 0 else { return RandomGraph.event(code) }
                let a = (k / 22) % 6
                var props = RandomGraph.streamVariants[k / 792 % RandomGraph.streamVariants.count]
                props["application.process.id"] = "77"
                return .streamAdded(N(UInt32(10 + a)), client: C(UInt32(a % 3 + 1)), direction: a == 5 ? .input : .output, props)
            }
            // A program (process 77) records from the microphone from the start.
            let recording: [Event] = [
                RandomGraph.endpointEvent(2), .clientAdded(C(3), ["application.process.id": "77"]),
                .streamAdded(N(15), client: C(3), direction: .input, [:]), .linkAdded(L(130), output: N(5), input: N(15)),
                .streamRunning(N(15), true),
            ]
            let problems = invariantProblems(recording + events, configuration: listens)
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

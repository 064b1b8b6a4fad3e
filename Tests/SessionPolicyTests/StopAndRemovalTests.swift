import PropertyBased
import PipeWireFacts
@testable import SessionPolicy
import Testing

/// The daemon stops a running node as it destroys it: the module hands the policy the
/// stop and the removal together (`handleStopAndRemoval(of:)`), decided in one step.
@Suite struct StopAndRemovalTests {
    /// What programs and the graph hear of decisions, each in the order it hears it:
    /// notifications by the session they go to; pauses, resumes, fades and listening by the
    /// stream they act on. Publications and gains are the state a decision leaves, and the
    /// state between two facts decided together is not published; the order between two
    /// programs' notifications is no program's to see.
    struct Heard: Equatable, CustomStringConvertible {
        var byRecipient: [String: [Effect]] = [:]

        init(_ effects: [Effect] = []) { add(effects) }

        mutating func add(_ effects: [Effect]) {
            for e in effects {
                switch e {
                case .notify(let s, _): byRecipient["\(s)", default: []].append(e)
                case .pause(let n), .resume(let n), .fade(let n, _, _), .listen(let n, _):
                    byRecipient["\(n)", default: []].append(e)
                default: break
                }
            }
        }

        var isEmpty: Bool { byRecipient.isEmpty }
        func contains(_ e: Effect) -> Bool { byRecipient.values.contains { $0.contains(e) } }
        static func += (lhs: inout Heard, rhs: Heard) {
            for (k, v) in rhs.byRecipient { lhs.byRecipient[k, default: []] += v }
        }
        var description: String {
            byRecipient.keys.sorted().map { "\($0): \(byRecipient[$0] ?? [])" }.joined(separator: "; ")
        }
    }

    /// What is heard of `effects` and of the module's echoes of them, which `policy` decides.
    static func heardWithEchoes(_ effects: [Effect], _ policy: inout SessionPolicy) -> Heard {
        var out = Heard(effects)
        for echo in moduleEchoes(of: effects) { out.add(policy.handle(echo)) }
        return out
    }

    /// What is heard of deciding `events` one after the other, each with its echoes.
    static func heardDecidingApart(_ events: [Event], _ policy: inout SessionPolicy) -> Heard {
        var out = Heard()
        for e in events { out += heardWithEchoes(policy.handle(e), &policy) }
        return out
    }

    @Test("A stop and a removal decided together leave the policy as decided one after the other")
    func aStopAndARemovalDecidedTogetherLeaveThePolicyAsDecidedOneAfterTheOther() async {
        await propertyCheck(count: 400, input: RandomGraph.sequences) { codes in
            var apart = SessionPolicy(), together = SessionPolicy()
            /// Removes `n` from both: stopped and removed one after the other, and together.
            func compareRemoval(_ n: NodeID) -> Bool {
                let heardApart = Self.heardDecidingApart([.streamRunning(n, false), .streamRemoved(n)], &apart)
                var fx: [Effect] = []
                together.handleStopAndRemoval(of: n, into: &fx)
                let heardTogether = Self.heardWithEchoes(fx, &together)
                #expect(heardTogether == heardApart, "\(n)")
                #expect(together.snapshot() == apart.snapshot(), "\(n)")
                return together.snapshot() == apart.snapshot() && heardTogether == heardApart
            }
            for code in codes {
                let event = RandomGraph.event(code)
                if case .streamRemoved(let n) = event, apart.snapshot().streams[n]?.running == true {
                    guard compareRemoval(n) else { return }
                    continue
                }
                // Every stream made starts: most removals then find one running.
                var events = [event]
                if case .streamAdded(let n, _, _, _) = event { events.append(.streamRunning(n, true)) }
                for e in events {
                    for echo in moduleEchoes(of: apart.handle(e)) { _ = apart.handle(echo) }
                    for echo in moduleEchoes(of: together.handle(e)) { _ = together.handle(echo) }
                }
            }
            // Then every stream that runs goes, one by one, from whatever state the sequence left.
            while let n = apart.snapshot().streams.filter({ $0.value.running }).keys.min() {
                guard compareRemoval(n) else { return }
            }
        }
    }
}

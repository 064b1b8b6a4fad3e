import SessionPolicy
import PipeWireFacts
import Testing

/// A ducked session's published state (first found by the module's integration tests on
/// the live graph).
@Suite struct PublishedDuckGainTests {
    @Test("R3 a ducked session's published duckGain follows the duck")
    func r3ADuckedSessionsPublishedDuckGainFollowsTheDuck() {
        var w = World()
        w.legacy(10, client: 2, role: "Music")
        w.play(10)
        w.legacy(20, client: 3, role: "Navigation")
        let out = w.when(.streamRunning(N(20), true))
        #expect(out.contains(.duck(N(10), gain: 0.2, rampMilliseconds: 250)), "\(out)")
        #expect(w.session(legacyS(10))?.duckGain == 0.2)
        let published = out.contains {
            if case .publishSession(let s, let snap) = $0 { return s == legacyS(10) && snap?.duckGain == 0.2 }
            return false
        }
        #expect(published, "\(out)")
    }
}

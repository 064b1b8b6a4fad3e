import SessionPolicy
import PipeWireFacts
import Testing

@Suite struct StreamCarriedDeclarationTests {
    @Test("R1 a session whose declaration came from a stream that goes away takes its next stream's, and is arbitrated again")
    func r1ASessionWhoseDeclaringStreamGoesTakesItsNextStreamsDeclarationAndIsArbitratedAgain() {
        var w = World()
        w.sink(50, headphonesProps)
        w.client(1, ["application.name": "wrapped"])
        w.stream(10, client: 1, .output, ["audio.session.category": "ambient"])
        w.stream(11, client: 1, .output, ["audio.session.category": "playback"])
        w.link(1, 10, 50)
        w.link(2, 11, 50)
        w.play(10)
        w.play(11)
        // The ambient declaration (first stream) mixes with legacy music.
        w.legacy(20, client: 2, role: "Music")
        w.link(3, 20, 50)
        w.play(20)
        #expect(w.session(clientS(1))?.category == .ambient)
        #expect(w.session(legacyS(20))?.active == true)
        // The ambient stream goes: the client is now a non-mixable playback session (R1).
        let effects = w.decide(.streamRemoved(N(10)))
        #expect(w.session(clientS(1))?.category == .playback)
        #expect(effects.contains(.pause(N(20))), "\(effects)")
        #expect(effects.contains(began(legacyS(20))), "\(effects)")
    }
}

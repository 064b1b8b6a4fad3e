import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Repeated activation requests (R6, R16)")
struct ActivationRequestTests {
    @Test("R6 R16 asking again for active=true after a refusal is answered when the request counter changes")
    func r6R16ARepeatedActivationRequestAfterARefusalIsAnswered() {
        var w = World()
        w.declared(1, "playAndRecord", mode: "voiceChat")
        _ = w.activate(1)
        w.declared(3, "playback")
        let first = w.set(3, ["audio.session.active": "true", "audio.session.activation-request": "1"])
        #expect(first.first.map(refused(clientS(3), .insufficientPriority)) == true)
        // The call ends; the same value asked again, with a new counter, is a new request.
        _ = w.deactivate(1, notifyOthers: false)
        let again = w.set(3, ["audio.session.active": "true", "audio.session.activation-request": "2"])
        #expect(again == [activated(clientS(3))])
        // The same counter again (an unrelated property change) is not a request.
        #expect(w.set(3, ["application.name": "player"]) == [])
    }
}

import AudioSession
import Foundation
import Testing

@Suite struct MetadataDecodingTests {
    @Test func anActivationRefusalDecodesWithItsCodeAndSentence() throws {
        let json = #"{"seq":7,"session":{"kind":"client","id":42},"type":"activation","ok":false,"error":{"code":"insufficientPriority","message":"R6: a call holds audio"}}"#
        let e = try #require(PolicyEvent.decode(json))
        #expect(e.sequence == 7)
        #expect(e.session == SessionRef(kind: .client, id: 42))
        #expect(e.notification == .activationResult(.failure(SessionError(code: .insufficientPriority, message: "R6: a call holds audio"))))
    }

    @Test func interruptionsAndRouteChangesDecode() throws {
        let began = try #require(PolicyEvent.decode(#"{"seq":1,"session":{"kind":"stream","id":5},"type":"interruption","phase":"began","reason":"routeDisconnected"}"#))
        #expect(began.notification == .interruptionBegan(reason: .routeDisconnected))
        let ended = try #require(PolicyEvent.decode(#"{"seq":2,"session":{"kind":"client","id":5},"type":"interruption","phase":"ended","shouldResume":true}"#))
        #expect(ended.notification == .interruptionEnded(shouldResume: true))
        let route = try #require(PolicyEvent.decode(#"""
            {"seq":3,"session":{"kind":"client","id":5},"type":"routeChange","reason":"oldDeviceUnavailable",
             "previousRoute":{"inputs":[],"outputs":[{"name":"Headphones","uid":"headphones","type":"headphones"}]},
             "currentRoute":{"inputs":[],"outputs":[]}}
            """#))
        guard case .routeChange(let reason, let previous, let current) = route.notification else {
            Issue.record("not a route change"); return
        }
        #expect(reason == .oldDeviceUnavailable)
        #expect(previous.outputs.map(\.type) == [.headphones])
        #expect(current.outputs.isEmpty)
        let busy = try #require(PolicyEvent.decode(#"{"seq":4,"session":{"kind":"client","id":5},"type":"activation","ok":true,"warning":"isBusy"}"#))
        #expect(busy.notification == .activationResult(.success(.isBusy)))
    }

    @Test func badDocumentsAreIgnoredNotTrapped() {
        #expect(PolicyEvent.decode("") == nil)
        #expect(PolicyEvent.decode("{") == nil)
        #expect(PolicyEvent.decode(#"{"seq":1,"session":{"kind":"client","id":1},"type":"tuba"}"#) == nil)
        #expect(PolicyMetadata.decode(SessionState.self, from: "[]") == nil)
    }

    @Test func sessionAndGlobalStateDecode() throws {
        let session = #"{"session":{"kind":"client","id":9},"application":"app","legacy":false,"category":"playback","mode":"default","options":["mixWithOthers"],"priority":"normal","active":true,"playing":true,"interrupted":false,"duckGain":0.2,"silenced":false,"streams":[10],"route":{"inputs":[],"outputs":[]},"prefersNoInterruptionsFromSystemAlerts":false,"prefersInterruptionOnRouteDisconnect":true,"secondaryAudioShouldBeSilencedHint":false}"#
        let s = try #require(PolicyMetadata.decode(SessionState.self, from: session))
        #expect(s.ducked)
        #expect(s.streams == [10])
        #expect(s.prefersInterruptionOnRouteDisconnect == true)
        let global = #"{"currentRoute":{"inputs":[],"outputs":[{"name":"Speaker","uid":"speaker","type":"builtInSpeaker"}]},"silentMode":true,"screenLocked":false,"isOtherAudioPlaying":false,"secondaryAudioShouldBeSilencedHint":false,"playingSessions":0,"primaryAudioSessions":0}"#
        let g = try #require(PolicyMetadata.decode(GlobalState.self, from: global))
        #expect(g.silentMode)
        #expect(g.currentRoute.route.outputs.first?.type == .builtInSpeaker)
    }
}

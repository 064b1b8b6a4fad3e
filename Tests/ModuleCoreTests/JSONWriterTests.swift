@testable import AudioSessionModuleCore
@testable import SessionPolicy
import AudioSession
import AudioSessionVocabulary
import Foundation
import Testing

/// The policy's notification (Foundation has a type of the same name).
private typealias SessionNotification = AudioSessionVocabulary.Notification

/// The metadata's JSON text: what a reader's JSON parser gets back is what was written, and
/// what the AudioSession library decodes is what the module published.
@Suite struct JSONWriterTests {
    func parsed(_ bytes: [UInt8]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }

    func text(_ body: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter()
        body(&w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    @Test(arguments: [
        "plain", "", "say \"hi\"", #"back\slash"#, "line\nbreak\r\ttab", "bell\u{7} nul\u{0} esc\u{1B} us\u{1F}",
        "café", "日本語", "🎧 headphones", "e\u{301}", "\u{7F} delete",
    ])
    func everyStringComesBackAsItWas(_ s: String) throws {
        var w = JSONWriter()
        w.beginObject()
        w.key("k"); w.string(s)
        w.key("list")
        w.beginArray()
        w.string(s); w.int(-3); w.bool(true); w.null()
        w.endArray()
        w.endObject()
        let back = try #require(try parsed(w.bytes) as? [String: Any])
        #expect(back["k"] as? String == s)
        #expect((back["list"] as? [Any])?.first as? String == s)
        #expect((back["list"] as? [Any])?.count == 4)
        // Control characters never reach the text raw; nothing else is escaped.
        #expect(w.bytes.allSatisfy { $0 >= 0x20 })
    }

    @Test func numbersAndLiteralsAreJSON() throws {
        #expect(text { $0.double(.nan) } == "null")
        #expect(text { $0.double(.infinity) } == "null")
        #expect(text { $0.double(0.25) } == "0.25")
        #expect(text { $0.int(Int64.min) } == "-9223372036854775808")
        #expect(text { $0.int(Int64.max) } == "9223372036854775807")
        #expect(text { $0.int(0) } == "0")
        #expect(text { $0.int(-7) } == "-7")
        #expect(text { $0.beginObject(); $0.endObject() } == "{}")
        #expect(text { $0.beginArray(); $0.endArray() } == "[]")
        #expect(text { w in
            w.beginObject()
            w.key("a"); w.bool(false)
            w.key("b"); w.null()
            w.key("c"); w.beginArray(); w.beginObject(); w.endObject(); w.int(1); w.endArray()
            w.endObject()
        } == #"{"a":false,"b":null,"c":[{},1]}"#)
    }

    /// A gain is written from integers: the text is the one `Double`'s description gives
    /// (what the module wrote before), for every three-decimal gain and beyond.
    @Test func gainsReadAsDoublesWrite() {
        for k in Array(0...1000) + [1001, 1010, 1100, 12_345, 999_999, 1_000_000] {
            let g = Float(Double(k) / 1000)
            #expect(text { MetadataFormat.gain(g, &$0) } == String((Double(g) * 1000).rounded() / 1000), "gain \(g)")
        }
        // Out of the integers' range (never decided): as before.
        #expect(text { MetadataFormat.gain(-0.5, &$0) } == "-0.5")
        #expect(text { MetadataFormat.gain(.nan, &$0) } == "null")
        #expect(text { MetadataFormat.gain(.infinity, &$0) } == "null")
        #expect(text { MetadataFormat.gain(2e7, &$0) } == String(2e7))
    }

    /// What the module hands to C is the public text and one NUL.
    @Test func theModulesTextIsThePublicTextAndANul() {
        let snap = SessionSnapshot(
            category: .playback, mode: .spokenAudio, options: [.duckOthers, .allowAirPlay, .mixWithOthers], active: true,
            interrupted: false, interruptionReason: nil, duckGain: 0.316, silenced: false, isPlaying: true,
            streams: [NodeID(3)], route: Route(inputs: [], outputs: [Self.speaker]), isLegacy: false, applicationName: "mpv",
            priority: .normal, prefersNoInterruptionsFromSystemAlerts: false, prefersInterruptionOnRouteDisconnect: true,
            secondaryAudioShouldBeSilencedHint: false, preferredOutputPortType: nil)
        let session = MetadataFormat.sessionWriter(.client(ClientID(4)), snap).cString()
        #expect(session == MetadataFormat.session(.client(ClientID(4)), snap) + [0])
        #expect(session.dropLast().allSatisfy { $0 != 0 })
        // The options in the vocabulary's order, as `names` lists them.
        let names = snap.options.names.map { "\"\($0)\"" }.joined(separator: ",")
        #expect(String(decoding: session, as: UTF8.self).contains("\"options\":[\(names)]"))
        #expect(String(decoding: session, as: UTF8.self).contains("\"duckGain\":0.316,"))
    }

    static let headphones = Port(name: "Headphones \"Pro\"", uid: "alsa_output.usb-1", type: .headphones)
    static let speaker = Port(name: "Speaker", uid: "speaker", type: .builtInSpeaker)

    /// Every notification the module publishes decodes, in the library, as itself.
    @Test(arguments: [
        SessionNotification.interruptionBegan(reason: .routeDisconnected),
        .interruptionEnded(shouldResume: true),
        .interruptionEnded(shouldResume: false),
        .routeChange(reason: .oldDeviceUnavailable, previous: Route(inputs: [], outputs: [headphones]),
                     current: Route(inputs: [speaker], outputs: [speaker])),
        .silenceSecondaryAudioHint(begin: true),
        .silenceSecondaryAudioHint(begin: false),
        .mediaServicesWereLost,
        .mediaServicesWereReset,
        .activationResult(.success(nil)),
        .activationResult(.success(.isBusy)),
        .activationResult(.failure(SessionError(code: .insufficientPriority, message: "a call holds the audio\n(R6)"))),
        .declarationRefused(SessionError(code: .badParam, message: "too long")),
    ])
    fileprivate func everyNotificationDecodesAsItself(_ n: SessionNotification) throws {
        let bytes = MetadataFormat.event(sequence: 41, session: .stream(NodeID(77)), notification: n)
        let e = try #require(PolicyEvent.decode(String(decoding: bytes, as: UTF8.self)), "\(String(decoding: bytes, as: UTF8.self))")
        #expect(e.sequence == 41)
        #expect(e.session == SessionRef(kind: .stream, id: 77))
        #expect(e.notification == n)
    }

    @Test func aSessionsStateDecodesWithEveryField() throws {
        let snap = SessionSnapshot(
            category: .playAndRecord, mode: .voiceChat, options: [.duckOthers, .allowBluetoothHFP], active: true,
            interrupted: true, interruptionReason: .builtInMicMuted, duckGain: 0.2, silenced: true, isPlaying: false,
            streams: [NodeID(5), NodeID(4_000_000_000)], route: Route(inputs: [Self.speaker], outputs: [Self.headphones]),
            isLegacy: false, applicationName: "Café \"call\"", priority: .call,
            prefersNoInterruptionsFromSystemAlerts: true, prefersInterruptionOnRouteDisconnect: false,
            secondaryAudioShouldBeSilencedHint: true, preferredOutputPortType: nil)
        let bytes = MetadataFormat.session(.client(ClientID(9)), snap)
        let s = try #require(PolicyMetadata.decode(SessionState.self, from: String(decoding: bytes, as: UTF8.self)))
        #expect(s.session == SessionRef(kind: .client, id: 9))
        #expect(s.application == "Café \"call\"")
        #expect(s.legacy == false)
        #expect(s.category == "playAndRecord")
        #expect(s.mode == "voiceChat")
        #expect(Set(s.options) == Set(snap.options.names))
        #expect(s.priority == "call")
        #expect(s.active && !s.playing && s.interrupted)
        #expect(s.interruptionReason == "builtInMicMuted")
        #expect(s.duckGain == 0.2)
        #expect(s.silenced)
        #expect(s.streams == [5, 4_000_000_000])
        #expect(s.route.route == snap.route)
        #expect(s.prefersNoInterruptionsFromSystemAlerts == true)
        #expect(s.prefersInterruptionOnRouteDisconnect == false)
        #expect(s.secondaryAudioShouldBeSilencedHint == true)

        var legacy = snap
        legacy.applicationName = nil
        legacy.interruptionReason = nil
        legacy.isLegacy = true
        let l = try #require(PolicyMetadata.decode(
            SessionState.self, from: String(decoding: MetadataFormat.session(.stream(NodeID(5)), legacy), as: UTF8.self)))
        #expect(l.application == nil)
        #expect(l.interruptionReason == nil)
        #expect(l.legacy)
        #expect(l.session == SessionRef(kind: .stream, id: 5))
    }

    @Test func theGlobalStateAndAPlayerDecode() throws {
        let g = GlobalSnapshot(
            currentRoute: Route(inputs: [], outputs: [Self.speaker]), silentMode: true, screenLocked: false,
            isOtherAudioPlaying: true, secondaryAudioShouldBeSilencedHint: false, playingSessionCount: 3,
            primaryAudioSessionCount: 1)
        let d = try #require(PolicyMetadata.decode(GlobalState.self, from: String(decoding: MetadataFormat.global(g), as: UTF8.self)))
        #expect(d.currentRoute.route == g.currentRoute)
        #expect(d.silentMode && !d.screenLocked && d.isOtherAudioPlaying && !d.secondaryAudioShouldBeSilencedHint)
        let player = try #require(try parsed(MetadataFormat.mpris(player: "org.mpris.MediaPlayer2.firefox.instance_1_8")) as? [String: Any])
        #expect(player["player"] as? String == "org.mpris.MediaPlayer2.firefox.instance_1_8")
    }
}

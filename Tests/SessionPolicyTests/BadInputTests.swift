import SessionPolicy
import PipeWireFacts
import Testing

@Suite("Declarations and bad input (§1-4, 9)")
struct BadInputTests {
    func parse(_ props: Properties) -> SessionError? {
        if case .failure(let e) = Declaration.parse(props) { return e }
        return nil
    }

    @Test("§1 a valid declaration parses, with aliases and implied options")
    func section1AValidDeclarationParsesWithAliasesAndImpliedOptions() throws {
        let d = try Declaration.parse([
            "audio.session.category": "playAndRecord", "audio.session.mode": "videoChat",
            "audio.session.options": " allowBluetooth , mixWithOthers",
        ]).get()
        #expect(d?.category == .playAndRecord)
        #expect(d?.options == [.allowBluetoothHFP, .mixWithOthers])
        #expect(d?.effectiveOptions.contains(.defaultToSpeaker) == true)
        #expect(try Declaration.parse(["media.role": "Music"]).get() == nil)
        #expect(try Declaration.parse(["audio.session.options": ""]).get() == Declaration())
    }

    @Test("§9 unknown names, wrong case, empty strings, duplicates are badParam")
    func section9UnknownNamesWrongCaseEmptyStringsAndDuplicatesAreBadParam() {
        let cases: [Properties] = [
            ["audio.session.category": "loud"],
            ["audio.session.category": "Playback"],
            ["audio.session.category": ""],
            ["audio.session.mode": "VoiceChat"],
            ["audio.session.options": "mixWithOthers,mixWithOthers"],
            ["audio.session.options": "allowBluetooth,allowBluetoothHFP"],
            ["audio.session.options": "mixWithOthers,,duckOthers"],
            ["audio.session.options": "shout"],
            ["audio.session.prefers-no-interruptions-from-system-alerts": "yes"],
            ["audio.session.category": String(repeating: "x", count: 65536)],
            ["audio.session.category": "play\u{FFFD}back"],
            ["audio.session.category": "playback\u{0}\u{1B}[31m"],
            ["audio.session.options": String(repeating: "mixWithOthers,", count: 5000)],
        ]
        for props in cases {
            let e = parse(props)
            #expect(e?.code == .badParam)
            #expect(e?.message.hasSuffix("[§1]") == true)
            #expect((e?.message.count ?? 0) < 200)
        }
    }

    @Test("§3 and §4 modes and options outside their categories are incompatibleCategory")
    func section3And4ModesAndOptionsOutsideTheirCategoriesAreIncompatibleCategory() {
        #expect(parse(["audio.session.category": "record", "audio.session.options": "duckOthers"])
            == SessionError(code: .incompatibleCategory, message: "The option duckOthers does not go with the category record. [§4]"))
        #expect(parse(["audio.session.category": "playback", "audio.session.mode": "voiceChat"])?.code == .incompatibleCategory)
        #expect(parse(["audio.session.category": "playAndRecord", "audio.session.mode": "voicePrompt"])?.code == .incompatibleCategory)
        #expect(parse(["audio.session.category": "soloAmbient", "audio.session.options": "mixWithOthers"])?.code == .incompatibleCategory)
        #expect(parse(["audio.session.category": "playback", "audio.session.options": "defaultToSpeaker"])?.code == .incompatibleCategory)
        #expect(parse(["audio.session.category": "playback", "audio.session.options": "overrideMutedMicrophoneInterruption"])?.code == .incompatibleCategory)
        #expect(parse(["audio.session.category": "record", "audio.session.options": "allowBluetoothHFP"]) == nil)
    }

    @Test("§9 a refused declaration is an error effect and the previous one stays in force")
    func section9ARefusedDeclarationIsAnErrorEffectAndThePreviousOneStaysInForce() {
        var w = World()
        w.declared(1, "playback")
        let fx = w.set(1, ["audio.session.category": "Ambient"])
        #expect(fx.count == 1)
        if case .notify(clientS(1), .declarationRefused(let e)) = fx.first {
            #expect(e.code == .badParam)
        } else {
            Issue.record("expected declarationRefused, got \(fx)")
        }
        #expect(w.session(clientS(1))?.category == .playback)
        let active = w.set(1, ["audio.session.active": "maybe"])
        #expect(active.count == 1)
        #expect(active.first.map(refused(clientS(1), .badParam)) == true)
    }

    @Test("§9 bad input never traps and never changes another session")
    func section9BadInputNeverTrapsAndNeverChangesAnotherSession() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        w.play(10)
        let hostile: [Properties] = [
            ["audio.session.category": "\u{FFFD}\u{FFFD}"], ["audio.session.mode": "\u{7F}"],
            ["audio.session.options": ",,,"], ["audio.session.active": String(repeating: "t", count: 65536)],
            ["media.role": "\u{0}"], ["audio.session.deactivation": "\u{FFFD}"],
        ]
        for (i, props) in hostile.enumerated() {
            let c = UInt32(100 + i)
            let fx = w.decide(.clientAdded(C(c), props), .streamAdded(N(c), client: C(c), direction: .output, props))
            for effect in fx {
                switch effect {
                // An oversized declaration is refused as a whole, so its stream stays a legacy
                // session of its own.
                case .notify(let s, _): #expect(s == clientS(c) || s == legacyS(c))
                default: Issue.record("unexpected \(effect)")
                }
            }
        }
        #expect(w.session(legacyS(10))?.active == true)
        // Events about objects nobody announced are ignored.
        #expect(w.decide(.streamRunning(N(999), true), .streamRemoved(N(998)), .endpointRemoved(N(997)),
            .linkRemoved(L(996)), .clientRemoved(C(995)), .streamActivatedByOwner(N(994)),
            .endpointMuteChanged(N(993), muted: true), .headphonePortLost(N(992))) == [])
    }

    @Test("§1 role table and profiles")
    func section1RoleTableAndProfiles() {
        var w = World { $0.profile = .ios }
        w.legacy(10, client: 1, role: nil)
        w.legacy(11, client: 1, role: "Production")
        w.legacy(12, client: 1, role: "movie")
        #expect(w.session(legacyS(10))?.category == .soloAmbient)
        #expect(w.session(legacyS(11)) == nil)
        #expect(w.session(legacyS(12))?.mode == .moviePlayback)
        var d = World()
        d.legacy(10, client: 1, role: nil)
        #expect(d.session(legacyS(10))?.options.contains(.mixWithOthers) == true)
    }

    @Test("Publishing: a session's state and the global state are published when they change")
    func aSessionsStateAndTheGlobalStateArePublishedWhenTheyChange() {
        var w = World()
        w.legacy(10, client: 1, role: "Music")
        let fx = w.when(.streamRunning(N(10), true))
        let published = fx.compactMap { effect -> SessionSnapshot? in
            if case .publishSession(legacyS(10), let snap?) = effect { return snap }
            return nil
        }
        #expect(published.count == 1)
        #expect(published.first?.active == true)
        #expect(published.first?.isPlaying == true)
        #expect(fx.contains { if case .publishGlobal(let g) = $0 { return g.isOtherAudioPlaying } else { return false } })
        #expect(w.when(.streamRemoved(N(10))).contains(.publishSession(legacyS(10), nil)))
    }
}

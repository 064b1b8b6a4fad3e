import SessionPolicy
import PipeWireFacts
import Testing

/// R42: an interruption fades the interrupted stream out before its pause and back in when
/// it resumes; a private output's loss still pauses at once (R30).
@Suite("Interruption fades (R42)")
struct FadeTests {
    /// The module's fades: 300 ms out, 500 ms in.
    static func world() -> World {
        World { $0 = .moduleFades }
    }

    static let fadeOut = Effect.fade(N(10), gain: 0, milliseconds: 300)
    static func fadeIn(_ n: UInt32 = 10, to gain: Float = 1) -> Effect { .fade(N(n), gain: gain, milliseconds: 500) }

    /// Legacy music (10) playing, a legacy call (30) about to start.
    static func musicAndCall() -> World {
        var w = world()
        w.legacy(10, client: 1, role: "Music")
        w.legacy(30, client: 3, role: "Phone")
        w.play(10)
        return w
    }

    @Test("R42 a call fades the music out, pauses it once silent, tells began after the pause, and fades it back in after the call")
    func r42ACallFadesTheMusicOutThenPausesItAndFadesItBackIn() {
        var w = Self.musicAndCall()
        // The call plays at once; the music only fades, and hears nothing yet (R11).
        #expect(w.decide(.streamRunning(N(30), true)) == [Self.fadeOut])
        #expect(w.session(legacyS(10))?.interrupted == false)
        #expect(w.session(legacyS(10))?.active == false)
        #expect(w.session(legacyS(30))?.isPlaying == true)
        // Silent: paused, then began.
        #expect(w.decide(.streamFadedOut(N(10))) == [.pause(N(10)), began(legacyS(10))])
        #expect(w.session(legacyS(10))?.interrupted == true)
        #expect(w.decide(.streamRunning(N(10), false)) == [])
        // The call ends: resumed, starting silent, fading in.
        #expect(w.decide(.streamRunning(N(30), false)) == [ended(legacyS(10), resume: true), Self.fadeIn(), .resume(N(10))])
        // Back at its gain: a second resume ramps nothing.
        #expect(w.decide(.streamRunning(N(10), true)) == [])
    }

    @Test("R42 R11 a session refused while one of its streams still fades out (it faded before the client declared) hears began once that stream is silent")
    func r42ARefusedSessionHearsBeganOnceItsFadingStreamIsSilent() {
        var w = Self.musicAndCall()
        #expect(w.decide(.streamRunning(N(30), true)) == [Self.fadeOut])
        // Mid-fade the music's client declares: the fading stream is now its session's.
        _ = w.set(1, ["audio.session.category": "playAndRecord"])
        // Its capture starts: the call refuses the session; the capture stops at once, and
        // began waits for the music's silence.
        w.stream(11, client: 1, .input)
        let refused = w.decide(.streamRunning(N(11), true))
        #expect(refused.contains(.pause(N(11))), "\(refused)")
        #expect(!refused.contains(began(clientS(1))), "\(refused)")
        #expect(w.decide(.streamFadedOut(N(10))) == [.pause(N(10)), began(clientS(1))])
    }

    @Test("R42 an interruption that ends during the fade-out ramps the stream back from where it is: never paused, nothing told")
    func r42AnInterruptionThatEndsDuringTheFadeOutIsNeverToldAndNeverPauses() {
        var w = Self.musicAndCall()
        #expect(w.decide(.streamRunning(N(30), true)) == [Self.fadeOut])
        let back = w.decide(.streamRunning(N(30), false))
        #expect(back == [Self.fadeIn(), .resume(N(10))])
        #expect(!back.contains(ended(legacyS(10), resume: true)))
        #expect(w.session(legacyS(10))?.active == true)
        #expect(w.session(legacyS(10))?.interrupted == false)
        // The module's report of a fade it no longer runs changes nothing.
        #expect(w.decide(.streamFadedOut(N(10))) == [])
        #expect(w.session(legacyS(10))?.isPlaying == true)
    }

    @Test("R42 a declared session whose interruption ends mid-fade is resumed by the policy, library or not: it never heard began")
    func r42ALibrarySessionInterruptedMidFadeIsResumedByThePolicy() {
        var w = Self.world()
        w.declared(1, "playback")
        w.stream(10, client: 1)
        _ = w.activate(1)
        w.play(10)
        w.legacy(30, client: 3, role: "Phone")
        #expect(w.decide(.streamRunning(N(30), true)) == [Self.fadeOut])
        #expect(w.decide(.streamRunning(N(30), false)) == [Self.fadeIn(), .resume(N(10))])
        #expect(w.session(clientS(1))?.active == true)
    }

    @Test("R42 R13 a second interruption during a fade: no second fade, one began once silent")
    func r42ASecondInterruptionDuringAFadeGivesOneBegan() {
        var w = Self.musicAndCall()
        w.legacy(40, client: 4, role: "Phone")
        #expect(w.decide(.streamRunning(N(30), true)) == [Self.fadeOut])
        // A second call interrupts the first (which fades); the fading music is left as it is.
        let second = w.decide(.streamRunning(N(40), true))
        #expect(second == [.fade(N(30), gain: 0, milliseconds: 300)])
        #expect(w.decide(.streamFadedOut(N(10))) == [.pause(N(10)), began(legacyS(10))])
        #expect(w.decide(.streamFadedOut(N(30))) == [.pause(N(30)), began(legacyS(30))])
        // The second call ends: the first comes back, the music stays held by it (no second began).
        let secondEnds = w.decide(.streamRunning(N(40), false))
        #expect(secondEnds.contains(.fade(N(30), gain: 1, milliseconds: 500)))
        #expect(!secondEnds.contains { if case .notify(legacyS(10), _) = $0 { return true } else { return false } })
        #expect(!secondEnds.contains(.resume(N(10))))
        #expect(w.decide(.streamRunning(N(30), false)) == [ended(legacyS(10), resume: true), Self.fadeIn(), .resume(N(10))])
    }

    @Test("R42 R30 the headphones lost mid-fade: the stream is paused at once and began follows")
    func r42AFadeInterruptedByARouteLossPausesAtOnce() {
        var w = Self.world()
        w.sink(50, headphonesProps)
        w.legacy(10, client: 1, role: "Music")
        w.legacy(30, client: 3, role: "Phone")
        w.link(1, 10, 50)
        w.play(10)
        #expect(w.decide(.streamRunning(N(30), true)) == [Self.fadeOut])
        let lost = w.decide(.endpointRemoved(N(50)))
        #expect(lost.first == .pause(N(10)))
        #expect(lost.contains(began(legacyS(10))))
        #expect(lost.contains { if case .notify(legacyS(10), .routeChange(reason: .oldDeviceUnavailable, _, _)) = $0 { return true } else { return false } })
        // The late report of the fade changes nothing.
        #expect(w.decide(.streamFadedOut(N(10))) == [])
    }

    @Test("R42 a stream removed mid-fade leaves nothing: no pause, no report, and its session's began once the rest is silent")
    func r42AStreamRemovedMidFadeLeavesNothing() {
        var w = Self.musicAndCall()
        #expect(w.decide(.streamRunning(N(30), true)) == [Self.fadeOut])
        #expect(w.decide(.streamRemoved(N(10))) == [])
        #expect(w.decide(.streamFadedOut(N(10))) == [])
        #expect(w.policy.recordCount == 0 || w.session(legacyS(10)) == nil)

        // A declared program with two streams: one goes mid-fade, the other is then silent.
        var v = Self.world()
        v.declared(1, "playback")
        v.stream(10, client: 1)
        v.stream(11, client: 1)
        _ = v.activate(1)
        v.play(10)
        v.play(11)
        v.legacy(30, client: 3, role: "Phone")
        #expect(v.decide(.streamRunning(N(30), true)) == [Self.fadeOut, .fade(N(11), gain: 0, milliseconds: 300)])
        #expect(v.decide(.streamFadedOut(N(11))) == [.pause(N(11))])
        #expect(v.decide(.streamRemoved(N(10))) == [began(clientS(1))])
    }

    @Test("R42 R18 a program that pauses itself mid-fade: began follows at once, and when it plays again it fades back in")
    func r42AProgramThatPausesItselfMidFade() {
        var w = Self.musicAndCall()
        #expect(w.decide(.streamRunning(N(30), true)) == [Self.fadeOut])
        // Its MPRIS player reports Paused (the bridge releases it to the program).
        #expect(w.decide(.streamReleasedToProgram(N(10))) == [began(legacyS(10))])
        #expect(w.decide(.streamFadedOut(N(10))) == [])
        // The call ends; the program plays again on its own: arbitrated, and faded in.
        _ = w.decide(.streamRunning(N(30), false))
        let again = w.decide(.streamActivatedByOwner(N(10)), .streamRunning(N(10), true))
        #expect(again.contains(Self.fadeIn()))
        #expect(!again.contains(.pause(N(10))))
    }

    @Test("R42 a ducked stream fades out from its duck level, and back in to the gain it should have then")
    func r42ADuckedStreamFadesFromItsDuckLevel() {
        var w = Self.musicAndCall()
        w.legacy(20, client: 2, role: "Navigation")
        #expect(w.decide(.streamRunning(N(20), true)) == [.duck(N(10), gain: 0.2, rampMilliseconds: 250)])
        // The call fades the ducked music (and the prompt) out.
        let call = w.decide(.streamRunning(N(30), true))
        #expect(call.contains(Self.fadeOut))
        // The prompt's program goes during the call: no duck effect reaches the faded music.
        _ = w.decide(.streamFadedOut(N(20)))
        let promptEnds = w.decide(.streamRemoved(N(20)))
        #expect(!promptEnds.contains { if case .duck(N(10), _, _) = $0 { return true } else { return false } })
        _ = w.decide(.streamFadedOut(N(10)))
        // After the call the music fades in to full level, the duck being over.
        #expect(w.decide(.streamRunning(N(30), false)) == [ended(legacyS(10), resume: true), Self.fadeIn(to: 1), .resume(N(10))])
    }

    @Test("R42 a prompt that comes back with the music after the call: the music fades in to the duck level, in one ramp")
    func r42TheFadeInGoesToTheDuckLevel() {
        var w = Self.musicAndCall()
        w.legacy(20, client: 2, role: "Navigation")
        _ = w.decide(.streamRunning(N(20), true))
        _ = w.decide(.streamRunning(N(30), true))
        _ = w.decide(.streamFadedOut(N(10)), .streamFadedOut(N(20)))
        let back = w.decide(.streamRunning(N(30), false))
        // Both resume; the music's only gain effect is its fade-in to the duck level.
        #expect(back.contains(.resume(N(10))))
        #expect(back.contains(.resume(N(20))))
        let music = back.filter {
            switch $0 {
            case .duck(N(10), _, _), .fade(N(10), _, _): return true
            default: return false
            }
        }
        #expect(music == [Self.fadeIn(to: 0.2)])
        #expect(back.contains(Self.fadeIn(20)))
    }

    @Test("R42 capture streams and a refused start pause at once; a fade-out of 0 pauses at once and still fades in")
    func r42WhatDoesNotFadeOut() {
        // A refused start (R16: play pressed during a call) is not an interruption fade.
        var w = Self.musicAndCall()
        _ = w.decide(.streamRunning(N(30), true))
        _ = w.decide(.streamFadedOut(N(10)))
        w.legacy(11, client: 5, role: "Music")
        let refused = w.decide(.streamRunning(N(11), true))
        #expect(refused.first == .pause(N(11)))
        #expect(!refused.contains { if case .fade = $0 { return true } else { return false } })

        var v = World {
            $0.fadeOutMilliseconds = 0
            $0.fadeInMilliseconds = 500
        }
        v.legacy(10, client: 1, role: "Music")
        v.legacy(30, client: 3, role: "Phone")
        v.play(10)
        #expect(v.decide(.streamRunning(N(30), true)) == [.pause(N(10)), .fade(N(10), gain: 0, milliseconds: 0), began(legacyS(10))])
        #expect(v.decide(.streamRunning(N(30), false)) == [ended(legacyS(10), resume: true), Self.fadeIn(), .resume(N(10))])

        // Both off: today's cut.
        var u = World()
        u.legacy(10, client: 1, role: "Music")
        u.legacy(30, client: 3, role: "Phone")
        u.play(10)
        #expect(u.decide(.streamRunning(N(30), true)) == [.pause(N(10)), began(legacyS(10))])
        #expect(u.decide(.streamRunning(N(30), false)) == [ended(legacyS(10), resume: true), .resume(N(10))])
    }

    @Test("R42 R41 the module unloading mid-fade resumes the stream: no pause outlives the policy")
    func r42UnloadingMidFadeResumes() {
        var w = Self.musicAndCall()
        _ = w.decide(.streamRunning(N(30), true))
        #expect(w.when(.moduleUnloading).contains(.resume(N(10))))
    }
}

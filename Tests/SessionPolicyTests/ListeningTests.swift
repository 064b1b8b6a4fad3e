import PipeWireFacts
import Testing
@testable import SessionPolicy

/// R43 with the module listening to outputs: a program that captures a microphone is in a
/// call only once one of its outputs carried sound. Firefox plays silence while a page only
/// records; that is a recording, not a call.
@Suite("Calls told from recordings by what the output carries (R43)")
struct ListeningTests {
    typealias G = CallsFromGraphTests

    static func musicPlaying(_ configure: (inout PolicyConfiguration) -> Void = { _ in }) -> World {
        G.musicPlaying {
            $0.listensToOutputs = true
            configure(&$0)
        }
    }

    /// The music plays; the browser captures the microphone and runs its output (32), not
    /// heard yet.
    static func capturingWithOutput(_ configure: (inout PolicyConfiguration) -> Void = { _ in }) -> World {
        var w = musicPlaying(configure)
        _ = G.capture(&w)
        _ = G.farEnd(&w)
        return w
    }

    static func listens(_ fx: [Effect]) -> Bool {
        fx.contains { if case .listen = $0 { return true } else { return false } }
    }

    @Test("R43 a program that captures while its output plays silence is a recording: its output is listened to, the music plays on")
    func r43SilentOutputWhileCapturingIsARecording() {
        var w = Self.musicPlaying()
        _ = G.capture(&w)
        let fx = G.farEnd(&w)
        #expect(fx.contains(.listen(N(32), true)), "\(fx)")
        #expect(!fx.contains(.pause(N(10))))
        #expect(w.session(legacyS(31))?.category == .record)
        #expect(w.session(legacyS(32))?.priority == .normal)
        // The music's own output is never listened to: its program captures nothing.
        #expect(!fx.contains(.listen(N(10), true)))
    }

    @Test("R43 once the module hears the output, the program is in a call: the music is paused, and listening stops")
    func r43HeardOutputMakesTheCall() {
        var w = Self.capturingWithOutput()
        let call = w.decide(.streamHeard(N(32)))
        #expect(call.contains(.pause(N(10))), "\(call)")
        #expect(call.contains(began(legacyS(10))))
        #expect(call.contains(.listen(N(32), false)))
        #expect(w.session(legacyS(31))?.priority == .call)
        #expect(w.session(legacyS(32))?.priority == .call)
        // The output stops (the call ends, as R43 has it) and plays again while the program
        // still captures: what was heard holds, so it is the call again at once, unheard.
        _ = w.decide(.streamRunning(N(32), false))
        let again = w.decide(.streamRunning(N(32), true))
        #expect(!again.contains(.listen(N(32), true)), "\(again)")
        #expect(again.contains(.pause(N(10))), "\(again)")
    }

    @Test("R43 the capture ends: the call ends, what was heard is forgotten, and the next capture listens again")
    func r43TheEndOfTheCaptureForgetsWhatWasHeard() {
        var w = Self.capturingWithOutput()
        _ = w.decide(.streamHeard(N(32)))
        let hangUp = w.decide(.streamRunning(N(31), false))
        #expect(hangUp.contains(.resume(N(10))), "\(hangUp)")
        #expect(w.policy.snapshot().streams[N(32)]?.heard == false)
        // The program records again, its output still running silent: listened to, no call.
        let recording = w.decide(.streamRunning(N(31), true))
        #expect(recording.contains(.listen(N(32), true)), "\(recording)")
        #expect(!recording.contains(.pause(N(10))))
    }

    @Test("R43 the capture ends while the output is listened to: listening stops")
    func r43TheEndOfTheCaptureStopsListening() {
        var w = Self.capturingWithOutput()
        #expect(w.decide(.streamRunning(N(31), false)).contains(.listen(N(32), false)))
        // A report arriving after listening stopped changes nothing.
        #expect(w.decide(.streamHeard(N(32))) == [])
        #expect(w.policy.snapshot().streams[N(32)]?.heard == false)
    }

    @Test("R43 an output that stops running is no longer listened to; one that goes needs no effect")
    func r43StoppedAndRemovedOutputs() {
        var w = Self.capturingWithOutput()
        #expect(w.decide(.streamRunning(N(32), false)).contains(.listen(N(32), false)))
        #expect(w.decide(.streamRunning(N(32), true)).contains(.listen(N(32), true)))
        let gone = w.decide(.linkRemoved(L(4)), .streamRemoved(N(32)))
        #expect(!Self.listens(gone), "\(gone)")
        #expect(!w.policy.holdsPaused(N(10)))
    }

    @Test("R43 a program with more outputs than are listened to: the ones beyond the bound count as sound, as without listening")
    func r43OutputsBeyondTheBoundCountAsSound() {
        var w = Self.musicPlaying { $0.listenedStreamsPerProgram = 2 }
        _ = G.capture(&w)
        var listened: [Effect] = []
        for n: UInt32 in 32...33 {
            w.stream(n, client: 22, .output, G.browser)
            listened += w.decide(.streamRunning(N(n), true))
        }
        #expect(listened.filter { if case .listen(_, true) = $0 { return true } else { return false } }.count == 2)
        #expect(!w.policy.holdsPaused(N(10)))
        w.stream(34, client: 22, .output, G.browser)
        let third = w.decide(.streamRunning(N(34), true))
        #expect(!third.contains(.listen(N(34), true)))
        #expect(third.contains(.pause(N(10))), "\(third)")
    }

    @Test("R43 no more streams are listened to in all than the bound")
    func r43TheBoundInAll() {
        var w = Self.musicPlaying { $0.listenedStreamsInAll = 1 }
        _ = G.capture(&w)
        _ = G.farEnd(&w)
        // A second program records while it plays silence: nothing left to listen with.
        let other: Properties = ["application.name": "Firefox", "application.process.id": "5151"]
        w.client(41, other)
        w.stream(51, client: 41, .input, other)
        _ = w.decide(.linkAdded(L(7), output: N(G.mic), input: N(51)), .streamRunning(N(51), true))
        w.stream(52, client: 41, .output, other)
        let fx = w.decide(.streamRunning(N(52), true))
        #expect(!fx.contains(.listen(N(52), true)), "\(fx)")
        #expect(w.session(legacyS(52))?.priority == .call)
    }

    @Test("R43 a report of sound for a stream nobody listens to changes nothing")
    func r43AnUnaskedReportIsIgnored() {
        var w = Self.musicPlaying()
        #expect(w.decide(.streamHeard(N(10)), .streamHeard(N(99))) == [])
        #expect(w.policy.snapshot().streams[N(10)]?.heard == false)
    }

    @Test("R43 without listening (the core's default) a running output counts at once, as before")
    func r43WithoutListeningEveryOutputCounts() {
        var w = G.musicPlaying()
        _ = G.capture(&w)
        let fx = G.farEnd(&w)
        #expect(!Self.listens(fx))
        #expect(fx.contains(.pause(N(10))))
    }

    @Test("R43 a program's call interrupts none of its own sessions: a declared session of the program keeps recording the microphone that makes the call")
    func r43TheCallSparesItsOwnProgramsDeclaredSession() {
        var w = Self.musicPlaying()
        // The program declares a recording on one connection (its microphone, 33) and plays
        // the far end undeclared on another (32), as one process.
        w.declared(23, "record", extra: G.browser)
        w.stream(33, client: 23, .input, G.browser)
        _ = w.decide(.linkAdded(L(3), output: N(G.mic), input: N(33)), .streamRunning(N(33), true))
        _ = G.farEnd(&w)
        let call = w.decide(.streamHeard(N(32)))
        #expect(w.session(legacyS(32))?.priority == .call, "\(call)")
        #expect(!call.contains(.pause(N(33))), "\(call)")
        #expect(!call.contains(began(.client(C(23)))), "\(call)")
        #expect(w.session(.client(C(23)))?.active == true)
        // A session of the program that activates while the call holds the audio is let in.
        w.declared(24, "playback", extra: G.browser)
        w.stream(34, client: 24, .output, G.browser)
        let ring = w.decide(.linkAdded(L(9), output: N(34), input: N(G.speaker)), .streamRunning(N(34), true))
        #expect(!ring.contains(.pause(N(34))), "\(ring)")
        #expect(w.session(.client(C(24)))?.active == true)
    }

    @Test("R43 a call that pauses another program's microphone in the same event: that program's outputs stop being listened to at once")
    func r43AMicrophonePausedByACallStopsItsProgramsListening() {
        var w = Self.capturingWithOutput()
        // A second program records on a declared connection and plays silence undeclared.
        let other: Properties = ["application.name": "Recorder", "application.process.id": "5151"]
        w.declared(41, "record", extra: other)
        w.stream(51, client: 41, .input, other)
        _ = w.decide(.linkAdded(L(7), output: N(G.mic), input: N(51)), .streamRunning(N(51), true))
        w.stream(52, client: 42, .output, other)
        #expect(w.decide(.streamRunning(N(52), true)).contains(.listen(N(52), true)))
        // The browser's output is heard: its call interrupts the recording, whose program then
        // captures nothing.
        let call = w.decide(.streamHeard(N(32)))
        #expect(call.contains(.pause(N(51))), "\(call)")
        #expect(call.contains(.listen(N(52), false)), "\(call)")
        #expect(w.policy.snapshot().streams[N(52)]?.listened == false)
    }
}

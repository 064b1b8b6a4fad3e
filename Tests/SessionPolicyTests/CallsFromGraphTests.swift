import PipeWireFacts
import Testing
@testable import SessionPolicy

/// R43: a program that captures a microphone while it plays is in a call, whatever it
/// declares; one that only records is a recording (R21). The evidence is a link from a
/// source into its capture stream.
@Suite("Calls and recordings recognised from the graph (R43)")
struct CallsFromGraphTests {
    static let mic: UInt32 = 5, speaker: UInt32 = 60
    /// A browser as pipewire-pulse shows it: one connection (client) per stream, every
    /// stream carrying the program's process id; no role, no declaration.
    static let browser: Properties = ["application.name": "Chromium", "application.process.id": "4242"]

    /// Music (a legacy Music stream, client 1, node 10) plays on the speaker; a microphone
    /// (source 5) is present.
    static func musicPlaying(_ configure: (inout PolicyConfiguration) -> Void = { _ in }) -> World {
        var w = World(configure)
        w.sink(speaker, speakerProps)
        w.source(mic, micProps)
        w.legacy(10, client: 1, role: "Music")
        w.link(1, 10, speaker)
        w.play(10)
        return w
    }

    /// The browser's capture stream (client 21, node 31) opens the microphone.
    static func capture(_ w: inout World, props: Properties = browser) -> [Effect] {
        w.client(21, props)
        w.stream(31, client: 21, .input, props)
        return w.decide(.linkAdded(L(3), output: N(mic), input: N(31)), .streamRunning(N(31), true))
    }

    /// The browser's playback stream (client 22, node 32) plays the far end.
    static func farEnd(_ w: inout World, props: Properties = browser) -> [Effect] {
        w.client(22, props)
        w.stream(32, client: 22, .output, props)
        return w.decide(.linkAdded(L(4), output: N(32), input: N(speaker)), .streamRunning(N(32), true))
    }

    @Test("R43 a program that captures a microphone while it plays is a call: the music is paused, then told began (R10, R11)")
    func r43CaptureWhilePlayingIsACall() {
        var w = Self.musicPlaying()
        let recording = Self.capture(&w)
        // Capturing alone: a recording, which mixes; the music plays on.
        #expect(!recording.contains(.pause(N(10))))
        #expect(w.session(legacyS(31))?.category == .record)
        let call = Self.farEnd(&w)
        #expect(call.first == .pause(N(10)), "\(call)")
        #expect(call.contains(began(legacyS(10))))
        // Every stream of the program is the call; its own far end is never interrupted.
        #expect(w.session(legacyS(31))?.priority == .call)
        #expect(w.session(legacyS(32))?.priority == .call)
        #expect(w.session(legacyS(32))?.isPlaying == true)
    }

    @Test("R43 a stereo microphone links a capture stream once per channel: when the source appears after its links, its program counts that stream once")
    func r43AStereoMicrophoneCountsItsCaptureStreamOnce() {
        var w = World()
        w.sink(Self.speaker, speakerProps)
        w.legacy(10, client: 1, role: "Music")
        w.link(1, 10, Self.speaker)
        w.play(10)
        // The capture stream is linked, once per channel, from a node not announced yet.
        w.client(21, Self.browser)
        w.stream(31, client: 21, .input, Self.browser)
        w.when(.linkAdded(L(3), output: N(Self.mic), input: N(31)), .linkAdded(L(5), output: N(Self.mic), input: N(31)),
               .streamRunning(N(31), true))
        _ = Self.farEnd(&w)
        #expect(!w.policy.holdsPaused(N(10)))
        // The source is announced: a microphone, so a call (each step checked against a rebuild).
        w.source(Self.mic, micProps)
        #expect(w.policy.holdsPaused(N(10)))
        // The capture ends: the program is in no call any more, and the music is back.
        let hangUp = w.decide(.streamRunning(N(31), false))
        #expect(hangUp.contains(.resume(N(10))), "\(hangUp)")
    }

    @Test("R43 the order does not matter: playing first, then capturing, is the same call")
    func r43PlayingFirstThenCapturingIsACall() {
        var w = Self.musicPlaying()
        #expect(!Self.farEnd(&w).contains(.pause(N(10))))
        let call = Self.capture(&w)
        #expect(call.first == .pause(N(10)), "\(call)")
        #expect(w.session(legacyS(32))?.priority == .call)
    }

    @Test("R43 when the capture ends what the call interrupted resumes, with shouldResume (R14, R15)")
    func r43TheEndOfTheCaptureGivesTheMusicBack() {
        var w = Self.musicPlaying()
        _ = Self.capture(&w)
        _ = Self.farEnd(&w)
        #expect(w.policy.holdsPaused(N(10)))
        let hangUp = w.decide(.streamRunning(N(31), false))
        #expect(hangUp.contains(ended(legacyS(10), resume: true)), "\(hangUp)")
        #expect(hangUp.contains(.resume(N(10))))
        #expect(w.session(legacyS(32))?.priority == .normal)
    }

    @Test("R43 the capture going away ends the call too")
    func r43TheCaptureStreamGoingAwayEndsTheCall() {
        var w = Self.musicPlaying()
        _ = Self.capture(&w)
        _ = Self.farEnd(&w)
        let fx = w.decide(.linkRemoved(L(3)), .streamRemoved(N(31)))
        #expect(fx.contains(.resume(N(10))), "\(fx)")
    }

    @Test("R43 a native program that exits (its streams stop, then go, with its clients) gives the music back with shouldResume")
    func r43AProgramThatExitsGivesTheMusicBack() {
        var w = Self.musicPlaying { $0.resumeGraceMilliseconds = 200 }
        // A native PipeWire program: its clients carry its process, its streams do not.
        let client: Properties = ["application.name": "gst-launch-1.0", "application.process.id": "4242"]
        let stream: Properties = ["application.name": "gst-launch-1.0"]
        w.client(21, client)
        w.stream(31, client: 21, .input, stream)
        _ = w.decide(.linkAdded(L(3), output: N(Self.mic), input: N(31)), .streamRunning(N(31), true))
        w.client(22, client)
        w.stream(32, client: 22, .output, stream)
        #expect(w.decide(.linkAdded(L(4), output: N(32), input: N(Self.speaker)), .streamRunning(N(32), true)).first == .pause(N(10)))
        // The streams stop before they go: the call's end is held for the grace period, and
        // keeps its shouldResume when the (no longer call) streams go.
        var fx: [Effect] = []
        for e: Event in [.streamRunning(N(31), false), .streamRunning(N(32), false), .linkRemoved(L(3)), .streamRemoved(N(31)),
                         .clientRemoved(C(21)), .linkRemoved(L(4)), .streamRemoved(N(32)), .clientRemoved(C(22))] {
            fx += w.decide(e)
        }
        #expect(fx.contains(ended(legacyS(10), resume: true)), "\(fx)")
        #expect(fx.contains(.resume(N(10))))
    }

    @Test("R43 a program whose connection goes at once (its client removed with both streams) gives the music back with shouldResume")
    func r43AProgramWhoseClientGoesGivesTheMusicBack() {
        for captureFirst in [true, false] {
            var w = Self.musicPlaying { $0.resumeGraceMilliseconds = 200 }
            // One native client for both streams, its process on the client.
            w.client(59, ["application.name": "gst-launch-1.0", "application.process.id": "4242"])
            w.stream(60, client: 59, .output)
            w.stream(61, client: 59, .input)
            let start: [Event] = [.linkAdded(L(68), output: N(60), input: N(Self.speaker)), .linkAdded(L(70), output: N(Self.mic), input: N(61))]
            let running: [Event] = captureFirst
                ? [.streamRunning(N(61), true), .streamRunning(N(60), true)] : [.streamRunning(N(60), true), .streamRunning(N(61), true)]
            #expect(w.run(start + running).contains(.pause(N(10))))
            var fx = w.run([.clientRemoved(C(59))])
            if let token = fx.compactMap({ if case .scheduleTimer(let t, _) = $0 { t } else { nil } }).first {
                fx += w.run([.timerFired(token)])
            }
            #expect(fx.contains(ended(legacyS(10), resume: true)), "capture first: \(captureFirst): \(fx)")
            #expect(fx.contains(.resume(N(10))))
        }
    }

    @Test("R43 with the grace period, the music comes back when it ends, not at once")
    func r43TheGracePeriodHoldsTheResume() {
        var w = Self.musicPlaying { $0.resumeGraceMilliseconds = 200 }
        _ = Self.capture(&w)
        _ = Self.farEnd(&w)
        let hangUp = w.when(.streamRunning(N(31), false))
        #expect(!hangUp.contains(.resume(N(10))))
        guard let token = hangUp.compactMap({ if case .scheduleTimer(let t, _) = $0 { t } else { nil } }).first else {
            Issue.record("no grace timer: \(hangUp)")
            return
        }
        #expect(w.decide(.timerFired(token)).contains(.resume(N(10))))
    }

    @Test("R43 R21 a program that only records is a recording: the music plays on, alerts and ambient output are silenced")
    func r43AProgramThatOnlyRecordsSilencesAlerts() {
        var w = Self.musicPlaying()
        w.legacy(40, client: 4, role: "Notification")
        w.play(40)
        let fx = Self.capture(&w)
        #expect(!fx.contains(.pause(N(10))))
        #expect(fx.contains(.silence(N(40), true)), "\(fx)")
        #expect(w.session(legacyS(31))?.active == true)
        #expect(w.session(legacyS(10))?.isPlaying == true)
        #expect(w.decide(.streamRunning(N(31), false)).contains(.silence(N(40), false)))
    }

    @Test("R43 a capture of another program's stream or of a sink's monitor is no microphone (F1): no call")
    func r43OnlyASourceIsAMicrophone() {
        var w = Self.musicPlaying()
        _ = Self.farEnd(&w)
        // A capture stream linked from another stream (the music), not from a source.
        w.client(21, Self.browser)
        w.stream(31, client: 21, .input, Self.browser)
        #expect(!w.decide(.linkAdded(L(3), output: N(10), input: N(31)), .streamRunning(N(31), true)).contains(.pause(N(10))))
        // A monitor recorder of the same program, linked from the speaker.
        var monitor = Self.browser
        monitor["stream.capture.sink"] = "true"
        w.stream(33, client: 21, .input, monitor)
        #expect(!w.decide(.linkAdded(L(5), output: N(Self.speaker), input: N(33)), .streamRunning(N(33), true)).contains(.pause(N(10))))
        #expect(w.session(legacyS(32))?.priority == .normal)
    }

    @Test("R43 an unmanaged role (Production) is never a call; a declared session keeps its declaration")
    func r43UnmanagedAndDeclaredStreamsKeepTheirRules() {
        var w = Self.musicPlaying()
        var production = Self.browser
        production["media.role"] = "Production"
        _ = Self.capture(&w, props: production)
        #expect(!Self.farEnd(&w, props: production).contains(.pause(N(10))))

        var v = Self.musicPlaying()
        var declared = Self.browser
        declared["audio.session.category"] = "playback"
        declared["audio.session.options"] = "mixWithOthers"
        _ = Self.capture(&v, props: declared)
        #expect(!Self.farEnd(&v, props: declared).contains(.pause(N(10))))
        #expect(v.session(clientS(22))?.category == .playback)
    }

    @Test("R43 a virtual device's streams (an echo canceller: a link group) capture and play all the time and are no call")
    func r43AVirtualDevicesStreamsAreNoCall() {
        var w = Self.musicPlaying()
        var echoCancel: Properties = ["application.name": "pipewire", "application.process.id": "100", "node.link-group": "echo-cancel-1"]
        _ = Self.capture(&w, props: echoCancel)
        echoCancel["node.name"] = "echo-cancel-playback"
        #expect(!Self.farEnd(&w, props: echoCancel).contains(.pause(N(10))))
        #expect(w.session(legacyS(31))?.category != .record)
    }

    @Test("R43 calls.from-graph = false turns it off")
    func r43CanBeTurnedOff() {
        var w = Self.musicPlaying { $0.callsFromGraph = false }
        _ = Self.capture(&w)
        #expect(!Self.farEnd(&w).contains(.pause(N(10))))
        #expect(w.session(legacyS(31))?.category != .record)
    }

    @Test("R43 a sandboxed program's call has call priority; an allow list that does not name it withholds it")
    func r43ASandboxedCallIsACallUnlessAnAllowListSaysOtherwise() {
        var sandboxed = Self.browser
        sandboxed[IdentityKey.sandboxed] = "true"
        var w = Self.musicPlaying()
        _ = Self.capture(&w, props: sandboxed)
        #expect(Self.farEnd(&w, props: sandboxed).first == .pause(N(10)))

        var v = Self.musicPlaying { $0.callPriorityApplications = ["/usr/bin/linphone"] }
        _ = Self.capture(&v)
        #expect(!Self.farEnd(&v).contains(.pause(N(10))))
        #expect(v.session(legacyS(32))?.priority == .normal)
    }

    @Test("R43 two programs in a call at once mix: neither interrupts the other")
    func r43TwoCallsMix() {
        var w = Self.musicPlaying()
        _ = Self.capture(&w)
        _ = Self.farEnd(&w)
        var other: Properties = ["application.name": "Firefox", "application.process.id": "777"]
        w.client(51, other)
        w.stream(61, client: 51, .input, other)
        other["x"] = "y"
        w.client(52, other)
        w.stream(62, client: 52, .output, other)
        let fx = w.decide(.linkAdded(L(7), output: N(Self.mic), input: N(61)), .streamRunning(N(61), true),
                          .linkAdded(L(8), output: N(62), input: N(Self.speaker)), .streamRunning(N(62), true))
        #expect(!fx.contains(.pause(N(32))))
        #expect(!fx.contains(.pause(N(31))))
        #expect(w.session(legacyS(62))?.priority == .call)
    }
}

import AudioSession
import ArgumentParser
import Foundation
import Sandbox
import Synchronization

/// `pw-session play`: a small player that follows Apple's guidelines.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a WAV file as a well-behaved audio-session application.",
        discussion: """
        Declares the category (playback by default), activates the session and \
        plays FILE through its own PipeWire stream, printing each event it \
        receives, one line each (--json: one object each):
          interruption began: pauses (the policy has already stopped the stream);
          interruption ended with shouldResume: reactivates and resumes where it stopped;
          ended without shouldResume: stays paused;
          routeChange oldDeviceUnavailable: pauses and stays paused (headphones unplugged);
          mediaServicesWereReset: reactivates and plays on.
        Positions are in frames. Exits 0 after the last frame, 1 on a runtime error, \
        2 on a refused declaration.

        With --commands, reads commands from standard input, one per line:
          speaker   overrideOutputAudioPort(.speaker): play through the built-in speaker
          default   overrideOutputAudioPort(.none): back to the session manager's choice
          route     print the session's currentRoute
        Each prints an "override" or "route" event (or "commandFailed").

        Examples:
          pw-session play song.wav
          pw-session play podcast.wav --mode spokenAudio --json
          pw-session play clip.wav --category ambient
          pw-session play call.wav --category playAndRecord --commands   # then type: speaker
        """
    )

    @Argument(help: ArgumentHelp("The WAV file.", valueName: "FILE"))
    var file: String

    @OptionGroup var declaration: DeclarationOptions

    @Flag(name: .long, help: "One JSON object per event (schema: docs/cli.md).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Extra stream properties, key=value, comma separated (for example media.role=Music).", valueName: "k=v,..."))
    var streamProperties: String?

    @Flag(name: .long, help: "Read commands from standard input, one per line: speaker, default, route.")
    var commands = false

    func run() throws {
        let d = try declaration.declaration(defaultCategory: .playback) ?? Declaration(category: .playback)
        let wav: WAVFile
        do { wav = try WAVFile(contentsOf: file) } catch {
            complain("\(error)")
            throw ExitCode(1)
        }
        var extra: [String: String] = ["node.name": "pw-session-play"]
        for pair in (streamProperties ?? "").split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if kv.count == 2 { extra[kv[0]] = kv[1] }
        }
        let player = Player(wav: wav, json: json, commands: commands)
        try player.run(declaration: d, streamProperties: extra, name: (file as NSString).lastPathComponent)
    }
}

/// The player's state, shared by the PipeWire thread (render) and the event loop.
final class Player: Sendable {
    let wav: WAVFile
    let json: Bool
    let commands: Bool
    private let position = Atomic<Int>(0)
    private let pausedByRoute = Atomic<Bool>(false)
    private let interrupted = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(wav: WAVFile, json: Bool, commands: Bool = false) {
        self.wav = wav
        self.json = json
        self.commands = commands
    }

    var frames: Int { wav.samples.count / max(wav.channels, 1) }

    /// Copies the next frames; at the end, marks the player finished.
    func render(_ dst: UnsafeMutableBufferPointer<Float>, _ channels: Int) -> Int {
        let start = position.load(ordering: .relaxed)
        let want = dst.count / max(channels, 1)
        let n = min(want, frames - start)
        guard n > 0 else {
            finished.store(true, ordering: .relaxed)
            return 0
        }
        let ch = wav.channels
        for f in 0..<n {
            for c in 0..<channels {
                dst[f * channels + c] = wav.samples[(start + f) * ch + min(c, ch - 1)]
            }
        }
        position.store(start + n, ordering: .relaxed)
        return n
    }

    /// One line of output; `at`: the position it reports, when not the current one.
    func emit(_ event: String, _ fields: [(String, String)], text: String, at: Int? = nil) {
        let pos = at ?? position.load(ordering: .relaxed)
        if json {
            var obj: [String: Any] = ["event": event, "position": pos]
            for (k, v) in fields {
                if v == "true" || v == "false" { obj[k] = (v == "true") } else { obj[k] = v }
            }
            let data = (try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            say(String(decoding: data, as: UTF8.self))
        } else {
            say("\(text) position=\(pos)")
        }
    }

    func run(declaration d: Declaration, streamProperties: [String: String], name: String) throws {
        let session = AudioSession(configuration: .init(applicationName: "pw-session play"))
        do {
            try session.setCategory(d.category, mode: d.mode, options: d.options)
            try session.setPrefersNoInterruptionsFromSystemAlerts(d.prefersNoInterruptionsFromSystemAlerts)
            try session.setPrefersInterruptionOnRouteDisconnect(d.prefersInterruptionOnRouteDisconnect)
        } catch {
            throw Refusal(error: error)
        }
        let notifications = session.notifications
        try blocking { try await session.setActive(true) }
        emit("activated", [("category", d.category.rawValue), ("mode", d.mode.rawValue)],
             text: "activated category=\(d.category.rawValue) mode=\(d.mode.rawValue)")
        let output = try AudioOutput(session: session, name: name, rate: wav.sampleRate, channels: wav.channels,
                                     properties: streamProperties) { [self] dst, ch in render(dst, ch) }
        emit("playing", [], text: "playing \(name)")
        if commands {
            // Blocking reads on a thread of their own; end of input ends the commands, not the playing.
            Thread.detachNewThread { [self] in
                while let line = readLine() { self.command(line, session: session) }
            }
        }

        try blocking { [self] in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await n in notifications { try await self.handle(n, session: session, output: output) }
                }
                group.addTask {
                    while !self.finished.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(20)) }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        output.stop()
        _ = try? blocking { try await session.setActive(false, options: .notifyOthersOnDeactivation) }
        emit("finished", [], text: "finished")
    }

    /// One line of `--commands`.
    func command(_ line: String, session: AudioSession) {
        let word = line.trimmingCharacters(in: .whitespaces)
        do throws(SessionError) {
            switch word {
            case "":
                return
            case "speaker", "default":
                try session.overrideOutputAudioPort(word == "speaker" ? .speaker : .none)
                emit("override", [("port", word == "speaker" ? "speaker" : "none")], text: "override \(word == "speaker" ? "speaker" : "none")")
            case "route":
                let r = session.currentRoute
                emit("route", [("outputs", r.outputs.map(\.uid).joined(separator: ",")),
                               ("inputs", r.inputs.map(\.uid).joined(separator: ","))],
                     text: "route \(describe(r))")
            default:
                throw SessionError(code: .badParam, message: "unknown command '\(word)' (speaker, default, route)")
            }
        } catch {
            emit("commandFailed", [("command", word), ("code", error.code.rawValue), ("message", error.message)],
                 text: "command \(word) failed \(error.code.rawValue): \(error.message)")
        }
    }

    func handle(_ n: AudioSessionNotification, session: AudioSession, output: AudioOutput) async throws {
        switch n {
        case .interruption(.began(let reason)):
            // R11: the policy has already stopped our stream; keep it paused ourselves.
            let state = output.state.rawValue
            interrupted.store(true, ordering: .relaxed)
            output.pause()
            emit("interruption", [("phase", "began"), ("reason", reason.rawValue), ("stream", state)],
                 text: "interruption began reason=\(reason.rawValue) stream=\(state)")
        case .interruption(.ended(let shouldResume)):
            interrupted.store(false, ordering: .relaxed)
            emit("interruption", [("phase", "ended"), ("shouldResume", String(shouldResume))],
                 text: "interruption ended shouldResume=\(shouldResume)")
            if shouldResume && !pausedByRoute.load(ordering: .relaxed) {
                try await reactivateAndResume(session, output)
            } else {
                emit("paused", [], text: "paused")
            }
        case .routeChange(let reason, let previous):
            let prev = previous.outputs.map(\.type.rawValue).joined(separator: ",")
            emit("routeChange", [("reason", reason.rawValue), ("previousOutputs", prev)],
                 text: "routeChange reason=\(reason.rawValue) previous=\(prev.isEmpty ? "-" : prev)")
            if reason == .oldDeviceUnavailable {
                // Apple's guideline: the private output is gone, stay paused until the user plays.
                pausedByRoute.store(true, ordering: .relaxed)
                output.pause()
                emit("paused", [], text: "paused")
            }
        case .silenceSecondaryAudioHint(let begin):
            emit("silenceSecondaryAudioHint", [("phase", begin ? "begin" : "end")],
                 text: "silenceSecondaryAudioHint \(begin ? "begin" : "end")")
        case .mediaServicesWereLost:
            emit("mediaServicesWereLost", [], text: "mediaServicesWereLost")
        case .mediaServicesWereReset:
            emit("mediaServicesWereReset", [], text: "mediaServicesWereReset")
            // The library has declared the category again; the application reactivates (R40).
            if !pausedByRoute.load(ordering: .relaxed) && !interrupted.load(ordering: .relaxed) {
                try await reactivateAndResume(session, output)
            }
        case .declarationRefused(let e):
            emit("declarationRefused", [("code", e.code.rawValue), ("message", e.message)],
                 text: "declarationRefused \(e.code.rawValue): \(e.message)")
        }
    }

    private func reactivateAndResume(_ session: AudioSession, _ output: AudioOutput) async throws {
        do {
            try await session.setActive(true)
        } catch {
            emit("activationFailed", [("code", error.code.rawValue), ("message", error.message)],
                 text: "activation failed \(error.code.rawValue): \(error.message)")
            return
        }
        // Where it resumes: read before the stream asks for samples again, or its first
        // quantum, rendered on PipeWire's thread meanwhile, would count as played before.
        let from = position.load(ordering: .relaxed)
        output.resume()
        emit("resumed", [], text: "resumed", at: from)
    }
}

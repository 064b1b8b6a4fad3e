import AudioSession
import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `pw-session run`: an unmodified program with its declaration injected.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run an unmodified program with an audio-session declaration.",
        discussion: """
        The declaration is checked first: one the rules refuse (a mode or an option \
        the category does not take) exits with status 2 and a sentence saying why, \
        and the command is never started. Otherwise pw-session replaces itself with \
        the command, with PIPEWIRE_PROPS (native PipeWire streams) and PULSE_PROP \
        (PulseAudio programs through pipewire-pulse) carrying the declaration on \
        every stream it makes. Its exit status is the command's.

        When the program's last stream goes, the session deactivates. With \
        --notify-others-on-deactivation it gives back what it interrupted (a paused \
        podcast resumes); this is the default for prompts (mode voicePrompt, or the \
        options duckOthers or interruptSpokenAudioAndMixWithOthers), and \
        --no-notify-others-on-deactivation turns it off. The policy resumes a wrapped \
        program itself when what interrupted it ends and gives the audio back.

        Examples:
          pw-session run --category playback -- pw-play song.wav
          pw-session run --category playback --mode spokenAudio -- paplay podcast.wav
          pw-session run --category playback --mode voicePrompt \\
              --options interruptSpokenAudioAndMixWithOthers,duckOthers -- espeak-ng "Turn left"
          pw-session run --category ambient --options duckOthers -- mpv --no-video clip.ogg
        """
    )

    @OptionGroup var declaration: DeclarationOptions

    @Flag(inversion: .prefixedNo, help: "When the program's streams end, let what it interrupted resume (default: on for prompts, off otherwise).")
    var notifyOthersOnDeactivation: Bool?

    /// A prompt that ends gives the audio back unless told otherwise.
    var notifiesOthers: Bool {
        if let notifyOthersOnDeactivation { return notifyOthersOnDeactivation }
        let options = (declaration.options ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return declaration.mode == "voicePrompt" || options.contains("duckOthers") ||
            options.contains("interruptSpokenAudioAndMixWithOthers")
    }

    /// What goes into PIPEWIRE_PROPS and PULSE_PROP.
    var properties: [String: String] {
        var p = declaration.properties
        if notifiesOthers { p[DeclarationKey.deactivation] = DeclarationKey.notifyOthersOnDeactivation }
        return p
    }

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command (after --).", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("Give the program to run after --, for example: pw-session run --category playback -- pw-play song.wav") }
        if declaration.category == nil { throw ValidationError("--category is required: what the program's audio is for (playback, ambient, …).") }
    }

    /// The environment values that carry `props`.
    static func environment(for props: [String: String], existing: [String: String]) -> [String: String] {
        let sorted = props.sorted { $0.key < $1.key }
        let spa = sorted.map { "\($0.key) = \"\($0.value)\"" }.joined(separator: " ")
        let pulse = sorted.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: " ")
        var env: [String: String] = [:]
        // A caller's own PIPEWIRE_PROPS / PULSE_PROP are kept; ours come last and win.
        env["PIPEWIRE_PROPS"] = "{ " + (existing["PIPEWIRE_PROPS"].map { Self.unbrace($0) + " " } ?? "") + spa + " }"
        env["PULSE_PROP"] = (existing["PULSE_PROP"].map { $0 + " " } ?? "") + pulse
        return env
    }

    static func unbrace(_ s: String) -> String {
        var t = s.trimmingCharacters(in: .whitespaces)
        if t.hasPrefix("{") { t.removeFirst() }
        if t.hasSuffix("}") { t.removeLast() }
        return t.trimmingCharacters(in: .whitespaces)
    }

    func run() throws {
        _ = try declaration.declaration()
        let env = Self.environment(for: properties, existing: ProcessInfo.processInfo.environment)
        for (k, v) in env { setenv(k, v, 1) }
        let argv = command.map { strdup($0) } + [nil]
        execvp(command[0], argv)
        complain("cannot run \(command[0]): \(String(cString: strerror(errno)))")
        throw ExitCode(127)
    }
}

import ArgumentParser
import AudioSession
import Dispatch
import Foundation
import MPRISBridge
#if canImport(Glibc)
import Glibc
#endif

/// `pw-session mpris-bridge`.
struct MPRISBridgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mpris-bridge",
        abstract: "Pause and resume MPRIS players along with the policy, so their controls show the truth.",
        discussion: """
        When the policy pauses a program that knows nothing of audio sessions (an \
        interruption, or the headphones it played through went away), the program's \
        window still says it is playing. For players that speak MPRIS (mpv with \
        mpv-mpris, VLC, browsers, most desktop players) this bridge finds the player that \
        owns the paused stream and calls its Pause; when the interruption ends and the \
        session may resume, it calls Play, unless you paused or played the player \
        yourself in the meantime. After headphones are lost it never calls Play. The \
        policy's own pause in the graph stays in force until the player has paused, so \
        nothing is heard in between. Players without MPRIS keep the graph pause only.

        Runs until interrupted; meant to be started with the desktop session (a user \
        service: docs/mpris.md). Stopping it turns the bridge off; nothing else changes. \
        Needs the gdbus tool (Debian package libglib2.0-bin) and a session D-Bus. Prints \
        "bridging" on stderr once it listens, then one line per action.

        Examples:
          pw-session mpris-bridge
          systemctl --user enable --now pw-session-mpris-bridge.service
        """
    )

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the policy at start.", valueName: "seconds"))
    var timeout: Double = 3

    @Flag(name: .shortAndLong, help: "Also print why a stream is not bridged.")
    var verbose = false

    func run() throws {
        guard ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil
            || FileManager.default.fileExists(atPath: (ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/nonexistent") + "/bus")
        else {
            complain("no session D-Bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist")
            throw ExitCode(1)
        }
        let session = try observePolicy(timeout: timeout)
        let chatty = verbose
        let bridge = MPRISBridge(session: session) { line in
            guard chatty || !line.contains("no MPRIS player") else { return }
            FileHandle.standardError.write(Data("mpris-bridge: \(line)\n".utf8))
        }
        // Stop the gdbus monitors before leaving on a signal: no process is left behind.
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                bridge.stop()
                Foundation.exit(0)
            }
            source.resume()
            sources.append(source)
        }
        FileHandle.standardError.write(Data("bridging\n".utf8))
        try blocking { await bridge.run() }
        withExtendedLifetime(sources) {}
    }
}

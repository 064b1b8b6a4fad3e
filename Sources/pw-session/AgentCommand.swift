import ArgumentParser
import AudioSession
import Dispatch
import Foundation
import SessionAgent
#if canImport(Glibc)
import Glibc
#endif

/// What `agent` and its older name `mpris-bridge` share: run the agent until a signal.
private func runAgent(timeout: Double, options: SessionAgent.Options, verbose: Bool) throws {
    let env = ProcessInfo.processInfo.environment
    guard env["DBUS_SESSION_BUS_ADDRESS"] != nil
        || FileManager.default.fileExists(atPath: (env["XDG_RUNTIME_DIR"] ?? "/nonexistent") + "/bus")
    else {
        complain("no session D-Bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist")
        throw ExitCode(1)
    }
    let session = try observePolicy(timeout: timeout)
    let agent = SessionAgent(session: session, options: options) { line in
        guard verbose || !(line.contains("no MPRIS player") || line.hasPrefix("connected to")) else { return }
        FileHandle.standardError.write(Data("agent: \(line)\n".utf8))
    }
    // Leave on SIGINT, SIGTERM and SIGHUP with status 0. The switches the agent set stay as
    // set (as after `pw-session lock on`); nothing else is left behind.
    var sources: [DispatchSourceSignal] = []
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        signal(sig, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        source.setEventHandler { Foundation.exit(0) }
        source.resume()
        sources.append(source)
    }
    FileHandle.standardError.write(Data("agent running\n".utf8))
    try blocking { await agent.run() }
    withExtendedLifetime(sources) {}
}

/// `pw-session agent`.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Carry your desktop session to the policy: MPRIS players, the screen lock, Do Not Disturb.",
        discussion: """
        Runs until stopped; meant to start with your desktop session as a user service:

          systemctl --user enable --now pw-session-agent.service

        MPRIS players. When the policy pauses a program that knows nothing of audio \
        sessions (an interruption, or the headphones it played through went away), the \
        program's window still says it is playing. For players that speak MPRIS (mpv with \
        mpv-mpris, VLC, browsers, most desktop players) the agent finds the player that \
        owns the paused stream and calls its Pause; when the interruption ends and the \
        session may resume, it calls Play, unless you paused or played the player \
        yourself in the meantime. After headphones are lost it never calls Play. The \
        policy's own pause in the graph stays in force until the player has paused, so \
        nothing is heard in between. Players without MPRIS keep the graph pause only.

        The screen lock. When your screen locks (systemd-logind's LockedHint for your \
        session, or the screensaver's ActiveChanged signal of org.freedesktop.ScreenSaver \
        or org.gnome.ScreenSaver), the agent turns the policy's screen lock on: ambient \
        sounds are muted and playback plays on. Unlocking turns it off.

        Do Not Disturb. When you turn on Do Not Disturb (GNOME's notification banners \
        off, or a notification server's Inhibited property, as on KDE Plasma), the agent \
        turns silent mode on; turning Do Not Disturb off turns it off.

        Who wins: the latest change. The agent writes a switch when it starts and when the \
        desktop's state changes; "pw-session lock" and "pw-session silent" set the same \
        switches by hand, and a switch set by hand holds until the desktop's state next \
        changes (restart the agent to follow the desktop again at once). \
        --no-screen-lock and --no-do-not-disturb leave a switch to you alone.

        Needs a session D-Bus; the system bus is optional (without it the screensaver is \
        the only source of the screen lock). Prints "agent running" on stderr once it \
        listens, then one line per thing it does. The bus connections are made again when \
        a bus restarts.

        Examples:
          pw-session agent
          pw-session agent --no-do-not-disturb --verbose
        """
    )

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the policy at start.", valueName: "seconds"))
    var timeout: Double = 3

    @Flag(name: .long, help: "Do not pause or resume MPRIS players.")
    var noMpris = false

    @Flag(name: .long, help: "Do not follow the desktop's screen lock.")
    var noScreenLock = false

    @Flag(name: .long, help: "Do not follow the desktop's Do Not Disturb.")
    var noDoNotDisturb = false

    @Flag(name: .shortAndLong, help: "Also print bus connections and why a stream is not bridged.")
    var verbose = false

    func validate() throws {
        guard !(noMpris && noScreenLock && noDoNotDisturb) else {
            throw ValidationError("--no-mpris, --no-screen-lock and --no-do-not-disturb together leave the agent nothing to do.")
        }
    }

    func run() throws {
        try runAgent(timeout: timeout,
                     options: .init(mpris: !noMpris, screenLock: !noScreenLock, doNotDisturb: !noDoNotDisturb),
                     verbose: verbose)
    }
}

/// `pw-session mpris-bridge`: the agent's MPRIS part alone (its name before the agent).
struct MPRISBridgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mpris-bridge",
        abstract: "The agent's MPRIS part alone: \"pw-session agent --no-screen-lock --no-do-not-disturb\".",
        shouldDisplay: false
    )

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the policy at start.", valueName: "seconds"))
    var timeout: Double = 3

    @Flag(name: .shortAndLong, help: "Also print bus connections and why a stream is not bridged.")
    var verbose = false

    func run() throws {
        try runAgent(timeout: timeout, options: .init(mpris: true, screenLock: false, doNotDisturb: false), verbose: verbose)
    }
}

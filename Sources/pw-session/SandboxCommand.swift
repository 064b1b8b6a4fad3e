import ArgumentParser
import Dispatch
import Foundation
import Sandbox
#if canImport(Glibc)
import Glibc
#endif

/// `pw-session sandbox`.
struct SandboxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Run a command against a private, headless PipeWire.",
        discussion: """
        Starts a session D-Bus, pipewire (with the audio-session module unless \
        --no-module), wireplumber and pipewire-pulse in a temporary directory, with \
        virtual outputs (null sinks) instead of sound cards. The caller's PipeWire, \
        WirePlumber state, D-Bus and sound cards are never touched. Everything is torn \
        down when the command exits or on SIGINT/SIGTERM.

        Without a command, prints the variables that reach the sandbox from another \
        shell and waits until interrupted.

        By default the sandbox runs the system's PipeWire. --pipewire runs another one \
        from an unpacked tree instead (for example PipeWire 1.4 with WirePlumber 0.5, \
        unpacked from Debian packages): its daemons, its libraries for every program \
        started in the sandbox, and the module from --module-dir built against it. A \
        whole root filesystem with a newer C library than this machine's (PipeWire 1.6 \
        from Debian sid, made by the project's scripts/pipewire-rootfs.sh) works too: its \
        daemons and its PipeWire tools (pw-play, pw-dump, wpctl, ...) run from its \
        host/bin, and every other program keeps this machine's libraries. The variable \
        AUDIO_SESSION_PIPEWIRE_PREFIX does the same.

        Examples:
          pw-session sandbox -- pw-play tone.wav
          pw-session sandbox --no-module -- sh -c 'pw-play a.wav & pw-dump'
          pw-session sandbox --devices speaker -- paplay tone.wav
          pw-session sandbox --verbose
          pw-session sandbox --module-arg resume.grace-ms=0 --module-arg duck.level=0.3 -- pw-play song.wav
          pw-session sandbox --pipewire build/pipewire-1.4/root --module-dir build/meson-pw1.4 -- pw-play tone.wav
          pw-session sandbox --pipewire build/pipewire-1.4/root --module-dir build/meson-pw1.4 --role-loopbacks

        --role-loopbacks enables WirePlumber 0.5's role-based policy as WirePlumber \
        documents it (a loopback sink per media role), with WirePlumber's duck level at \
        1.0 (the module ducks). It needs WirePlumber 0.5.

        --bluetooth adds a Bluetooth headset: a simulated BlueZ (fake-bluez.py, Debian's \
        python3-dbus and python3-gi) on a private system bus, and PipeWire's own \
        Bluetooth plugin (Debian package libspa-0.2-bluetooth) in WirePlumber, which makes \
        the headset's real bluez_card and bluez_output objects. The headset is paired but \
        not connected; connect and disconnect it from inside the sandbox:
          gdbus call --system --dest org.bluez --object-path /org/bluez \\
            --method org.audiosession.FakeBluez.Connect
          gdbus call --system --dest org.bluez --object-path /org/bluez \\
            --method org.audiosession.FakeBluez.Disconnect device
        Disconnect takes device (the headset disconnects), transport (its audio stream \
        ends) or gone (out of range: BlueZ forgets it).
        """
    )

    @Option(name: .long, help: ArgumentHelp("Virtual outputs to create, comma separated (speaker, headphones).", valueName: "names"))
    var devices: String = "speaker,headphones"

    @Flag(name: .customLong("no-module"), help: "Do not load libpipewire-module-audio-session.")
    var noModule = false

    @Option(name: .customLong("module-dir"), help: ArgumentHelp("Directory holding libpipewire-module-audio-session.so.", valueName: "dir"))
    var moduleDirectory: String?

    @Option(name: .customLong("module-arg"), help: ArgumentHelp("An argument of the module, as KEY=VALUE (for example duck.level=0.3 or resume.grace-ms=0); repeat for more.", valueName: "key=value"))
    var moduleArguments: [String] = []

    @Option(name: .customLong("pipewire"), help: ArgumentHelp("Run the PipeWire unpacked in this directory (it holds usr/bin/pipewire) instead of the system's.", valueName: "prefix"))
    var pipewirePrefix: String?

    @Flag(name: .customLong("role-loopbacks"), help: "Enable WirePlumber 0.5's role-based policy (a loopback sink per media role, as WirePlumber documents it), with WirePlumber's own duck off. Needs WirePlumber 0.5.")
    var roleLoopbacks = false

    @Flag(name: .customLong("bluetooth"), help: "Add a simulated Bluetooth headset (a fake BlueZ on a private system bus, PipeWire's own Bluetooth plugin).")
    var bluetooth = false

    @Flag(name: .shortAndLong, help: "Print the commands, the sandbox directory and the daemon PIDs.")
    var verbose = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command to run in the sandbox (after --).", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        do {
            _ = try VirtualDevice.parseList(devices)
            let install = try pipewirePrefix.map { try PipeWireInstall(prefix: $0) }
                ?? PipeWireInstall.fromEnvironment(ProcessInfo.processInfo.environment)
            if roleLoopbacks && !install.wirePlumberUsesProfiles {
                throw SandboxError.roleLoopbacksNeedWirePlumber05(install.description)
            }
            if bluetooth && SandboxConfig.fakeBluezPath() == nil {
                throw ValidationError("--bluetooth needs fake-bluez.py, installed by make install; set AUDIO_SESSION_FAKE_BLUEZ to its path.")
            }
            for a in moduleArguments where !a.contains("=") || a.hasPrefix("=") {
                throw ValidationError("--module-arg takes KEY=VALUE, for example duck.level=0.3; got '\(a)'.")
            }
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func run() throws {
        var options = SandboxOptions(
            devices: (try? VirtualDevice.parseList(devices)) ?? [],
            loadModule: !noModule,
            moduleDirectory: moduleDirectory,
            verbose: verbose,
            progress: { line in FileHandle.standardError.write(Data(line.utf8)) },
            pipewire: pipewirePrefix.flatMap { try? PipeWireInstall(prefix: $0) },
            roleLoopbacks: roleLoopbacks
        )
        options.bluetooth = bluetooth
        options.fakeBluez = bluetooth ? SandboxConfig.fakeBluezPath() : nil
        for a in moduleArguments {
            guard let eq = a.firstIndex(of: "=") else { continue }
            options.moduleArguments[String(a[..<eq])] = String(a[a.index(after: eq)...])
        }
        let status = SandboxRunner(options: options, command: command).run()
        if status != 0 { throw ExitCode(status) }
    }
}

/// Starts the sandbox, runs the command, forwards signals, tears down.
final class SandboxRunner: @unchecked Sendable {
    let options: SandboxOptions
    let command: [String]
    private let lock = NSLock()
    private var receivedSignal: Int32 = 0
    private var sandbox: Sandbox?
    private var child: ChildProcess?
    private let wake = DispatchSemaphore(value: 0)
    private var sources: [DispatchSourceSignal] = []

    init(options: SandboxOptions, command: [String]) {
        self.options = options
        self.command = command
    }

    private func err(_ s: String) { FileHandle.standardError.write(Data(s.utf8)) }

    /// Returns the exit status of the whole command.
    func run() -> Int32 {
        installSignalHandlers()
        defer { sources.forEach { $0.cancel() } }

        let sb: Sandbox
        do {
            sb = try Sandbox.start(options)
        } catch {
            err("error: \(error)\n")
            if let sig = signalled() { return 128 + sig }
            return 1
        }
        lock.lock(); sandbox = sb; let early = receivedSignal; lock.unlock()
        defer { sb.stop() }
        if early != 0 { return 128 + early }

        if command.isEmpty { return waitInteractively(sb) }

        let c: ChildProcess
        do {
            c = try sb.spawn(command, inheritOutput: true)
        } catch {
            err("error: \(error)\n")
            return 127
        }
        lock.lock(); child = c; let sig = receivedSignal; lock.unlock()
        if sig != 0 { c.signal(sig) }
        if options.verbose { err("running \(command.joined(separator: " ")) (pid \(c.pid))\n") }
        let status = c.wait()
        if let sig = signalled() { return 128 + sig }
        return status
    }

    private func signalled() -> Int32? {
        lock.lock(); defer { lock.unlock() }
        return receivedSignal == 0 ? nil : receivedSignal
    }

    private func waitInteractively(_ sb: Sandbox) -> Int32 {
        let out = FileHandle.standardOutput
        var text = "# The sandbox is running. To reach it from another shell:\n"
        for (k, v) in sb.exportedVariables.sorted(by: { $0.key < $1.key }) {
            text += "export \(k)=\(shellQuote(v))\n"
        }
        text += "unset PIPEWIRE_REMOTE\n"
        text += "# module: \(sb.modulePath ?? "none (--no-module)")\n"
        text += "# devices: \(sb.devices.map { "\($0.name) (\($0.formFactor), priority \($0.priority))" }.joined(separator: ", "))\n"
        text += "# directory: \(sb.directory)\n"
        text += "# daemon pids: \(sb.daemonProcesses.map { "\($0.name)=\($0.pid)" }.joined(separator: " "))\n"
        text += "# Press Ctrl-C to stop.\n"
        out.write(Data(text.utf8))
        while true {
            if wake.wait(timeout: .now() + 1) == .success, let sig = signalled() {
                return 128 + sig
            }
            if let dead = sb.daemonProcesses.first(where: { !$0.isRunning }) {
                err("error: \(dead.name) exited (status \(dead.exitStatus ?? -1)).\n\(dead.logTail())\n")
                return 1
            }
        }
    }

    private func installSignalHandlers() {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [weak self] in self?.handle(sig) }
            source.resume()
            sources.append(source)
        }
    }

    private func handle(_ sig: Int32) {
        lock.lock()
        if receivedSignal == 0 { receivedSignal = sig }
        let c = child
        lock.unlock()
        if let c {
            c.signal(sig)
            // A command that ignores the signal is killed after a grace period.
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) { c.signal(SIGKILL) }
        }
        wake.signal()
    }
}

func shellQuote(_ s: String) -> String {
    if s.allSatisfy({ $0.isLetter || $0.isNumber || "/_-.:=,+".contains($0) }) { return s }
    return "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

import Foundation

/// A virtual output created in the sandbox as a `support.null-audio-sink` node.
public struct VirtualDevice: Sendable, Hashable, CustomStringConvertible {
    /// `node.name` (also what `pw-record --target` and `pactl` use).
    public var name: String
    /// `node.description`.
    public var nodeDescription: String
    /// `device.form-factor` (`internal`, `headphones`, …).
    public var formFactor: String
    /// `priority.session`: WirePlumber makes the highest one the default.
    public var priority: Int
    /// `media.class`.
    public var mediaClass: String

    public init(name: String, nodeDescription: String, formFactor: String, priority: Int, mediaClass: String = "Audio/Sink") {
        self.name = name
        self.nodeDescription = nodeDescription
        self.formFactor = formFactor
        self.priority = priority
        self.mediaClass = mediaClass
    }

    /// The built-in speaker: `node.name=speaker`, `device.form-factor=internal`, priority 1000.
    public static let speaker = VirtualDevice(name: "speaker", nodeDescription: "Speaker", formFactor: "internal", priority: 1000)
    /// Headphones: `node.name=headphones`, `device.form-factor=headphones`, priority 2000 (the default output).
    public static let headphones = VirtualDevice(name: "headphones", nodeDescription: "Headphones", formFactor: "headphones", priority: 2000)

    /// The devices known by name.
    public static let known: [VirtualDevice] = [.speaker, .headphones]

    /// The device called `name` (`speaker`, `headphones`).
    public static func named(_ name: String) throws -> VirtualDevice {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard let d = known.first(where: { $0.name == trimmed }) else {
            throw SandboxError.unknownDevice(trimmed, known: known.map(\.name))
        }
        return d
    }

    /// Parses a comma-separated list (`speaker,headphones`). Unknown or repeated names are errors.
    public static func parseList(_ list: String) throws -> [VirtualDevice] {
        var result: [VirtualDevice] = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.trimmingCharacters(in: .whitespaces)
            if name.isEmpty { continue }
            let d = try named(name)
            if result.contains(d) { throw SandboxError.duplicateDevice(name) }
            result.append(d)
        }
        return result
    }

    /// The properties given to `pw-cli create-node adapter`.
    public var nodeProperties: String {
        "{ factory.name=support.null-audio-sink node.name=\(name) node.description=\"\(nodeDescription)\" " +
        "media.class=\(mediaClass) object.linger=true audio.position=[FL FR] " +
        "device.form-factor=\(formFactor) priority.session=\(priority) }"
    }

    public var description: String { name }
}

/// How to start a sandbox.
public struct SandboxOptions: Sendable {
    /// The virtual outputs; default speaker + headphones.
    public var devices: [VirtualDevice]
    /// Load `libpipewire-module-audio-session` into the sandbox's PipeWire.
    public var loadModule: Bool
    /// The directory holding `libpipewire-module-audio-session.so` (overrides the search).
    public var moduleDirectory: String?
    /// Arguments of the module (`duck.level`, `resume.grace-ms`, …), as SPA-JSON values.
    public var moduleArguments: [String: String] = [:]
    /// Executables the daemon's access module restricts (its `access.restricted` list). Only
    /// PipeWire before 0.3.83 reads the list; later versions ignore it.
    public var accessRestricted: [String] = []
    /// Print every command the sandbox runs, and its daemon PIDs, through `progress`.
    public var verbose: Bool
    /// Start pipewire-pulse (for pulse clients: paplay, pactl).
    public var startPulse: Bool
    /// How long each daemon may take to come up.
    public var startupTimeout: TimeInterval
    /// Receives progress lines ("starting pipewire… ok"); nil = silent.
    public var progress: (@Sendable (String) -> Void)?
    /// The PipeWire to run; nil: the tree named by `AUDIO_SESSION_PIPEWIRE_PREFIX`,
    /// else the system's.
    public var pipewire: PipeWireInstall?
    /// WirePlumber 0.5's role-based policy, configured as its documentation shows (one
    /// loopback sink per media role, `wireplumber.conf.d/60-role-loopbacks.conf`), with
    /// WirePlumber's own duck turned off (`linking.role-based.duck-level = 1.0`: the module
    /// ducks). Only with WirePlumber 0.5 or later. The virtual outputs are created before
    /// WirePlumber starts, so the loopbacks find real sinks when they appear.
    public var roleLoopbacks: Bool
    /// With `roleLoopbacks`: WirePlumber's `linking.role-based.duck-level`. 1.0 (no duck of
    /// its own) is what the README asks for beside the module; WirePlumber's default is 0.3.
    public var roleDuckLevel: Double
    /// A private system bus (a second dbus-daemon, at `runtime/system_bus_socket`) for the
    /// sandbox's clients, where mock system services (logind) can be put; without it the
    /// clients, like the daemons, have no system bus at all.
    public var systemBus: Bool = false
    /// Bluetooth through PipeWire's own bluez5 plugin, against a fake BlueZ on the private
    /// system bus (`fakeBluez`, started before WirePlumber): the daemons get the system bus
    /// and WirePlumber's Bluetooth monitor is on. Implies `systemBus`.
    public var bluetooth: Bool = false
    /// The fake BlueZ program (data/fake-bluez.py; `SandboxConfig.fakeBluezPath()` finds it) for `bluetooth`.
    public var fakeBluez: String?
    /// How much of its work the module writes into the daemon's log (`logs/pipewire.log`,
    /// `Sandbox.moduleLog`): 4 its decisions (pauses, resumes, fades, notifications), 5 also
    /// each stream's start, stop and activation. nil: PipeWire's default, warnings only. A
    /// `PIPEWIRE_DEBUG` of the caller's own is kept as it is.
    public var moduleLogLevel: Int?
    /// How much pipewire-pulse writes of its streams into its log (`logs/pipewire-pulse.log`,
    /// `Sandbox.pulseLog`): 3 each cork and uncork, underflow and its stream's pauses and
    /// resumes; 4 also every request for data and every block received. nil: PipeWire's
    /// default, warnings only.
    public var pulseLogLevel: Int?

    public init(
        devices: [VirtualDevice] = [.speaker, .headphones],
        loadModule: Bool = true,
        moduleDirectory: String? = nil,
        verbose: Bool = false,
        startPulse: Bool = true,
        startupTimeout: TimeInterval = 20,
        progress: (@Sendable (String) -> Void)? = nil,
        pipewire: PipeWireInstall? = nil,
        roleLoopbacks: Bool = false,
        roleDuckLevel: Double = 1.0
    ) {
        self.devices = devices
        self.loadModule = loadModule
        self.moduleDirectory = moduleDirectory
        self.verbose = verbose
        self.startPulse = startPulse
        self.startupTimeout = startupTimeout
        self.progress = progress
        self.pipewire = pipewire
        self.roleLoopbacks = roleLoopbacks
        self.roleDuckLevel = roleDuckLevel
    }
}

/// Why the sandbox failed.
public enum SandboxError: Error, CustomStringConvertible, LocalizedError, Equatable {
    case unknownDevice(String, known: [String])
    case duplicateDevice(String)
    case spawnFailed(program: String, reason: String)
    case tempDirectory(String)
    case notReady(what: String, timeout: TimeInterval, log: String)
    case daemonExited(name: String, status: Int32, log: String)
    case moduleNotFound(searched: [String])
    case commandFailed(command: String, status: Int32, stderr: String)
    case timeout(String)
    case stopped
    case badWAV(String)
    case badPipeWireTree(String, reason: String)
    /// Role loopbacks asked of a WirePlumber older than 0.5.
    case roleLoopbacksNeedWirePlumber05(String)

    public var description: String {
        switch self {
        case let .unknownDevice(name, known):
            return "Unknown device '\(name)'. Known devices: \(known.joined(separator: ", "))."
        case let .duplicateDevice(name):
            return "Device '\(name)' is listed twice."
        case let .spawnFailed(program, reason):
            return "Could not start '\(program)': \(reason)."
        case let .tempDirectory(reason):
            return "Could not create the sandbox's temporary directory: \(reason)."
        case let .notReady(what, timeout, log):
            return "\(what) did not come up within \(Int(timeout)) s." + Self.logSuffix(log)
        case let .daemonExited(name, status, log):
            return "\(name) exited during start-up (status \(status))." + Self.logSuffix(log)
        case let .moduleNotFound(searched):
            return "libpipewire-module-audio-session.so was not found (looked in: \(searched.joined(separator: ", "))). " +
                "Build it (make module) or pass --no-module."
        case let .commandFailed(command, status, stderr):
            return "'\(command)' failed with status \(status)." + Self.logSuffix(stderr)
        case let .timeout(what):
            return "Timed out waiting for \(what)."
        case .stopped:
            return "The sandbox has been stopped."
        case let .badWAV(reason):
            return "Not a usable WAV file: \(reason)."
        case let .badPipeWireTree(path, reason):
            return "'\(path)' is not a PipeWire tree the sandbox can run: \(reason). " +
                "(This project's scripts/pipewire-tree.sh makes one from Debian's packages.)"
        case let .roleLoopbacksNeedWirePlumber05(install):
            return "Role loopbacks are WirePlumber 0.5's role-based policy, and \(install) comes with an older " +
                "WirePlumber (0.4 has no such policy). Run a PipeWire with WirePlumber 0.5 " +
                "(--pipewire, AUDIO_SESSION_PIPEWIRE_PREFIX) or leave role loopbacks off."
        }
    }

    public var errorDescription: String? { description }

    private static func logSuffix(_ log: String) -> String {
        let t = log.trimmingCharacters(in: .whitespacesAndNewlines)
        return t.isEmpty ? "" : "\nLast lines of its log:\n" + t
    }
}

import Foundation

/// Which PipeWire (and WirePlumber) a sandbox runs: the system's, a private
/// tree unpacked from distribution packages (`scripts/pipewire-tree.sh` makes
/// one with PipeWire 1.4 and WirePlumber 0.5 from Debian's packages), or a whole
/// root filesystem with a C library of its own (`scripts/pipewire-rootfs.sh` makes
/// one with PipeWire 1.6 from Debian sid).
public struct PipeWireInstall: Sendable, Equatable, CustomStringConvertible {
    /// The tree's root (it holds `usr/bin/pipewire`), nil for the system's PipeWire.
    public let prefix: String?
    /// `usr/lib/<triplet>` of the tree (holds `libpipewire-0.3.so.0`), nil for the system.
    public let libraryDirectory: String?
    /// Whether its WirePlumber is 0.5 or later (configured with SPA-JSON profiles,
    /// not Lua files).
    public let wirePlumberUsesProfiles: Bool
    /// For a root filesystem with a C library of its own (newer than the host's): the
    /// directory of its PipeWire programs made to start on the host with the root's loader
    /// and libraries (`host/bin`, made by `scripts/pipewire-rootfs.sh`). Its daemons and
    /// tools are started from there, and its libraries are never given to the host's
    /// programs. Nil for the system and for a tree that uses the host's C library.
    public let hostPrograms: String?

    /// The system's PipeWire, found on `PATH`.
    public static var system: PipeWireInstall {
        let fm = FileManager.default
        let wp05 = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"]
            .contains { fm.fileExists(atPath: $0 + "/wireplumber-0.5") }
        return PipeWireInstall(prefix: nil, libraryDirectory: nil, wirePlumberUsesProfiles: wp05, hostPrograms: nil)
    }

    private init(prefix: String?, libraryDirectory: String?, wirePlumberUsesProfiles: Bool, hostPrograms: String?) {
        self.prefix = prefix
        self.libraryDirectory = libraryDirectory
        self.wirePlumberUsesProfiles = wirePlumberUsesProfiles
        self.hostPrograms = hostPrograms
    }

    /// A private tree rooted at `prefix` (the directory holding `usr/`).
    public init(prefix: String) throws {
        let fm = FileManager.default
        let root = URL(fileURLWithPath: prefix).standardizedFileURL.path
        guard fm.isExecutableFile(atPath: root + "/usr/bin/pipewire") else {
            throw SandboxError.badPipeWireTree(root, reason: "it has no usr/bin/pipewire")
        }
        let libs = root + "/usr/lib"
        let candidates = ((try? fm.contentsOfDirectory(atPath: libs)) ?? []).map { libs + "/" + $0 } + [libs]
        guard let libDir = candidates.first(where: {
            fm.fileExists(atPath: $0 + "/pipewire-0.3/libpipewire-module-protocol-native.so")
        }) else {
            throw SandboxError.badPipeWireTree(root, reason: "it has no usr/lib/*/pipewire-0.3 with PipeWire's modules")
        }
        guard fm.isExecutableFile(atPath: root + "/usr/bin/wireplumber") else {
            throw SandboxError.badPipeWireTree(root, reason: "it has no usr/bin/wireplumber")
        }
        var hostPrograms: String?
        if fm.fileExists(atPath: libDir + "/libc.so.6") {
            guard fm.isExecutableFile(atPath: root + "/host/bin/pipewire") else {
                throw SandboxError.badPipeWireTree(root, reason: "it has a C library of its own but no host/bin with its programs made to start on this machine (scripts/pipewire-rootfs.sh makes them)")
            }
            hostPrograms = root + "/host/bin"
        }
        self.init(prefix: root, libraryDirectory: libDir,
                  wirePlumberUsesProfiles: fm.fileExists(atPath: libDir + "/wireplumber-0.5"), hostPrograms: hostPrograms)
    }

    /// The install named by `AUDIO_SESSION_PIPEWIRE_PREFIX` in `environment`, else the system's.
    public static func fromEnvironment(_ environment: [String: String]) throws -> PipeWireInstall {
        if let p = environment["AUDIO_SESSION_PIPEWIRE_PREFIX"], !p.isEmpty {
            return try PipeWireInstall(prefix: p)
        }
        return .system
    }

    /// A PipeWire with WirePlumber 0.5 or later, for what only exists there (the role-based
    /// policy): the tree named by `AUDIO_SESSION_PIPEWIRE_PREFIX` when it is one, else the
    /// tree `make pipewire-1.4` unpacks into this checkout (`build/pipewire-1.4/root`).
    public static func withWirePlumber05(_ environment: [String: String]) throws -> PipeWireInstall {
        if let p = environment["AUDIO_SESSION_PIPEWIRE_PREFIX"], !p.isEmpty {
            let install = try PipeWireInstall(prefix: p)
            if install.wirePlumberUsesProfiles { return install }
        }
        let system = PipeWireInstall.system
        if system.wirePlumberUsesProfiles { return system }
        guard let checkout = SandboxConfig.findCheckout() else {
            throw SandboxError.badPipeWireTree("build/pipewire-1.4/root", reason: "no checkout of this project was found to hold it")
        }
        let tree = checkout + "/build/pipewire-1.4/root"
        let install = try PipeWireInstall(prefix: tree)
        guard install.wirePlumberUsesProfiles else {
            throw SandboxError.badPipeWireTree(tree, reason: "its WirePlumber is older than 0.5")
        }
        return install
    }

    /// PipeWire's own module directory.
    func moduleDirectory(scratch: String) -> String? {
        if let lib = libraryDirectory { return lib + "/pipewire-0.3" }
        return SandboxConfig.systemModuleDirectory(scratch: scratch)
    }

    /// Where PipeWire's default configuration files are (`pipewire.conf`, `client.conf`, …).
    var configurationDataDirectories: [String] {
        if let prefix { return [prefix + "/usr/share/pipewire"] }
        return SandboxConfig.pipewireConfDataDirs
    }

    /// Where WirePlumber's default configuration and scripts are.
    public var wirePlumberDataDirectories: [String] {
        if let prefix { return [prefix + "/usr/share/wireplumber"] }
        return SandboxConfig.wireplumberDataDirs
    }

    /// The variables that make programs use this install: its programs first on
    /// `PATH`, its libraries, SPA plugins, modules and WirePlumber data. Empty for
    /// the system's PipeWire, and for a root filesystem with a C library of its own: the
    /// host's programs keep the host's libraries and plugins (`daemonEnvironment`).
    func environment(path: String) -> [String: String] {
        guard hostPrograms == nil, let prefix, let lib = libraryDirectory else { return [:] }
        return pluginEnvironment.merging(["PATH": prefix + "/usr/bin:" + path, "LD_LIBRARY_PATH": lib]) { $1 }
    }

    /// What its daemons need beyond `environment`: for a root filesystem with a C library
    /// of its own, where its plugins and data are (its programs find its libraries
    /// themselves); nothing otherwise.
    var daemonEnvironment: [String: String] {
        hostPrograms == nil ? [:] : pluginEnvironment
    }

    private var pluginEnvironment: [String: String] {
        guard let prefix, let lib = libraryDirectory else { return [:] }
        return [
            "SPA_PLUGIN_DIR": lib + "/spa-0.2",
            "PIPEWIRE_MODULE_DIR": lib + "/pipewire-0.3",
            "WIREPLUMBER_MODULE_DIR": lib + "/wireplumber-0.5",
            "WIREPLUMBER_DATA_DIR": prefix + "/usr/share/wireplumber",
        ]
    }

    /// How to start one of its daemons (`pipewire`, `wireplumber`, `pipewire-pulse`): by
    /// name on `PATH`, or from `hostPrograms`.
    func daemonCommand(_ argv: [String]) -> [String] {
        guard let hostPrograms, let name = argv.first else { return argv }
        return [hostPrograms + "/" + name] + argv.dropFirst()
    }

    /// For a root filesystem with a C library of its own: shell scripts, by program name,
    /// that start its PipeWire and WirePlumber tools (`pw-dump`, `pw-cli`, `pw-play`,
    /// `wpctl`, …) from `hostPrograms` with its plugins, so that the programs that look at
    /// the graph are that generation's, as on the other generations. Empty otherwise.
    func clientWrappers() -> [String: String] {
        guard let hostPrograms, let prefix else { return [:] }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: hostPrograms)) ?? [])
            .filter { $0.hasPrefix("pw-") || $0 == "wpctl" }
        let vars = pluginEnvironment.sorted { $0.key < $1.key }
            .map { "\($0.key)=" + Self.shellQuoted($0.value) }.joined(separator: " ")
        var scripts: [String: String] = [:]
        for name in names {
            scripts[name] = "#!/bin/sh\n# \(name) of \(prefix).\n"
                + "\(vars) exec \(Self.shellQuoted(hostPrograms + "/" + name)) \"$@\"\n"
        }
        return scripts
    }

    static func shellQuoted(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    public var description: String { prefix.map { "PipeWire in \($0)" } ?? "the system's PipeWire" }
}

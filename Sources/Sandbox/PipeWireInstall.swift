import Foundation

/// Which PipeWire (and WirePlumber) a sandbox runs: the system's, or a private
/// tree unpacked from distribution packages (`scripts/pipewire-tree.sh` makes
/// one with PipeWire 1.4 and WirePlumber 0.5 from Debian's packages).
public struct PipeWireInstall: Sendable, Equatable, CustomStringConvertible {
    /// The tree's root (it holds `usr/bin/pipewire`), nil for the system's PipeWire.
    public let prefix: String?
    /// `usr/lib/<triplet>` of the tree (holds `libpipewire-0.3.so.0`), nil for the system.
    public let libraryDirectory: String?
    /// Whether its WirePlumber is 0.5 or later (configured with SPA-JSON profiles,
    /// not Lua files).
    public let wirePlumberUsesProfiles: Bool

    /// The system's PipeWire, found on `PATH`.
    public static var system: PipeWireInstall {
        let fm = FileManager.default
        let wp05 = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"]
            .contains { fm.fileExists(atPath: $0 + "/wireplumber-0.5") }
        return PipeWireInstall(prefix: nil, libraryDirectory: nil, wirePlumberUsesProfiles: wp05)
    }

    private init(prefix: String?, libraryDirectory: String?, wirePlumberUsesProfiles: Bool) {
        self.prefix = prefix
        self.libraryDirectory = libraryDirectory
        self.wirePlumberUsesProfiles = wirePlumberUsesProfiles
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
        self.init(prefix: root, libraryDirectory: libDir,
                  wirePlumberUsesProfiles: fm.fileExists(atPath: libDir + "/wireplumber-0.5"))
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
    var wirePlumberDataDirectories: [String] {
        if let prefix { return [prefix + "/usr/share/wireplumber"] }
        return SandboxConfig.wireplumberDataDirs
    }

    /// The variables that make programs use this install: its programs first on
    /// `PATH`, its libraries, SPA plugins, modules and WirePlumber data. Empty for
    /// the system's PipeWire.
    func environment(path: String) -> [String: String] {
        guard let prefix, let lib = libraryDirectory else { return [:] }
        return [
            "PATH": prefix + "/usr/bin:" + path,
            "LD_LIBRARY_PATH": lib,
            "SPA_PLUGIN_DIR": lib + "/spa-0.2",
            "PIPEWIRE_MODULE_DIR": lib + "/pipewire-0.3",
            "WIREPLUMBER_MODULE_DIR": lib + "/wireplumber-0.5",
            "WIREPLUMBER_DATA_DIR": prefix + "/usr/share/wireplumber",
        ]
    }

    public var description: String { prefix.map { "PipeWire in \($0)" } ?? "the system's PipeWire" }
}

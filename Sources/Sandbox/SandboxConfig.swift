import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Configuration files and module lookup for the sandbox.
public enum SandboxConfig {
    static let moduleFileName = "libpipewire-module-audio-session.so"

    /// Where Debian (and most distributions) install PipeWire's default configuration.
    static let pipewireConfDataDirs = ["/usr/share/pipewire"]
    static let wireplumberDataDirs = ["/usr/share/wireplumber"]

    /// PipeWire's own module directory: pkg-config, else the usual places.
    static func systemModuleDirectory(scratch: String) -> String? {
        if let out = try? runQuick(["pkg-config", "--variable=moduledir", "libpipewire-0.3"], scratch: scratch) {
            let dir = out.trimmingCharacters(in: .whitespacesAndNewlines)
            if !dir.isEmpty, FileManager.default.fileExists(atPath: dir) { return dir }
        }
        for dir in ["/usr/lib/x86_64-linux-gnu/pipewire-0.3", "/usr/lib/aarch64-linux-gnu/pipewire-0.3",
                    "/usr/lib64/pipewire-0.3", "/usr/lib/pipewire-0.3", "/usr/local/lib/pipewire-0.3"]
        where FileManager.default.fileExists(atPath: dir + "/libpipewire-module-protocol-native.so") {
            return dir
        }
        return nil
    }

    /// The real path of the running executable.
    static func executablePath() -> String? {
        if let p = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return p }
        return CommandLine.arguments.first.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
    }

    /// A checkout of this project: a directory holding `meson-shim/meson.build` and `Package.swift`,
    /// found walking up from the running executable and from the current directory.
    static func findCheckout() -> String? {
        var starts: [String] = []
        if let exe = executablePath() { starts.append((exe as NSString).deletingLastPathComponent) }
        starts.append(FileManager.default.currentDirectoryPath)
        for start in starts {
            var dir = URL(fileURLWithPath: start).standardizedFileURL
            while true {
                let fm = FileManager.default
                if fm.fileExists(atPath: dir.appendingPathComponent("meson-shim/meson.build").path),
                   fm.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
                    return dir.path
                }
                let parent = dir.deletingLastPathComponent()
                if parent.path == dir.path { break }
                dir = parent
            }
        }
        return nil
    }

    /// Finds the module: explicit directory, `AUDIO_SESSION_MODULE_DIR`, the checkout's
    /// `build/meson/`, the system module directory. Returns the file's path.
    static func findModule(explicitDirectory: String?, environment: [String: String], scratch: String) throws -> String {
        let fm = FileManager.default
        if let dir = explicitDirectory {
            let path = (dir as NSString).appendingPathComponent(moduleFileName)
            guard fm.fileExists(atPath: path) else { throw SandboxError.moduleNotFound(searched: [dir]) }
            return path
        }
        if let dir = environment["AUDIO_SESSION_MODULE_DIR"], !dir.isEmpty {
            let path = (dir as NSString).appendingPathComponent(moduleFileName)
            guard fm.fileExists(atPath: path) else {
                throw SandboxError.moduleNotFound(searched: [dir + " (AUDIO_SESSION_MODULE_DIR)"])
            }
            return path
        }
        var searched: [String] = []
        if let checkout = findCheckout() {
            let dir = checkout + "/build/meson"
            searched.append(dir)
            let path = dir + "/" + moduleFileName
            if fm.fileExists(atPath: path) { return path }
        }
        if let sys = systemModuleDirectory(scratch: scratch) {
            searched.append(sys)
            let path = sys + "/" + moduleFileName
            if fm.fileExists(atPath: path) { return path }
        }
        throw SandboxError.moduleNotFound(searched: searched)
    }

    /// Removes the `{ name = <module> ... }` blocks of the named modules from a
    /// SPA-JSON configuration text (comments are skipped while matching braces).
    static func removingModules(_ names: [String], from text: String) -> String {
        var chars = Array(text.unicodeScalars)
        for name in names {
            while let start = findModuleBlock(name, in: chars), let end = matchingBrace(chars, from: start) {
                chars.removeSubrange(start...end)
            }
        }
        var s = String.UnicodeScalarView()
        s.append(contentsOf: chars)
        return String(s)
    }

    /// The offset of the `{` that opens the first module block named `name`: the block's
    /// `name = <name>` (whole word, not in a commented line) follows its brace with nothing
    /// but blanks in between, on the same line (`{ name = ... }`) or on the next ones (as in
    /// WirePlumber 0.5's `wireplumber.conf`).
    private static func findModuleBlock(_ name: String, in chars: [Unicode.Scalar]) -> Int? {
        let text = String(String.UnicodeScalarView(chars))
        var offset = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let scalars = Array(line.unicodeScalars)
            let lineStr = String(line)
            let trimmed = lineStr.trimmingCharacters(in: .whitespaces)
            if !trimmed.hasPrefix("#"), let r = lineStr.range(of: "name = \(name)") {
                let after = lineStr[r.upperBound...].first
                if after == nil || after == " " || after == "\t" || after == "}" {
                    let col = lineStr.unicodeScalars.distance(from: lineStr.unicodeScalars.startIndex, to: r.lowerBound)
                    var i = offset + col - 1
                    while i >= 0, chars[i] == " " || chars[i] == "\t" || chars[i] == "\n" { i -= 1 }
                    if i >= 0, chars[i] == "{" { return i }
                }
            }
            offset += scalars.count + 1
        }
        return nil
    }

    private static func matchingBrace(_ chars: [Unicode.Scalar], from start: Int) -> Int? {
        var depth = 0
        var i = start
        var inString = false
        while i < chars.count {
            let c = chars[i]
            if inString {
                if c == "\\" { i += 1 } else if c == "\"" { inString = false }
            } else if c == "#" {
                while i < chars.count && chars[i] != "\n" { i += 1 }
            } else if c == "\"" {
                inString = true
            } else if c == "{" || c == "[" {
                depth += 1
            } else if c == "}" || c == "]" {
                depth -= 1
                if depth == 0 { return i }
            }
            i += 1
        }
        return nil
    }

    /// Writes the private PipeWire configuration directory: copies of the installed
    /// configuration files without real-time (module-rt) and X11 (module-x11-bell)
    /// modules, and, when `module` is given, the drop-in that loads it.
    /// `text` (a pipewire.conf) with `executables` in the access module's `access.restricted`.
    static func restricting(_ executables: [String], in text: String) throws -> String {
        guard let module = text.range(of: "name = libpipewire-module-access"),
              let args = text.range(of: "args = {", range: module.upperBound..<text.endIndex) else {
            throw SandboxError.spawnFailed(program: "pipewire", reason: "no libpipewire-module-access with args in pipewire.conf")
        }
        let list = executables.map { "\"\($0)\"" }.joined(separator: " ")
        return text.replacingCharacters(in: args, with: "args = {\n            access.restricted = [ \(list) ]")
    }

    static func writePipeWireConfig(to dir: String, from install: PipeWireInstall, loadModule: Bool,
                                    moduleArguments: [String: String] = [:], accessRestricted: [String] = []) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let dataDirs = install.configurationDataDirectories
        guard let source = dataDirs.first(where: { fm.fileExists(atPath: $0 + "/pipewire.conf") }) else {
            throw SandboxError.spawnFailed(program: "pipewire", reason: "no pipewire.conf in \(dataDirs.joined(separator: ", ")) (is the pipewire package installed?)")
        }
        for file in try fm.contentsOfDirectory(atPath: source) where file.hasSuffix(".conf") {
            let text = try String(contentsOfFile: source + "/" + file, encoding: .utf8)
            var cleaned = removingModules(["libpipewire-module-rt", "libpipewire-module-x11-bell"], from: text)
            if file == "pipewire.conf" && !accessRestricted.isEmpty {
                cleaned = try restricting(accessRestricted, in: cleaned)
            }
            try cleaned.write(toFile: dir + "/" + file, atomically: true, encoding: .utf8)
        }
        let dropins = dir + "/pipewire.conf.d"
        try fm.createDirectory(atPath: dropins, withIntermediateDirectories: true)
        if loadModule {
            let args = moduleArguments.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: " ")
            let conf = """
            # Written by the audio-session sandbox: load the policy module.
            context.modules = [
                { name = libpipewire-module-audio-session
                    args = { \(args) }
                }
            ]

            """
            try conf.write(toFile: dropins + "/50-audio-session.conf", atomically: true, encoding: .utf8)
        }
    }

    /// Where Debian's mpv-mpris put mpv's MPRIS plugin (the package's own file list, then
    /// its usual place), nil when it is not installed. mpv started with `--no-config` loads
    /// it only when named (`--script=`).
    public static func mpvMPRISPlugin() -> String? {
        let listed = (try? String(contentsOfFile: "/var/lib/dpkg/info/mpv-mpris.list", encoding: .utf8)) ?? ""
        let candidates = listed.split(separator: "\n").map(String.init).filter { $0.hasSuffix("/mpris.so") }
            + ["/etc/mpv/scripts/mpris.so"]
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The fake BlueZ (`fake-bluez.py`) for a sandbox with Bluetooth: `AUDIO_SESSION_FAKE_BLUEZ`,
    /// else where `make install` puts it (`../share/pipewire-audio-session/` beside the
    /// executable), else `data/` of the checkout the executable was built in.
    public static func fakeBluezPath() -> String? {
        let fm = FileManager.default
        if let p = ProcessInfo.processInfo.environment["AUDIO_SESSION_FAKE_BLUEZ"], fm.fileExists(atPath: p) { return p }
        guard let exe = executablePath() else { return nil }
        var dir = (exe as NSString).deletingLastPathComponent
        let installed = (dir as NSString).deletingLastPathComponent + "/share/pipewire-audio-session/fake-bluez.py"
        if fm.fileExists(atPath: installed) { return installed }
        for _ in 0..<6 {
            let candidate = dir + "/data/fake-bluez.py"
            if fm.fileExists(atPath: candidate) { return candidate }
            dir = (dir as NSString).deletingLastPathComponent
        }
        return nil
    }

    /// WirePlumber: no ALSA, bluez, v4l2 or libcamera monitors, no real-time module.
    /// WirePlumber 0.4.13 merges `main.lua.d`/`bluetooth.lua.d` from
    /// `$XDG_CONFIG_HOME/wireplumber`, `/etc/wireplumber` and `/usr/share/wireplumber`
    /// sorted by file name; `90-enable-all.lua` calls `alsa_monitor.enable()`, which
    /// checks `alsa_monitor.enabled`, so the override must sort after the `50-*-config.lua`
    /// files (which set `enabled = true`) and before `90-enable-all.lua`.
    static func writeWirePlumberConfig(configHome: String, for install: PipeWireInstall, bluetooth: Bool = false, roleLoopbacks: Bool = false,
                                       roleDuckLevel: Double = 1.0) throws {
        if roleLoopbacks && !install.wirePlumberUsesProfiles {
            throw SandboxError.roleLoopbacksNeedWirePlumber05(install.description)
        }
        if install.wirePlumberUsesProfiles {
            try writeWirePlumberProfiles(configHome: configHome, for: install, bluetooth: bluetooth)
            if roleLoopbacks {
                try roleLoopbacksFragment(duckLevel: roleDuckLevel).write(toFile: configHome + "/wireplumber/wireplumber.conf.d/60-role-loopbacks.conf",
                                                atomically: true, encoding: .utf8)
            }
            return
        }
        let fm = FileManager.default
        let wp = configHome + "/wireplumber"
        try fm.createDirectory(atPath: wp + "/main.lua.d", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: wp + "/bluetooth.lua.d", withIntermediateDirectories: true)
        try """
        -- Written by the audio-session sandbox: never touch real devices.
        alsa_monitor.enabled = false
        v4l2_monitor.enabled = false
        libcamera_monitor.enabled = false

        """.write(toFile: wp + "/main.lua.d/89-sandbox.lua", atomically: true, encoding: .utf8)
        try (bluetooth ? """
        -- Written by the audio-session sandbox: Bluetooth against its fake BlueZ, with no seat to wait for.
        bluez_monitor.enabled = true
        bluez_monitor.properties["with-logind"] = false

        """ : """
        -- Written by the audio-session sandbox: no Bluetooth (and no system bus).
        bluez_monitor.enabled = false

        """).write(toFile: wp + "/bluetooth.lua.d/89-sandbox.lua", atomically: true, encoding: .utf8)
        // The daemon's context configuration, without module-rt.
        if let source = wireplumberDataDirs.first(where: { fm.fileExists(atPath: $0 + "/wireplumber.conf") }) {
            let text = try String(contentsOfFile: source + "/wireplumber.conf", encoding: .utf8)
            try removingModules(["libpipewire-module-rt"], from: text)
                .write(toFile: wp + "/wireplumber.conf", atomically: true, encoding: .utf8)
        }
    }

    /// WirePlumber 0.5 and later: its own `wireplumber.conf` without module-rt, and a
    /// fragment that turns off every hardware monitor (ALSA, Bluetooth, cameras) and
    /// logind. The sandbox points `WIREPLUMBER_CONFIG_DIR` here, so no configuration of
    /// the machine's or the user's is read.
    static func writeWirePlumberProfiles(configHome: String, for install: PipeWireInstall, bluetooth: Bool = false) throws {
        let fm = FileManager.default
        let wp = configHome + "/wireplumber"
        try fm.createDirectory(atPath: wp + "/wireplumber.conf.d", withIntermediateDirectories: true)
        let dataDirs = install.wirePlumberDataDirectories
        guard let source = dataDirs.first(where: { fm.fileExists(atPath: $0 + "/wireplumber.conf") }) else {
            throw SandboxError.spawnFailed(program: "wireplumber", reason: "no wireplumber.conf in \(dataDirs.joined(separator: ", "))")
        }
        let text = try String(contentsOfFile: source + "/wireplumber.conf", encoding: .utf8)
        try removingModules(["libpipewire-module-rt"], from: text)
            .write(toFile: wp + "/wireplumber.conf", atomically: true, encoding: .utf8)
        try """
        # Written by the audio-session sandbox: never touch real devices, no system bus.
        wireplumber.profiles = {
          main = {
            hardware.audio = disabled
            hardware.bluetooth = \(bluetooth ? "required" : "disabled")
            hardware.video-capture = disabled
            monitor.alsa = disabled
            monitor.alsa-midi = disabled
            monitor.bluez = \(bluetooth ? "required" : "disabled")
            monitor.bluez-midi = disabled
            monitor.v4l2 = disabled
            monitor.libcamera = disabled
            support.logind = disabled
            support.reserve-device = disabled
            monitor.alsa.reserve-device = disabled
            monitor.bluez.seat-monitoring = disabled
          }
        }

        """.write(toFile: wp + "/wireplumber.conf.d/89-sandbox.conf", atomically: true, encoding: .utf8)
        if bluetooth {
            // What the Bluetooth profile switching decides, in WirePlumber's log: a test reads
            // there when WirePlumber has taken in a switch (it has no other sign of it).
            try """
            # Written by the audio-session sandbox: the device scripts log their decisions.
            context.properties = {
              log.level = "2,s-device:4"
            }

            """.write(toFile: wp + "/wireplumber.conf.d/90-sandbox-log.conf", atomically: true, encoding: .utf8)
        }
    }

    /// WirePlumber 0.5's role-based linking policy in the form its documentation gives
    /// (the `media-role-nodes.conf` example of its `wireplumber.conf.d.examples`): one
    /// loopback sink per group of media roles, each with a priority and what it does to
    /// lower and equal priorities (mix, duck, cork), loaded into WirePlumber as `pw-module`
    /// components; streams without a role get `Multimedia`. One change from the example:
    /// WirePlumber's own duck is off (`duck-level = 1.0`), since the audio-session module
    /// ducks the streams itself and two ducks would multiply (`duckLevel` sets another).
    static func roleLoopbacksFragment(duckLevel: Double = 1.0) -> String {
        // (id, description, media roles, priority, action on lower priorities)
        let table: [(String, String, [String], Int, String)] = [
            ("multimedia", "Multimedia", ["Music", "Movie", "Game", "Multimedia"], 10, "mix"),
            ("notification", "System Notifications", ["Notification"], 20, "mix"),
            ("navigation", "Navigation", ["Navigation", "GPS"], 30, "duck"),
            ("assistant", "Voice Assistant", ["Assistant"], 40, "cork"),
            ("communication", "Communication", ["Communication", "Phone"], 50, "cork"),
            ("alert", "Alert", ["Alert", "Emergency"], 100, "cork"),
        ]
        var lines = [
            "# Written by the audio-session sandbox: WirePlumber 0.5's role-based policy, as",
            "# WirePlumber documents it (media-role-nodes.conf), with its duck turned off.",
            "wireplumber.profiles = {",
            "  main = { policy.linking.role-based.loopbacks = required }",
            "}",
            "",
            "wireplumber.settings = {",
            "  node.stream.default-media-role = \"Multimedia\"",
            "  # The audio-session module ducks; WirePlumber's duck would come on top of it.",
            "  linking.role-based.duck-level = \(duckLevel)",
            "}",
            "",
            "wireplumber.components.rules = [",
            "  {",
            "    matches = [ { provides = \"~loopback.sink.*\" } ]",
            "    actions = {",
            "      merge = {",
            "        arguments = {",
            "          capture.props = { policy.role-based.target = true, audio.position = [ FL, FR ], media.class = Audio/Sink }",
            "          playback.props = { node.passive = true, media.role = \"Loopback\" }",
            "        }",
            "        requires = [ support.export-core, pw.node-factory.adapter ]",
            "      }",
            "    }",
            "  }",
            "]",
            "",
            "wireplumber.components = [",
            "  {",
            "    type = virtual, provides = policy.linking.role-based.loopbacks",
            "    requires = [ " + table.map { "loopback.sink.role." + $0.0 }.joined(separator: " ") + " ]",
            "  }",
        ]
        for (id, description, roles, priority, lower) in table {
            lines += [
                "  {",
                "    name = libpipewire-module-loopback, type = pw-module",
                "    arguments = {",
                "      node.name = \"loopback.sink.role.\(id)\"",
                "      node.description = \"\(description)\"",
                "      capture.props = {",
                "        device.intended-roles = [ " + roles.map { "\"\($0)\"" }.joined(separator: ", ") + " ]",
                "        policy.role-based.priority = \(priority)",
                "        policy.role-based.action.same-priority = \"mix\"",
                "        policy.role-based.action.lower-priority = \"\(lower)\"",
                "      }",
                "    }",
                "    provides = loopback.sink.role.\(id)",
                "  }",
            ]
        }
        return (lines + ["]", ""]).joined(separator: "\n")
    }

    /// Runs a short command outside any sandbox and returns its output (pkg-config).
    static func runQuick(_ argv: [String], scratch: String) throws -> String {
        let out = (scratch as NSString).appendingPathComponent("quick-\(UInt32.random(in: 0...UInt32.max)).out")
        defer { unlink(out) }
        let child = try ChildProcess.spawn(argv, environment: ProcessInfo.processInfo.environment,
                                           stdout: out, stderr: "/dev/null")
        guard child.wait(timeout: 10) == 0 else {
            child.terminate(signal: SIGKILL, timeout: 1)
            throw SandboxError.commandFailed(command: argv.joined(separator: " "), status: child.exitStatus ?? -1, stderr: "")
        }
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }
}

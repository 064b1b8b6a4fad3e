import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private, headless PipeWire: session D-Bus, pipewire, wireplumber and
/// pipewire-pulse started as direct children in a temporary directory, with
/// virtual outputs and (optionally) the audio-session module. It never touches
/// the caller's PipeWire, WirePlumber state, D-Bus or sound cards.
public final class Sandbox: @unchecked Sendable {
    /// The private temporary directory; everything the sandbox writes is inside it.
    public let directory: String
    /// The module file loaded into the sandbox's PipeWire, nil with `loadModule == false`.
    public let modulePath: String?
    /// The options it was started with.
    public let options: SandboxOptions
    /// The PipeWire it runs.
    public let pipewire: PipeWireInstall
    /// The devices currently created by the sandbox.
    public private(set) var devices: [VirtualDevice] = []

    /// The environment the daemons run in.
    let daemonEnvironment: [String: String]
    /// The environment for clients (see `environment`).
    private let clientEnvironment: [String: String]

    private let lock = NSLock()
    private var daemons: [ChildProcess] = []
    private var clients: [ChildProcess] = []
    private var stopped = false
    private var counter = 0

    /// The caller's environment with the sandbox's variables set and `PIPEWIRE_REMOTE`
    /// removed: `pw-play`, `paplay`, `pw-record`, `pw-dump`, `pw-cli`, `pactl`,
    /// `pw-metadata` and `pw-session` run in it talk to the sandbox.
    public var environment: [String: String] { clientEnvironment }

    /// The PIDs of the daemons, in start order (dbus-daemon, pipewire, wireplumber, pipewire-pulse).
    public var daemonPIDs: [Int32] {
        lock.lock(); defer { lock.unlock() }
        return daemons.map(\.pid)
    }

    /// The daemons, in start order.
    public var daemonProcesses: [ChildProcess] {
        lock.lock(); defer { lock.unlock() }
        return daemons
    }

    /// The variables a person exports in another shell to reach the sandbox.
    public var exportedVariables: [String: String] {
        var vars: [String: String] = [:]
        for key in Self.sandboxKeys { if let v = clientEnvironment[key] { vars[key] = v } }
        return vars
    }

    static let sandboxKeys = [
        "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME",
        "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_CONFIG_DIR", "PULSE_RUNTIME_PATH", "PULSE_SERVER",
        "PULSE_COOKIE", "DBUS_SESSION_BUS_ADDRESS",
    ]

    // MARK: Start

    /// Starts a sandbox. On failure everything started so far is torn down again.
    public static func start(_ options: SandboxOptions = SandboxOptions()) throws -> Sandbox {
        let dir = try makeTempDirectory()
        do {
            let sandbox = try Sandbox(directory: dir, options: options)
            do {
                try sandbox.bringUp()
            } catch {
                sandbox.stop()
                throw error
            }
            return sandbox
        } catch {
            try? FileManager.default.removeItem(atPath: dir)
            throw error
        }
    }

    private static func makeTempDirectory() throws -> String {
        var base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        if base.isEmpty || !FileManager.default.fileExists(atPath: base) { base = "/tmp" }
        while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/pw-sandbox.XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buf -> String? in
            guard let p = mkdtemp(buf.baseAddress!) else { return nil }
            return String(cString: p)
        }
        guard let dir = made else { throw SandboxError.tempDirectory(String(cString: strerror(errno))) }
        return dir
    }

    private init(directory: String, options: SandboxOptions) throws {
        self.directory = directory
        self.options = options
        let fm = FileManager.default
        let run = directory + "/runtime"
        let paths = [run, run + "/pulse", directory + "/config", directory + "/state",
                     directory + "/data", directory + "/home", directory + "/logs", directory + "/tmp"]
        for p in paths { try fm.createDirectory(atPath: p, withIntermediateDirectories: true) }
        chmod(run, 0o700)
        chmod(run + "/pulse", 0o700)

        pipewire = try options.pipewire ?? PipeWireInstall.fromEnvironment(ProcessInfo.processInfo.environment)
        if options.loadModule {
            modulePath = try SandboxConfig.findModule(explicitDirectory: options.moduleDirectory,
                                                      environment: ProcessInfo.processInfo.environment,
                                                      scratch: directory + "/tmp")
        } else {
            modulePath = nil
        }
        let pwConf = directory + "/pipewire-config"
        try SandboxConfig.writePipeWireConfig(to: pwConf, from: pipewire, loadModule: options.loadModule,
                                              moduleArguments: options.moduleArguments,
                                              accessRestricted: options.accessRestricted)
        try SandboxConfig.writeWirePlumberConfig(configHome: directory + "/config", for: pipewire, bluetooth: options.bluetooth,
                                                 roleLoopbacks: options.roleLoopbacks, roleDuckLevel: options.roleDuckLevel)

        var env = ProcessInfo.processInfo.environment
        for key in ["PIPEWIRE_REMOTE", "PIPEWIRE_CORE", "PIPEWIRE_MODULE_DIR", "PIPEWIRE_CONFIG_NAME",
                    "PIPEWIRE_CONFIG_PREFIX", "PIPEWIRE_STATE_DIR", "WIREPLUMBER_CONFIG_DIR",
                    "WIREPLUMBER_DATA_DIR", "PULSE_COOKIE", "PULSE_SINK", "PULSE_SOURCE", "PULSE_PROP",
                    "PIPEWIRE_PROPS", "PIPEWIRE_NODE", "JOURNAL_STREAM", "SPA_PLUGIN_DIR",
                    "WIREPLUMBER_MODULE_DIR", "AUDIO_SESSION_PIPEWIRE_PREFIX"] {
            env.removeValue(forKey: key)
        }
        env["XDG_RUNTIME_DIR"] = run
        env["PIPEWIRE_RUNTIME_DIR"] = run
        env["XDG_CONFIG_HOME"] = directory + "/config"
        env["XDG_STATE_HOME"] = directory + "/state"
        env["XDG_DATA_HOME"] = directory + "/data"
        env["PIPEWIRE_CONFIG_DIR"] = pwConf
        env["PULSE_RUNTIME_PATH"] = run + "/pulse"
        env["PULSE_SERVER"] = "unix:" + run + "/pulse/native"
        env["PULSE_COOKIE"] = directory + "/config/pulse/cookie"
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + run + "/bus"
        // The clients' system bus: the sandbox's own, or none (never the host's: its logind
        // knows the real user's sessions).
        env["DBUS_SYSTEM_BUS_ADDRESS"] = options.systemBus || options.bluetooth ? "unix:path=" + run + "/system_bus_socket"
                                                            : "unix:path=" + directory + "/no-system-bus"
        // Desktop settings (GSettings) in a file under the private XDG_CONFIG_HOME, never in
        // the user's dconf database.
        env["GSETTINGS_BACKEND"] = "keyfile"
        // A private tree: its programs, libraries and plugins for daemons and clients
        // alike (the pw-session next to this executable comes first on PATH).
        env.merge(pipewire.environment(path: env["PATH"] ?? "/usr/bin:/bin")) { $1 }
        if pipewire.wirePlumberUsesProfiles {
            env["WIREPLUMBER_CONFIG_DIR"] = directory + "/config/wireplumber"
        }
        if let exe = SandboxConfig.executablePath() {
            let exeDir = (exe as NSString).deletingLastPathComponent
            if FileManager.default.isExecutableFile(atPath: exeDir + "/pw-session") {
                env["PATH"] = exeDir + ":" + (env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
            }
        }
        if env["PATH"] == nil { env["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
        // A root filesystem with its own C library: its PipeWire tools first.
        let wrappers = pipewire.clientWrappers()
        if !wrappers.isEmpty {
            let bin = directory + "/bin"
            try fm.createDirectory(atPath: bin, withIntermediateDirectories: true)
            for (name, script) in wrappers {
                try script.write(toFile: bin + "/" + name, atomically: true, encoding: .utf8)
                chmod(bin + "/" + name, 0o755)
            }
            env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        }
        clientEnvironment = env

        var denv = env
        denv["HOME"] = directory + "/home"
        denv["TMPDIR"] = directory + "/tmp"
        // No system bus for the daemons (nothing can reach rtkit, BlueZ or logind), but the
        // sandbox's own with `bluetooth`, where the fake BlueZ is.
        denv["DBUS_SYSTEM_BUS_ADDRESS"] = options.bluetooth ? "unix:path=" + run + "/system_bus_socket"
                                                            : "unix:path=" + directory + "/no-system-bus"
        denv["PIPEWIRE_LOG_SYSTEMD"] = "false"
        if denv["PIPEWIRE_DEBUG"] == nil {
            let topics = [("mod.audio-session", options.moduleLogLevel), ("mod.protocol-pulse", options.pulseLogLevel)]
                .compactMap { topic, level in level.map { "\(topic):\(max(0, min($0, 5)))" } }
            if !topics.isEmpty { denv["PIPEWIRE_DEBUG"] = topics.joined(separator: ",") }
        }
        denv.merge(pipewire.daemonEnvironment) { $1 }
        for key in ["DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY"] { denv.removeValue(forKey: key) }
        if let module = modulePath, let sys = pipewire.moduleDirectory(scratch: directory + "/tmp") {
            let moduleDir = (module as NSString).deletingLastPathComponent
            denv["PIPEWIRE_MODULE_DIR"] = moduleDir == sys ? sys : moduleDir + ":" + sys
        }
        daemonEnvironment = denv
    }

    private func say(_ s: String) { options.progress?(s) }

    private func bringUp() throws {
        // 1. Session D-Bus (WirePlumber 0.4.13 exits without one).
        say("starting dbus-daemon… ")
        try startSessionBus()
        say("ok\n")
        if options.systemBus || options.bluetooth {
            say("starting a private system bus… ")
            try startBus(name: "dbus-daemon-system", socket: directory + "/runtime/system_bus_socket")
            say("ok\n")
        }
        if options.bluetooth {
            say("starting the fake BlueZ… ")
            guard let fake = options.fakeBluez else {
                throw SandboxError.spawnFailed(program: "fake-bluez", reason: "no fake BlueZ program given")
            }
            let bluez = try startDaemon("fake-bluez", ["/usr/bin/python3", fake])
            try waitForDaemon(bluez, what: "the fake BlueZ", timeout: options.startupTimeout) {
                ((try? String(contentsOfFile: self.directory + "/logs/fake-bluez.log", encoding: .utf8)) ?? "").contains("ready")
            }
            say("ok\n")
        }

        try startPipeWireAndSessionManager(devices: options.devices)
        if options.verbose {
            say("sandbox directory: \(directory)\n")
            say("daemon pids: \(daemonProcesses.map { "\($0.name)=\($0.pid)" }.joined(separator: " "))\n")
        }
    }

    /// Starts pipewire, wireplumber and pipewire-pulse (when asked for) and creates `devices`.
    private func startPipeWireAndSessionManager(devices: [VirtualDevice]) throws {
        let timeout = options.startupTimeout
        // 2. PipeWire.
        say("starting pipewire… ")
        let pw = try startDaemon("pipewire", pipewire.daemonCommand(["pipewire"]))
        try waitForDaemon(pw, what: "pipewire", timeout: timeout) {
            (try? self.run(["pw-cli", "info", "0"], timeout: 5).status) == 0
        }
        if let m = modulePath { say("ok (module \(m))\n") } else { say("ok (no module)\n") }

        // 3. With role loopbacks, the virtual outputs first: loopbacks that appear before any
        // real sink were seen to be linked into each other (Multimedia into Alert), which
        // corks everything. pw-cli needs no session manager to create them.
        if options.roleLoopbacks {
            for device in devices {
                say("creating \(device.name)… ")
                try addDevice(device)
                say("ok\n")
            }
        }

        // 4. WirePlumber.
        say("starting wireplumber… ")
        let wp = try startDaemon("wireplumber", pipewire.daemonCommand(["wireplumber"]))

        // 5. pipewire-pulse.
        var pulse: ChildProcess?
        if options.startPulse {
            pulse = try startDaemon("pipewire-pulse", pipewire.daemonCommand(["pipewire-pulse"]))
        }

        try waitForDaemon(wp, what: "wireplumber (the \"default\" metadata)", timeout: timeout) {
            let r = try? self.run(["pw-metadata", "-n", "default", "0"], timeout: 5)
            return r?.status == 0 && (r?.stdout ?? "").contains("\"default\" metadata")
        }
        say("ok\n")

        // 6. Virtual outputs (with role loopbacks they were made before WirePlumber started).
        for device in devices where !options.roleLoopbacks {
            say("creating \(device.name)… ")
            try addDevice(device)
            say("ok\n")
        }
        if let expected = devices.max(by: { $0.priority < $1.priority }) {
            say("waiting for the default sink (\(expected.name))… ")
            try waitForDaemon(wp, what: "wireplumber (default sink \(expected.name))", timeout: timeout) {
                self.defaultSinkName() == expected.name
            }
            say("ok\n")
        }

        if let pulse {
            say("waiting for pipewire-pulse… ")
            try waitForDaemon(pulse, what: "pipewire-pulse", timeout: timeout) {
                (try? self.run(["pactl", "info"], timeout: 5).status) == 0
            }
            say("ok\n")
        }
    }

    /// Stops pipewire, wireplumber and pipewire-pulse and starts them again in the same
    /// sandbox (same configuration, module and saved state), with the same devices: what
    /// a restart of the user's PipeWire service does. The session D-Bus stays.
    /// `signal` stops them: SIGTERM (an orderly stop) or SIGKILL (a crash).
    public func restartPipeWire(signal: Int32 = SIGTERM) throws {
        lock.lock()
        let old = daemons.filter { !$0.name.hasPrefix("dbus-daemon") }
        daemons.removeAll { !$0.name.hasPrefix("dbus-daemon") }
        let current = devices
        devices.removeAll()
        lock.unlock()
        for d in old.reversed() { d.terminate(signal: signal, timeout: 5) }
        try startPipeWireAndSessionManager(devices: current)
    }

    /// Stops WirePlumber with `signal` (SIGKILL: a crash) and starts it again, as its user
    /// service would, with the same configuration and saved state; returns once it has
    /// published the "default" metadata again. PipeWire and its clients keep running.
    public func restartWirePlumber(signal: Int32 = SIGTERM) throws {
        lock.lock()
        let old = daemons.filter { $0.name == "wireplumber" }
        daemons.removeAll { $0.name == "wireplumber" }
        lock.unlock()
        for d in old { d.terminate(signal: signal, timeout: 5) }
        let wp = try startDaemon("wireplumber", pipewire.daemonCommand(["wireplumber"]))
        try waitForDaemon(wp, what: "wireplumber (the \"default\" metadata)", timeout: options.startupTimeout) {
            let r = try? self.run(["pw-metadata", "-n", "default", "0"], timeout: 5)
            return r?.status == 0 && (r?.stdout ?? "").contains("\"default\" metadata")
        }
    }

    /// Stops the session D-Bus and starts a new one at the same address: what a desktop
    /// session's bus restart looks like to the programs in it. Every connection to the old
    /// bus is gone; PipeWire and WirePlumber keep running.
    public func restartSessionBus() throws {
        lock.lock()
        let old = daemons.filter { $0.name == "dbus-daemon" }
        daemons.removeAll { $0.name == "dbus-daemon" }
        lock.unlock()
        for d in old { d.terminate(signal: SIGTERM, timeout: 5) }
        try? FileManager.default.removeItem(atPath: directory + "/runtime/bus")
        try? FileManager.default.removeItem(atPath: directory + "/logs/dbus-daemon.address")
        try startSessionBus()
    }

    /// Starts dbus-daemon on `runtime/bus` and waits until it has printed its address.
    private func startSessionBus() throws {
        try startBus(name: "dbus-daemon", socket: directory + "/runtime/bus")
    }

    /// The module's last `lines` messages in the daemon's log (see `SandboxOptions.moduleLogLevel`)
    /// about streams and what it did with them: the comings and goings of clients (the
    /// tests' own `pw-dump` polls among them) are left out.
    public func moduleLog(lines: Int = 60) -> String {
        logTail("pipewire", topic: "mod.audio-session",
                leavingOut: ["add_client()", "client_destroy()", "metadata_permissions_changed()"], lines: lines)
    }

    /// pipewire-pulse's last `lines` messages about its streams (see `SandboxOptions.pulseLogLevel`):
    /// the tests' own `pactl` connections are left out.
    public func pulseLog(lines: Int = 40) -> String {
        logTail("pipewire-pulse", topic: "mod.protocol-pulse",
                leavingOut: ["[pactl]", "do_command_auth()", "on_client_data()"], lines: lines)
    }

    /// The last `lines` lines of the daemon `name`'s log in `topic`, without those holding
    /// any of `leavingOut`.
    private func logTail(_ name: String, topic: String, leavingOut: [String], lines: Int) -> String {
        let text = (try? String(contentsOfFile: directory + "/logs/\(name).log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n")
            .filter { line in line.contains(topic) && !leavingOut.contains { line.contains($0) } }
            .suffix(lines).joined(separator: "\n")
    }

    /// Starts a dbus-daemon (with the session bus's configuration) on `socket`.
    private func startBus(name: String, socket bus: String) throws {
        let dbus = try startDaemon(name, ["dbus-daemon", "--session", "--nofork",
                                          "--address=unix:path=\(bus)", "--print-address=1"])
        let addressFile = directory + "/logs/\(name).address"
        try waitForDaemon(dbus, what: name == "dbus-daemon" ? "the session D-Bus" : "the private system bus", timeout: options.startupTimeout) {
            FileManager.default.fileExists(atPath: bus) &&
                ((try? String(contentsOfFile: addressFile, encoding: .utf8)) ?? "").contains("unix:")
        }
    }

    private func startDaemon(_ name: String, _ argv: [String]) throws -> ChildProcess {
        let log = directory + "/logs/\(name).log"
        let out = name.hasPrefix("dbus-daemon") ? directory + "/logs/\(name).address" : log
        if options.verbose { say("\n  $ \(argv.joined(separator: " ")) (log: \(log))\n  ") }
        let child = try ChildProcess.spawn(argv, name: name, environment: daemonEnvironment,
                                           stdout: out, stderr: log, newProcessGroup: true)
        lock.lock(); daemons.append(child); lock.unlock()
        return child
    }

    /// Polls `ready` until it holds; fails early when the daemon exits.
    private func waitForDaemon(_ daemon: ChildProcess, what: String, timeout: TimeInterval,
                               _ ready: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var interval: useconds_t = 10_000
        while true {
            if !daemon.isRunning {
                say("failed\n")
                throw SandboxError.daemonExited(name: daemon.name, status: daemon.exitStatus ?? -1,
                                                log: daemon.logTail())
            }
            if ready() { return }
            if Date() >= deadline {
                say("failed\n")
                throw SandboxError.notReady(what: what, timeout: timeout, log: daemon.logTail())
            }
            usleep(interval)
            interval = min(interval * 2, 100_000)
        }
    }

    // MARK: Running programs

    /// Runs `argv` in the sandbox environment (plus `environment` overrides) and
    /// returns its exit status and output. Killed after `timeout` seconds.
    @discardableResult
    public func run(_ argv: [String], environment extra: [String: String] = [:],
                    timeout: TimeInterval = 30) throws -> (status: Int32, stdout: String, stderr: String) {
        let n = nextCounter()
        let out = directory + "/tmp/run-\(n).out"
        let err = directory + "/tmp/run-\(n).err"
        defer { unlink(out); unlink(err) }
        let child = try ChildProcess.spawn(argv, environment: clientEnvironment.merging(extra) { $1 },
                                           stdout: out, stderr: err)
        lock.lock(); clients.append(child); lock.unlock()
        defer { forget(child) }
        let status = child.wait(timeout: timeout) ?? child.terminate(signal: SIGKILL, timeout: 2)
        let o = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let e = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        return (status, o, e)
    }

    /// Starts a long-running program in the sandbox (pw-play, paplay). It is killed
    /// by `stop()` if still running. Output goes to files in the sandbox's log directory
    /// unless `inheritOutput` is set. Standard input is `/dev/null`, or the file (a FIFO
    /// the caller writes commands to) at `standardInput`.
    public func spawn(_ argv: [String], environment extra: [String: String] = [:],
                      inheritOutput: Bool = false, standardInput: String? = nil) throws -> ChildProcess {
        let n = nextCounter()
        let name = ((argv.first ?? "child") as NSString).lastPathComponent
        let log = inheritOutput ? nil : directory + "/logs/\(name)-\(n).log"
        let child = try ChildProcess.spawn(argv, name: name, environment: clientEnvironment.merging(extra) { $1 },
                                           stdin: standardInput ?? (inheritOutput ? nil : "/dev/null"),
                                           stdout: log, stderr: log)
        lock.lock(); clients.append(child); lock.unlock()
        return child
    }

    private func nextCounter() -> Int {
        lock.lock(); defer { lock.unlock() }
        counter += 1
        return counter
    }

    private func forget(_ child: ChildProcess) {
        lock.lock(); defer { lock.unlock() }
        clients.removeAll { $0 === child }
    }

    // MARK: Graph helpers

    /// `pw-dump` as parsed JSON objects.
    public func dump() throws -> [[String: Any]] {
        // pw-dump 0.3.65 can print a truncated object when one goes away while it
        // is dumping (invalid JSON): take another dump then.
        var attempt = 0
        while true {
            attempt += 1
            let r = try run(["pw-dump", "--no-colors"], timeout: 15)
            guard r.status == 0 else { throw SandboxError.commandFailed(command: "pw-dump", status: r.status, stderr: r.stderr) }
            guard let data = r.stdout.data(using: .utf8) else { return [] }
            do {
                return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
            } catch {
                if attempt >= 5 {
                    // Kept for a look: the sandbox's directory outlives a failed test's log.
                    let kept = directory + "/logs/pw-dump-invalid.json"
                    try? r.stdout.write(toFile: kept, atomically: true, encoding: .utf8)
                    throw SandboxError.commandFailed(command: "pw-dump", status: 0,
                                                     stderr: "its output is not JSON (\(error.localizedDescription)); kept in \(kept)")
                }
            }
        }
    }

    /// The objects of a pw-dump of one type (`PipeWire:Interface:Node`).
    public static func objects(_ dump: [[String: Any]], type: String) -> [[String: Any]] {
        dump.filter { ($0["type"] as? String) == type }
    }

    /// `info.props` of a pw-dump object.
    public static func props(_ object: [String: Any]) -> [String: Any] {
        ((object["info"] as? [String: Any])?["props"] as? [String: Any]) ?? [:]
    }

    /// The id of the node with `node.name == name`, nil when there is none.
    public func nodeID(named name: String) throws -> Int? {
        for node in Self.objects(try dump(), type: "PipeWire:Interface:Node")
        where (Self.props(node)["node.name"] as? String) == name {
            return node["id"] as? Int
        }
        return nil
    }

    /// The nodes owned by the client process `pid` (a pw-play, pw-record, ...).
    public func nodes(ofProcess pid: Int32) throws -> [[String: Any]] {
        let d = try dump()
        let clientIDs = Set(Self.objects(d, type: "PipeWire:Interface:Client").compactMap { c -> Int? in
            let p = Self.props(c)["application.process.id"]
            let value = (p as? Int) ?? (p as? String).flatMap { Int($0) }
            return value == Int(pid) ? c["id"] as? Int : nil
        })
        return Self.objects(d, type: "PipeWire:Interface:Node").filter { node in
            let c = Self.props(node)["client.id"]
            let id = (c as? Int) ?? (c as? String).flatMap { Int($0) }
            return id.map(clientIDs.contains) ?? false
        }
    }

    /// The state (`running`, `idle`, `suspended`, ...) of a pw-dump node object.
    public static func state(_ node: [String: Any]) -> String? {
        (node["info"] as? [String: Any])?["state"] as? String
    }

    /// The file where the sandbox's WirePlumber saves streams' volumes and mute
    /// (`restore-stream` in WirePlumber 0.4, `stream-properties` from 0.5 on).
    public var savedStreamStatePath: String {
        directory + "/state/wireplumber/" + (pipewire.wirePlumberUsesProfiles ? "stream-properties" : "restore-stream")
    }

    /// The node name WirePlumber chose as default sink (`default.audio.sink`), or nil when
    /// there is none (or `pw-metadata` cannot be run).
    ///
    /// The "default" metadata belongs to WirePlumber, which exports it to the daemon: a client
    /// that binds it gets its keys from WirePlumber, and with PipeWire 1.6 and WirePlumber
    /// 0.5.18 they were seen to arrive after the daemon had already answered the client's
    /// round trip, so a one-shot `pw-metadata` read printed no key at all although the default
    /// sink never changed (a few reads in a hundred; each such bind also made WirePlumber send
    /// the same value again to every listener). A read that finds the metadata but no key is
    /// therefore repeated, for up to `settle` seconds, before it counts as "no default sink".
    public func defaultSinkName(settle: TimeInterval = 2) -> String? {
        let deadline = Date().addingTimeInterval(settle)
        while true {
            guard let r = try? run(["pw-metadata", "-n", "default", "0", "default.audio.sink"], timeout: 5),
                  r.status == 0 else { return nil }
            // update: id:0 key:'default.audio.sink' value:'{"name":"headphones"}' type:'Spa:String:JSON'
            if let range = r.stdout.range(of: "\"name\":\"") {
                let rest = r.stdout[range.upperBound...]
                guard let end = rest.firstIndex(of: "\"") else { return nil }
                return String(rest[..<end])
            }
            if r.stdout.contains("update:") || Date() >= deadline { return nil }
            usleep(20_000)
        }
    }

    /// Creates a virtual output and waits until its node exists.
    public func addDevice(_ device: VirtualDevice) throws {
        let r = try run(["pw-cli", "create-node", "adapter", device.nodeProperties], timeout: 10)
        // pw-cli binds every object the registry announces; one that goes away meanwhile (a
        // short-lived client) answers "no global N", and pw-cli's next request to the proxy it
        // made for it "unknown resource N": no error of this command (seen on PipeWire 1.6 with
        // every process on one CPU, once in sixty sandboxes).
        let errors = (r.stdout + "\n" + r.stderr).split(separator: "\n").filter {
            $0.contains("rror") && !$0.contains("no global") && !$0.contains("unknown resource")
        }
        guard r.status == 0, errors.isEmpty else {
            throw SandboxError.commandFailed(command: "pw-cli create-node adapter (\(device.name))",
                                             status: r.status, stderr: r.stderr + r.stdout)
        }
        try waitUntil(timeout: options.startupTimeout, "node \(device.name)") { try self.nodeID(named: device.name) != nil }
        lock.lock(); devices.append(device); lock.unlock()
    }

    /// Calls a control of the fake BlueZ (`org.audiosession.FakeBluez` on `/org/bluez`, on the
    /// sandbox's system bus; with the `bluetooth` option): `Connect`, `Disconnect` with
    /// `device`, `transport` or `gone`, …
    public func fakeBluez(_ method: String, _ args: [String] = []) throws {
        let r = try run(["gdbus", "call", "--system", "--dest", "org.bluez", "--object-path", "/org/bluez",
                         "--method", "org.audiosession.FakeBluez.\(method)"] + args, timeout: 10)
        guard r.status == 0 else {
            throw SandboxError.commandFailed(command: "FakeBluez.\(method)", status: r.status, stderr: r.stderr)
        }
    }

    /// Unplugs a virtual output (`pw-cli destroy ID`) and waits until it is gone.
    public func removeDevice(named name: String) throws {
        guard let id = try nodeID(named: name) else { throw SandboxError.unknownDevice(name, known: devices.map(\.name)) }
        let r = try run(["pw-cli", "destroy", String(id)], timeout: 10)
        guard r.status == 0 else {
            throw SandboxError.commandFailed(command: "pw-cli destroy \(id)", status: r.status, stderr: r.stderr)
        }
        try waitUntil(timeout: 10, "node \(name) to disappear") { try self.nodeID(named: name) == nil }
        lock.lock(); devices.removeAll { $0.name == name }; lock.unlock()
    }

    /// Polls `condition` every `poll` seconds until it holds; throws `SandboxError.timeout` after `timeout`.
    public func waitUntil(timeout: TimeInterval = 10, poll: TimeInterval = 0.05, _ what: String = "a condition",
                          _ condition: () throws -> Bool) throws {
        try Sandbox.waitUntil(timeout: timeout, poll: poll, what, condition)
    }

    /// Polls `condition` until it holds or `timeout` passes.
    public static func waitUntil(timeout: TimeInterval = 10, poll: TimeInterval = 0.05, _ what: String = "a condition",
                                 _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if try condition() { return }
            if Date() >= deadline { throw SandboxError.timeout(what) }
            usleep(useconds_t(max(poll, 0.001) * 1_000_000))
        }
    }

    // MARK: Stop

    /// Whether `stop()` has run.
    public var isStopped: Bool {
        lock.lock(); defer { lock.unlock() }
        return stopped
    }

    /// Terminates every child (clients first, then the daemons in reverse start
    /// order: SIGTERM, a deadline, SIGKILL), reaps them and removes the temporary
    /// directory. Idempotent.
    public func stop() {
        lock.lock()
        if stopped { lock.unlock(); return }
        stopped = true
        let cs = clients
        let ds = daemons
        clients.removeAll()
        lock.unlock()

        for c in cs.reversed() { c.terminate(signal: SIGTERM, timeout: 3) }
        for d in ds.reversed() {
            if options.verbose, d.isRunning { say("stopping \(d.name) (pid \(d.pid))\n") }
            d.terminate(signal: SIGTERM, timeout: 5)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    deinit { stop() }
}

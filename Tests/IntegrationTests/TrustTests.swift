import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// Priority and the global switches are granted on what the daemon knows of a client,
    /// not on what the client declares (docs/trust.md).
    @Suite(.serialized)
    struct TrustTests {
        /// The client object of `pid` as pw-dump shows it, with its id and its properties.
        static func clientObject(_ sandbox: Sandbox, pid: Int32) throws -> (id: Int?, props: [String: Any])? {
            Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Client").lazy.compactMap { o -> (id: Int?, props: [String: Any])? in
                guard let props = (o["info"] as? [String: Any])?["props"] as? [String: Any],
                      Graph.int(props["pipewire.sec.pid"]) == Int(pid) else { return nil }
                return (o["id"] as? Int, props)
            }.first
        }

        /// The properties of the client of `pid` as pw-dump shows it.
        static func client(_ sandbox: Sandbox, pid: Int32) throws -> [String: Any]? {
            try clientObject(sandbox, pid: pid)?.props
        }

        @Test func r10ARestrictedClientPlayingWithRolePhoneGetsNormalPriorityAndInterruptsNothingMixable() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let call = try tone(in: sandbox, seconds: 60, frequency: 660, name: "call.wav")
            let restricted = ["PIPEWIRE_CONFIG_NAME": try DaemonSurvivalTests.restrictedClientConfig(sandbox)]
            // Mixable music: interrupted by a call only (R10, R2).
            let (player, musicNode) = try sandbox.startPlayer(
                ["pw-play", music], environment: ["PIPEWIRE_PROPS": "{ audio.session.category=playback audio.session.options=mixWithOthers }"],
                on: "headphones")
            defer { player.terminate(signal: SIGKILL, timeout: 2) }

            let (phone, phoneNode) = try sandbox.startPlayer(["pw-play", "--media-role", "Phone", call],
                                                             environment: restricted, on: "headphones")
            #expect(try Self.client(sandbox, pid: phone.pid)?["pipewire.access"] as? String == "restricted")
            try sandbox.waitUntil(timeout: 10, "the restricted Phone stream's session to be active") {
                try sandbox.sessionState(subject: phoneNode)?["active"] as? Bool == true
            }
            #expect(try sandbox.sessionState(subject: phoneNode)?["priority"] as? String == "normal")
            #expect(try sandbox.sessionState(ofStream: musicNode)?["interrupted"] as? Bool == false)
            phone.terminate(signal: SIGKILL, timeout: 2)

            // The same stream from an ordinary client is a call and interrupts the music.
            let (trusted, trustedNode) = try sandbox.startPlayer(["pw-play", "--media-role", "Phone", call], on: "headphones")
            defer { trusted.terminate(signal: SIGKILL, timeout: 2) }
            try sandbox.waitUntil(timeout: 10, "the ordinary Phone stream to interrupt the music") {
                try sandbox.sessionState(ofStream: musicNode)?["interrupted"] as? Bool == true
            }
            #expect(try sandbox.sessionState(subject: trustedNode)?["priority"] as? String == "call")
        }

        /// Connects `pw-mon` with `properties` among the first properties it sends (a
        /// client.conf written for it) and waits until the module has decided on it (pw-dump
        /// lists its switch key): its `pipewire.access` as registered, and the published
        /// global state's silent mode.
        static func connectControl(_ sandbox: Sandbox, with properties: String, name: String) throws
            -> (access: String?, silentMode: Bool?, global: String) {
            let system = try String(contentsOfFile: "/usr/share/pipewire/client.conf", encoding: .utf8)
            guard let r = system.range(of: "context.properties = {") else { throw TestFailure("no context.properties in client.conf") }
            let conf = sandbox.directory + "/tmp/\(name).conf"
            try system.replacingCharacters(in: r, with: "context.properties = { " + properties)
                .write(toFile: conf, atomically: true, encoding: .utf8)
            let control = try sandbox.spawn(["pw-mon"], environment: ["PIPEWIRE_CONFIG_NAME": conf])
            defer { control.terminate() }
            var id: Int?
            var access: String?
            try sandbox.waitUntil(timeout: 10, "the client to connect") {
                guard let c = try clientObject(sandbox, pid: control.pid), c.props["audio.session.control.silent-mode"] != nil else {
                    return false
                }
                (id, access) = (c.id, c.props["pipewire.access"] as? String)
                return id != nil
            }
            // The module answered the request as the client registered; the global state it
            // publishes may wait for the publishing interval (longer while the graph is busy
            // starting). The answer is read when it shows: silent mode on in the metadata, or
            // the module's warning that this client may not set it.
            var global: [String: Any]?
            var silentMode: Bool?
            let refusal = "client \(id ?? -1) may not set audio.session.control.silent-mode"
            try sandbox.waitUntil(timeout: 10, "the module to answer client \(id ?? -1)'s silent-mode request") {
                global = try sandbox.globalState()
                if global?["silentMode"] as? Bool == true {
                    silentMode = true
                } else if sandbox.moduleLog(lines: 400).contains(refusal) {
                    silentMode = global?["silentMode"] as? Bool
                }
                return silentMode != nil
            }
            return (access, silentMode, String(describing: global))
        }

        @Test func r20ARestrictedClientCannotSwitchSilentModeOn() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let c = try Self.connectControl(
                sandbox, with: "pipewire.client.access = restricted audio.session.control.silent-mode = true", name: "restricted-silent")
            #expect(c.access == "restricted")
            #expect(c.silentMode == false, "\(c.global)")
        }

        /// A client that asks for restricted access but brings `pipewire.access =
        /// unrestricted` among its first properties (PipeWire before 0.3.82 keeps that value,
        /// and its access module then checks and grants nothing) cannot set silent mode:
        /// the module reads what the daemon granted, not the property.
        @Test func r20AClientThatBringsItsOwnUnrestrictedAccessCannotSwitchSilentModeOn() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let c = try Self.connectControl(
                sandbox, with: "pipewire.client.access = restricted pipewire.access = unrestricted audio.session.control.silent-mode = true",
                name: "spoofed-access")
            print("trust: a client bringing pipewire.access=unrestricted is registered with pipewire.access=\(c.access ?? "(unset)")")
            #expect(c.silentMode == false, "\(c.global)")
        }

        /// The daemon's own access module restricts `pw-mon` (`access.restricted`), and the
        /// client brings `pipewire.access = unrestricted`: PipeWire 0.3.65 keeps that value
        /// and skips its list, granting nothing; the module reads what was granted and
        /// refuses the switch. PipeWire 1.x ignores both the client's value and the list (it
        /// is deprecated there), so the client is really unrestricted and may set it.
        @Test func r20AClientTheAccessModuleRestrictsCannotLiftItselfWithItsOwnAccess() throws {
            var options = SandboxOptions()
            options.accessRestricted = ["/usr/bin/pw-mon"]
            let sandbox = try Sandbox.start(options)
            defer { sandbox.stop() }
            // The daemon's own version: its access module reads the list before 0.3.83.
            let version = Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Core")
                .compactMap { ($0["info"] as? [String: Any])?["version"] as? String }.first ?? ""
            let parts = version.split(separator: ".").compactMap { Int($0) }
            guard parts.count == 3 else { throw TestFailure("the daemon's version is unreadable: \(version)") }
            let listHonoured = parts[0] == 0 && (parts[1] < 3 || (parts[1] == 3 && parts[2] < 83))
            let c = try Self.connectControl(
                sandbox, with: "pipewire.access = unrestricted audio.session.control.silent-mode = true", name: "restricted-by-daemon")
            print("trust: pw-mon restricted by the daemon's list (\(listHonoured ? "read" : "ignored") by PipeWire \(version)) sets silent mode: \(String(describing: c.silentMode))")
            #expect(c.silentMode == !listHonoured, "\(c.global)")
        }

        @Test func r20AnotherClientWritingTheSwitchIntoAPermittedClientsPropertiesChangesNothing() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            // An ordinary client, permitted to set the switch itself.
            let controller = try sandbox.spawn(["sh", "-c", "exec sleep 60 | pw-cli"])
            defer { controller.terminate() }
            var controllerID: Int?
            try sandbox.waitUntil(timeout: 10, "pw-cli to connect") {
                controllerID = Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Client").first {
                    (($0["info"] as? [String: Any])?["props"] as? [String: Any])?["application.name"] as? String == "pw-cli"
                }?["id"] as? Int
                return controllerID != nil
            }
            let writer = Support.checkoutRoot + "/build/meson/audio-session-foreign-writer"
            #expect(FileManager.default.isExecutableFile(atPath: writer), "build the fixture with make module")
            let r = try sandbox.run([writer, String(controllerID ?? -1), "audio.session.control.silent-mode", "true"])
            #expect(r.status == 0, "\(r.stderr)")
            // The daemon took the write: the controller's properties carry the key now.
            try sandbox.waitUntil(timeout: 10, "the written key on pw-cli's client") {
                Sandbox.objects(try sandbox.dump(), type: "PipeWire:Interface:Client").contains {
                    $0["id"] as? Int == controllerID &&
                        (($0["info"] as? [String: Any])?["props"] as? [String: Any])?["audio.session.control.silent-mode"] != nil
                }
            }
            // The module may hold a publication for a few publishing intervals: a state read once
            // here could predate one that turns silent mode on. A stream that starts after the
            // write changes the global state too; once that shows, the same published value
            // also shows whatever the write did to silent mode.
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let (player, _) = try sandbox.startPlayer(["pw-play", "--media-role", "Music", music], on: "headphones")
            defer { player.terminate() }
            var global: [String: Any]?
            try sandbox.waitUntil(timeout: 10, "the playing music in the published global state") {
                global = try sandbox.globalState()
                return (global?["playingSessions"] as? Int ?? 0) >= 1
            }
            #expect(global?["silentMode"] as? Bool == false, "\(String(describing: global))")
        }
    }
}

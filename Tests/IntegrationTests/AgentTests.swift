import Foundation
import Sandbox
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Integration {
    /// `pw-session agent` following a desktop that python-dbusmock stands in for, on the
    /// sandbox's own buses: systemd-logind (on a private system bus), GNOME's screensaver,
    /// a notification server, and GNOME's notification setting (GSettings in a key file
    /// under the sandbox's XDG_CONFIG_HOME). R20: a locked screen and Do Not Disturb silence
    /// ambient sessions; playback plays on.
    @Suite(.serialized)
    struct AgentTests {
        /// Debian's Python, where python3-dbusmock is (a python3 earlier on PATH may not have it).
        static let python = "/usr/bin/python3"

        struct Desktop {
            var sandbox: Sandbox
            var agent: ChildProcess
            var ambient: ChildProcess
            var playback: ChildProcess
        }

        /// Starts a dbusmock template and waits until its bus name is owned.
        static func mock(_ sandbox: Sandbox, template: String, name: String, system: Bool = false) throws -> ChildProcess {
            let p = try sandbox.spawn([python, "-m", "dbusmock", system ? "--system" : "--session", "--template", template])
            try sandbox.waitUntil(timeout: 15, "the \(template) mock to own \(name)") {
                guard p.isRunning else { throw TestFailure("dbusmock \(template) exited: \(p.logTail())") }
                return try gdbus(sandbox, system: system, dest: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                 method: "org.freedesktop.DBus.GetNameOwner", [name], check: false) != nil
            }
            return p
        }

        /// `gdbus call`: the reply's text, nil when the call failed and `check` is false.
        @discardableResult
        static func gdbus(_ sandbox: Sandbox, system: Bool = false, dest: String, path: String, method: String,
                          _ args: [String] = [], check: Bool = true) throws -> String? {
            let r = try sandbox.run(["gdbus", "call", system ? "--system" : "--session", "--dest", dest,
                                     "--object-path", path, "--method", method] + args, timeout: 10)
            if r.status != 0 {
                if check { throw TestFailure("gdbus call \(method) failed: \(r.stderr)") }
                return nil
            }
            return r.stdout
        }

        /// The agent running, then an ambient and a playback player playing.
        static func start(_ sandbox: Sandbox, agentArguments: [String] = []) throws -> Desktop {
            let agent = try sandbox.spawn([try Support.pwSessionPath(), "agent", "--verbose"] + agentArguments)
            try sandbox.waitUntil(timeout: 15, "the agent to run") {
                guard agent.isRunning else { throw TestFailure("the agent exited: \(agent.logTail())") }
                return agent.logTail(lines: 50).contains("connected to the session bus")
            }
            let music = try tone(in: sandbox, seconds: 60, name: "music.wav")
            let ambient = try Client.spawn(sandbox, ["play", music, "--category", "ambient", "--json"])
            let playback = try Client.spawn(sandbox, ["play", music, "--category", "playback", "--json"])
            try Client.waitFor(ambient, "the ambient player to play", Client.event("playing"))
            try Client.waitFor(playback, "the playback player to play", Client.event("playing"))
            return Desktop(sandbox: sandbox, agent: agent, ambient: ambient, playback: playback)
        }

        static func global(_ sandbox: Sandbox) throws -> [String: Any] {
            try Client.status(sandbox)["global"] as? [String: Any] ?? [:]
        }

        /// Whether the session of category `category` is silenced, and whether it plays.
        static func session(_ sandbox: Sandbox, _ category: String) throws -> (silenced: Bool, playing: Bool)? {
            let sessions = try Client.status(sandbox)["sessions"] as? [[String: Any]] ?? []
            guard let s = sessions.first(where: { $0["category"] as? String == category }) else { return nil }
            return (s["silenced"] as? Bool ?? false, s["playing"] as? Bool ?? false)
        }

        /// Waits until the switch `key` is `on`, the ambient session silenced as it says and
        /// the playback session playing, not silenced.
        static func expectSwitch(_ d: Desktop, _ key: String, _ on: Bool, _ what: String) throws {
            do {
                try d.sandbox.waitUntil(timeout: 15, what) {
                    guard try global(d.sandbox)[key] as? Bool == on,
                          let a = try session(d.sandbox, "ambient"), let p = try session(d.sandbox, "playback") else { return false }
                    return a.silenced == on && !p.silenced && p.playing
                }
            } catch {
                throw TestFailure("\(error)\nagent log:\n\(d.agent.logTail())\nstatus: \((try? Client.status(d.sandbox)) ?? [:])")
            }
        }

        /// logind's LockedHint for the user's session (found as a user service finds it: the
        /// user's sessions, no XDG_SESSION_ID).
        @Test func r20LogindsLockedHintMutesAmbientSoundAndPlaybackPlaysOn() throws {
            var options = SandboxOptions()
            options.systemBus = true
            let sandbox = try Sandbox.start(options)
            defer { sandbox.stop() }
            let logind = try Self.mock(sandbox, template: "logind", name: "org.freedesktop.login1", system: true)
            defer { logind.terminate(signal: SIGTERM, timeout: 2) }
            try Self.gdbus(sandbox, system: true, dest: "org.freedesktop.login1", path: "/org/freedesktop/login1",
                           method: "org.freedesktop.DBus.Mock.AddSession", ["c7", "seat0", String(getuid()), "user", "true"])
            let d = try Self.start(sandbox)
            defer { _ = d.ambient.terminate(); _ = d.playback.terminate(); d.agent.terminate(signal: SIGTERM, timeout: 2) }
            try Self.expectSwitch(d, "screenLocked", false, "the agent to report the session unlocked")
            let session = "/org/freedesktop/login1/session/c7"
            try Self.gdbus(sandbox, system: true, dest: "org.freedesktop.login1", path: session,
                           method: "org.freedesktop.login1.Session.SetLockedHint", ["true"])
            try Self.expectSwitch(d, "screenLocked", true, "the locked session to mute the ambient player")
            try Self.gdbus(sandbox, system: true, dest: "org.freedesktop.login1", path: session,
                           method: "org.freedesktop.login1.Session.SetLockedHint", ["false"])
            try Self.expectSwitch(d, "screenLocked", false, "the unlocked session to unmute it")
        }

        /// The screensaver's ActiveChanged, and a switch set by hand against it: the latest
        /// change wins, and the agent follows the desktop again at its next change.
        @Test func r20TheScreensaverLocksAndAHandSetSwitchHoldsUntilTheDesktopChanges() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let saver = try Self.mock(sandbox, template: "gnome_screensaver", name: "org.gnome.ScreenSaver")
            defer { saver.terminate(signal: SIGTERM, timeout: 2) }
            let d = try Self.start(sandbox)
            defer { _ = d.ambient.terminate(); _ = d.playback.terminate(); d.agent.terminate(signal: SIGTERM, timeout: 2) }
            let (dest, path, iface) = ("org.gnome.ScreenSaver", "/org/gnome/ScreenSaver", "org.gnome.ScreenSaver")
            try Self.gdbus(sandbox, dest: dest, path: path, method: "\(iface).SetActive", ["true"])
            try Self.expectSwitch(d, "screenLocked", true, "the active screensaver to mute the ambient player")

            // By hand: unlocked while the screensaver is still active. The agent leaves it.
            let r = try Client.run(sandbox, ["lock", "off"])
            #expect(r.status == 0, "\(r.stderr)")
            try Self.expectSwitch(d, "screenLocked", false, "pw-session lock off to unmute it")
            try Self.gdbus(sandbox, dest: dest, path: path, method: "\(iface).SetActive", ["false"])
            try Self.gdbus(sandbox, dest: dest, path: path, method: "\(iface).SetActive", ["true"])
            try Self.expectSwitch(d, "screenLocked", true, "the next lock to mute it again")
            #expect(d.agent.isRunning, "\(d.agent.logTail())")
        }

        /// Do Not Disturb: GNOME's banners setting and a notification server's Inhibited
        /// property each turn silent mode on and off.
        @Test func r20DoNotDisturbIsSilentMode() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let server = try Self.mock(sandbox, template: "notification_daemon", name: "org.freedesktop.Notifications")
            defer { server.terminate(signal: SIGTERM, timeout: 2) }
            let (dest, path, iface) = ("org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications")
            // The template has no Inhibited property: the server gets one, as KDE's has.
            try Self.gdbus(sandbox, dest: dest, path: path, method: "org.freedesktop.DBus.Mock.AddProperty", [iface, "Inhibited", "<false>"])
            let d = try Self.start(sandbox)
            defer { _ = d.ambient.terminate(); _ = d.playback.terminate(); d.agent.terminate(signal: SIGTERM, timeout: 2) }
            try Self.expectSwitch(d, "silentMode", false, "the agent to report Do Not Disturb off")

            let gsettings = ["gsettings", "set", "org.gnome.desktop.notifications", "show-banners"]
            var r = try sandbox.run(gsettings + ["false"], timeout: 10)
            #expect(r.status == 0, "\(r.stderr)")
            try Self.expectSwitch(d, "silentMode", true, "GNOME's Do Not Disturb to turn silent mode on")
            r = try sandbox.run(gsettings + ["true"], timeout: 10)
            #expect(r.status == 0, "\(r.stderr)")
            try Self.expectSwitch(d, "silentMode", false, "turning it off to turn silent mode off")

            try Self.gdbus(sandbox, dest: dest, path: path, method: "org.freedesktop.DBus.Mock.UpdateProperties", [iface, "{'Inhibited': <true>}"])
            try Self.expectSwitch(d, "silentMode", true, "the notification server's Inhibited to turn silent mode on")
            try Self.gdbus(sandbox, dest: dest, path: path, method: "org.freedesktop.DBus.Mock.UpdateProperties", [iface, "{'Inhibited': <false>}"])
            try Self.expectSwitch(d, "silentMode", false, "its end to turn silent mode off")
        }

        /// --no-do-not-disturb: the desktop's Do Not Disturb leaves silent mode alone. It is on
        /// before the agent starts (an agent that follows it writes it as it starts, before it
        /// connects to the session bus); a second agent without the option is the control.
        @Test func r20DoNotDisturbCanBeLeftAlone() throws {
            let sandbox = try Sandbox.start(SandboxOptions())
            defer { sandbox.stop() }
            let r = try sandbox.run(["gsettings", "set", "org.gnome.desktop.notifications", "show-banners", "false"], timeout: 10)
            #expect(r.status == 0, "\(r.stderr)")
            let d = try Self.start(sandbox, agentArguments: ["--no-do-not-disturb"])
            defer { _ = d.ambient.terminate(); _ = d.playback.terminate(); d.agent.terminate(signal: SIGTERM, timeout: 2) }
            #expect(try Self.global(sandbox)["silentMode"] as? Bool == false)
            #expect(try Self.session(sandbox, "ambient")?.silenced == false)
            let control = try sandbox.spawn([try Support.pwSessionPath(), "agent", "--no-mpris", "--no-screen-lock"])
            defer { control.terminate(signal: SIGTERM, timeout: 2) }
            try Self.expectSwitch(Desktop(sandbox: sandbox, agent: control, ambient: d.ambient, playback: d.playback),
                                  "silentMode", true, "an agent that follows Do Not Disturb to turn silent mode on")
        }
    }
}

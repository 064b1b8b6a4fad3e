import AudioSession
import CGIO
import Foundation

/// The desktop's screen lock and Do Not Disturb, followed on the user's buses and settings
/// and written to the policy's global switches (R20) on the agent's own PipeWire
/// connection. What it reads:
/// - the screen lock: systemd-logind's `LockedHint` of the user's session (system bus) and
///   the `ActiveChanged` signal of `org.freedesktop.ScreenSaver` / `org.gnome.ScreenSaver`
///   (session bus), whichever is there;
/// - Do Not Disturb: GNOME's `org.gnome.desktop.notifications show-banners` (GSettings)
///   and the notification server's `Inhibited` property (`org.freedesktop.Notifications`).
///
/// Everything runs on the buses' loop thread.
public final class DesktopSwitches: @unchecked Sendable {
    public struct Options: Sendable {
        public var screenLock = true
        public var doNotDisturb = true
        public init(screenLock: Bool = true, doNotDisturb: Bool = true) {
            self.screenLock = screenLock
            self.doNotDisturb = doNotDisturb
        }
    }

    /// The screensavers the agent follows: bus name, object path, interface.
    static let screenSavers = [
        ("org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver"),
        ("org.gnome.ScreenSaver", "/org/gnome/ScreenSaver", "org.gnome.ScreenSaver"),
    ]
    static let logind = "org.freedesktop.login1"
    static let notifications = ("org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications")
    static let gnomeSchema = "org.gnome.desktop.notifications"

    let session: AudioSession
    let options: Options
    let sessionBus: DBusConnection
    let systemBus: DBusConnection?
    let log: (String) -> Void
    public private(set) var state = DesktopState()
    /// The logind session the agent follows (its object path).
    var logindSession: String?
    var settings: UnsafeMutablePointer<GSettings>?
    var settingsHandler: gulong = 0

    /// Registers for both buses' connections (call before starting them).
    public init(session: AudioSession, options: Options, sessionBus: DBusConnection, systemBus: DBusConnection?,
                log: @escaping (String) -> Void) {
        self.session = session
        self.options = options
        self.sessionBus = sessionBus
        self.systemBus = systemBus
        self.log = log
        sessionBus.loop.sync {
            sessionBus.whenConnected { [weak self] in self?.sessionBusConnected() }
            sessionBus.whenDisconnected { [weak self] in self?.sessionBusLost() }
            if let systemBus, options.screenLock {
                systemBus.whenConnected { [weak self] in self?.systemBusConnected() }
                systemBus.whenDisconnected { [weak self] in self?.logindGone() }
            }
            if options.doNotDisturb { followGNOMESettings() }
            apply()
        }
    }

    deinit {
        if let s = settings {
            let handler = settingsHandler
            sessionBus.loop.sync {
                if handler != 0 { g_signal_handler_disconnect(UnsafeMutableRawPointer(s), handler) }
                g_object_unref(UnsafeMutableRawPointer(s))
            }
        }
    }

    /// Writes what changed to the policy.
    func apply() {
        let w = state.writes(screenLock: options.screenLock, doNotDisturb: options.doNotDisturb)
        if let l = w.lock {
            log(l ? "the screen is locked: screen lock on" : "the screen is unlocked: screen lock off")
            session.setScreenLocked(l)
        }
        if let s = w.silent {
            log(s ? "Do Not Disturb is on: silent mode on" : "Do Not Disturb is off: silent mode off")
            session.setSilentMode(s)
        }
    }

    // MARK: Session bus: screensavers and the notification server

    func sessionBusConnected() {
        let bus = sessionBus
        if options.screenLock {
            for (name, path, interface) in Self.screenSavers {
                bus.subscribe(sender: name, interface: interface, member: "ActiveChanged", path: path) { [weak self] signal in
                    guard let self, let active = signal.arguments[0]?.bool else { return }
                    self.state.lock(.screenSaver(name), active)
                    self.apply()
                }
                followName(name) { [weak self] present in self?.readScreenSaver(name, path, interface, present: present) }
            }
        }
        if options.doNotDisturb {
            let (name, path, interface) = Self.notifications
            bus.subscribe(sender: name, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                          path: path, arg0: interface) { [weak self] signal in
                guard let self, let inhibited = signal.arguments[1]?.dictionary?["Inhibited"]?.bool else { return }
                self.state.doNotDisturb(.notificationServer, inhibited)
                self.apply()
            }
            followName(name) { [weak self] present in self?.readNotificationServer(present: present) }
        }
        apply()
    }

    func sessionBusLost() {
        for (name, _, _) in Self.screenSavers { state.lock(.screenSaver(name), nil) }
        state.doNotDisturb(.notificationServer, nil)
        apply()
    }

    /// Calls `changed(true)` now if `name` has an owner, and again whenever it gains one;
    /// `changed(false)` when it loses it.
    func followName(_ name: String, on bus: DBusConnection? = nil, _ changed: @escaping (Bool) -> Void) {
        let bus = bus ?? sessionBus
        bus.subscribe(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                      path: "/org/freedesktop/DBus", arg0: name) { signal in
            guard signal.arguments[0]?.string == name else { return }
            changed(!(signal.arguments[2]?.string ?? "").isEmpty)
        }
        if bus.owner(of: name) != nil { changed(true) }
    }

    func readScreenSaver(_ name: String, _ path: String, _ interface: String, present: Bool) {
        var active: Bool?
        if present {
            active = (try? sessionBus.call(name, path, interface, "GetActive"))?[0]?.bool
            if active == nil { log("\(name) did not answer GetActive; not following it") }
        }
        state.lock(.screenSaver(name), active)
        apply()
    }

    func readNotificationServer(present: Bool) {
        let (name, path, interface) = Self.notifications
        // A server without the property (most but KDE's) is no source.
        let inhibited = present ? (try? sessionBus.property(name, path, interface, "Inhibited"))?.bool : nil
        state.doNotDisturb(.notificationServer, inhibited)
        apply()
    }

    // MARK: System bus: logind

    func systemBusConnected() {
        guard let bus = systemBus else { return }
        bus.subscribe(sender: Self.logind, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                      arg0: "org.freedesktop.login1.Session") { [weak self] signal in
            guard let self, signal.path == self.logindSession,
                  let locked = signal.arguments[1]?.dictionary?["LockedHint"]?.bool else { return }
            self.state.lock(.logind, locked)
            self.apply()
        }
        followName(Self.logind, on: bus) { [weak self] present in
            guard let self else { return }
            if present { self.readLogind() } else { self.logindGone() }
        }
    }

    func logindGone() {
        logindSession = nil
        state.lock(.logind, nil)
        apply()
    }

    /// Finds the user's session and reads its `LockedHint`.
    func readLogind() {
        guard let bus = systemBus else { return }
        guard let path = findLogindSession(bus) else {
            log("logind has no session of this user; following the screensaver only")
            logindGone()
            return
        }
        logindSession = path
        let locked = (try? bus.property(Self.logind, path, "org.freedesktop.login1.Session", "LockedHint"))?.bool
        state.lock(.logind, locked)
        apply()
    }

    /// The session in `XDG_SESSION_ID` (set inside a login session); else the user's
    /// graphical session (`Display`), else the first of the user's sessions (a user service
    /// runs outside any session).
    func findLogindSession(_ bus: DBusConnection) -> String? {
        let manager = ("/org/freedesktop/login1", "org.freedesktop.login1.Manager")
        if let id = ProcessInfo.processInfo.environment["XDG_SESSION_ID"], !id.isEmpty,
           let path = (try? bus.call(Self.logind, manager.0, manager.1, "GetSession", [.string(id)]))?[0]?.string {
            return path
        }
        // The user's object, from the list of users (a(uso): uid, name, path).
        let users = (try? bus.call(Self.logind, manager.0, manager.1, "ListUsers"))?[0]?.elements ?? []
        guard let user = users.first(where: { $0[0]?.uint32 == getuid() })?[2]?.string else { return nil }
        if let display = (try? bus.property(Self.logind, user, "org.freedesktop.login1.User", "Display"))?[1]?.string,
           display != "/" {
            return display
        }
        let sessions = (try? bus.property(Self.logind, user, "org.freedesktop.login1.User", "Sessions"))?.elements ?? []
        return sessions.lazy.compactMap { $0[1]?.string }.first
    }

    // MARK: GSettings: GNOME's banners

    func followGNOMESettings() {
        guard let source = g_settings_schema_source_get_default(),
              let schema = g_settings_schema_source_lookup(source, Self.gnomeSchema, 1) else {
            return  // not a GNOME system: no such setting
        }
        defer { g_settings_schema_unref(schema) }
        guard g_settings_schema_has_key(schema, "show-banners") != 0, let s = g_settings_new_full(schema, nil, nil) else { return }
        settings = s
        let changed: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, gpointer?) -> Void = { _, _, data in
            guard let data else { return }
            Unmanaged<DesktopSwitches>.fromOpaque(data).takeUnretainedValue().readBanners()
        }
        settingsHandler = g_signal_connect_data(UnsafeMutableRawPointer(s), "changed::show-banners",
                                                unsafeBitCast(changed, to: GCallback.self),
                                                Unmanaged.passUnretained(self).toOpaque(), nil, GConnectFlags(rawValue: 0))
        readBanners()
    }

    func readBanners() {
        guard let s = settings else { return }
        state.doNotDisturb(.gnomeBanners, g_settings_get_boolean(s, "show-banners") == 0)
        apply()
    }
}

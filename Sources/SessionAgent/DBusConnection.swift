import CGIO
import Foundation

/// A D-Bus failure: the bus is not there, or the call was refused or timed out.
public struct DBusError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// A signal as it arrived.
public struct DBusSignal: Sendable {
    /// The sender's unique name (`:1.42`).
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    /// The signal's arguments (a tuple).
    public var arguments: DBusValue
}

/// One connection to the session or the system bus through GDBus (GIO), owned by a
/// `GLibLoop`. It connects when started and again whenever the bus goes away (a session
/// bus restarted, a system bus that is not up yet), with a growing delay between tries
/// (100 ms up to 2 s). Whoever uses it registers for `connected` (subscribe and read the
/// current state there: it runs for each new connection) and `disconnected` (forget what
/// was known of the old one).
///
/// Everything but `start`/`stop` happens on the loop's thread.
public final class DBusConnection: @unchecked Sendable {
    public enum Bus: Sendable, CustomStringConvertible {
        case session, system
        var gType: GBusType { self == .session ? G_BUS_TYPE_SESSION : G_BUS_TYPE_SYSTEM }
        public var description: String { self == .session ? "session bus" : "system bus" }
    }

    public let bus: Bus
    public let loop: GLibLoop
    /// Milliseconds a method call may take.
    public var callTimeout: Int32 = 3000
    let log: (String) -> Void

    private var connection: OpaquePointer?
    private var closedHandler: gulong = 0
    private var subscriptions: [guint] = []
    private var onConnected: [() -> Void] = []
    private var onDisconnected: [() -> Void] = []
    private var running = false
    private var retryDelay: UInt32 = 100
    /// Counts connections and stops: a retry scheduled for an older one does nothing.
    private var generation = 0
    private var failuresLogged = 0

    public init(bus: Bus, loop: GLibLoop, log: @escaping (String) -> Void = { _ in }) {
        self.bus = bus
        self.loop = loop
        self.log = log
    }

    deinit {
        let loop = self.loop
        if !loop.isCurrent && !loop.isStopped { loop.sync { drop() } } else { drop() }
    }

    /// Registers what to do on each new connection (on the loop's thread).
    public func whenConnected(_ body: @escaping () -> Void) { onConnected.append(body) }
    /// Registers what to do when the connection is lost or stopped (on the loop's thread).
    public func whenDisconnected(_ body: @escaping () -> Void) { onDisconnected.append(body) }

    public var isConnected: Bool { connection != nil }

    /// Connects now, and again whenever the bus goes away, until `stop()`.
    public func start() {
        loop.sync {
            guard !running else { return }
            running = true
            connect()
        }
    }

    /// Disconnects and stops reconnecting.
    public func stop() {
        loop.sync {
            running = false
            generation += 1
            if connection != nil {
                drop()
                for f in onDisconnected { f() }
            }
        }
    }

    private func connect() {
        guard running, connection == nil else { return }
        var error: UnsafeMutablePointer<GError>?
        var conn: OpaquePointer?
        if let address = g_dbus_address_get_for_bus_sync(bus.gType, nil, &error) {
            let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                                | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
            conn = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error)
            g_free(address)
        }
        guard let conn else {
            let why = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            g_clear_error(&error)
            if failuresLogged < 1 { log("no \(bus) yet (\(why)); trying again until there is one") }
            failuresLogged += 1
            scheduleRetry()
            return
        }
        g_dbus_connection_set_exit_on_close(conn, 0)
        connection = conn
        generation += 1
        retryDelay = 100
        failuresLogged = 0
        let closed: @convention(c) (OpaquePointer?, gboolean, UnsafeMutablePointer<GError>?, gpointer?) -> Void = { _, _, _, data in
            guard let data else { return }
            let me = Unmanaged<DBusConnection>.fromOpaque(data).takeUnretainedValue()
            // Emitted on this loop (the connection was made on its thread); act after it returns.
            me.loop.async { me.lost() }
        }
        closedHandler = g_signal_connect_data(UnsafeMutableRawPointer(conn), "closed",
                                              unsafeBitCast(closed, to: GCallback.self),
                                              Unmanaged.passUnretained(self).toOpaque(), nil, GConnectFlags(rawValue: 0))
        log("connected to the \(bus)")
        for f in onConnected { f() }
    }

    private func lost() {
        guard connection != nil, let c = connection, g_dbus_connection_is_closed(c) != 0 else { return }
        log("the \(bus) went away; reconnecting")
        drop()
        for f in onDisconnected { f() }
        scheduleRetry()
    }

    private func scheduleRetry() {
        guard running else { return }
        let wanted = generation
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, 2000)
        loop.after(milliseconds: delay) { [weak self] in
            guard let self, self.generation == wanted else { return }
            self.connect()
        }
    }

    /// Unsubscribes everything and lets go of the connection.
    private func drop() {
        guard let c = connection else { return }
        for id in subscriptions { g_dbus_connection_signal_unsubscribe(c, id) }
        subscriptions = []
        if closedHandler != 0 { g_signal_handler_disconnect(UnsafeMutableRawPointer(c), closedHandler) }
        closedHandler = 0
        if g_dbus_connection_is_closed(c) == 0 { g_dbus_connection_close(c, nil, nil, nil) }
        g_object_unref(UnsafeMutableRawPointer(c))
        connection = nil
    }

    // MARK: Calls (loop thread)

    /// Calls a method and waits for its reply (at most `callTimeout`).
    public func call(_ destination: String, _ path: String, _ interface: String, _ method: String,
                     _ arguments: [DBusArgument] = []) throws(DBusError) -> DBusValue {
        guard let c = connection else { throw DBusError(message: "not connected to the \(bus)") }
        guard g_variant_is_object_path(path) != 0, g_dbus_is_name(destination) != 0,
              g_dbus_is_interface_name(interface) != 0, g_dbus_is_member_name(method) != 0 else {
            throw DBusError(message: "not a valid D-Bus address: \(destination) \(path) \(interface).\(method)")
        }
        var error: UnsafeMutablePointer<GError>?
        let params = DBusArgument.tuple(arguments)
        guard let reply = g_dbus_connection_call_sync(c, destination, path, interface, method, params, nil,
                                                      G_DBUS_CALL_FLAGS_NO_AUTO_START, callTimeout, nil, &error) else {
            let why = error.map { String(cString: $0.pointee.message) } ?? "no reply"
            g_clear_error(&error)
            throw DBusError(message: why)
        }
        defer { g_variant_unref(reply) }
        return DBusValue.read(reply)
    }

    /// `org.freedesktop.DBus.Properties.Get`: the property's value (unwrapped).
    public func property(_ destination: String, _ path: String, _ interface: String, _ name: String) throws(DBusError) -> DBusValue {
        let reply = try call(destination, path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
        guard let v = reply[0] else { throw DBusError(message: "an empty reply to Get \(interface).\(name)") }
        return v.unwrapped
    }

    /// The unique name that owns `name` now, nil when none does.
    public func owner(of name: String) -> String? {
        try? call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", [.string(name)])[0]?.string
    }

    /// Subscribes to signals on the current connection (it ends with the connection: call
    /// again from `whenConnected`). Nil fields match anything; `arg0Namespace` makes
    /// `arg0` match a name and the names below it. Returns false when not connected.
    @discardableResult
    public func subscribe(sender: String? = nil, interface: String?, member: String?, path: String? = nil,
                          arg0: String? = nil, arg0Namespace: Bool = false,
                          _ handler: @escaping (DBusSignal) -> Void) -> Bool {
        guard let c = connection else { return false }
        let box = Unmanaged.passRetained(SignalHandler(handler)).toOpaque()
        let id = g_dbus_connection_signal_subscribe(
            c, sender, interface, member, path, arg0,
            arg0Namespace ? G_DBUS_SIGNAL_FLAGS_MATCH_ARG0_NAMESPACE : G_DBUS_SIGNAL_FLAGS_NONE,
            { _, sender, path, interface, member, params, data in
                guard let data else { return }
                let h = Unmanaged<SignalHandler>.fromOpaque(data).takeUnretainedValue()
                let signal = DBusSignal(
                    sender: sender.map { String(cString: $0) } ?? "",
                    path: path.map { String(cString: $0) } ?? "",
                    interface: interface.map { String(cString: $0) } ?? "",
                    member: member.map { String(cString: $0) } ?? "",
                    arguments: params.map { DBusValue.read($0) } ?? .tuple([]))
                h.body(signal)
            },
            box,
            { data in if let data { Unmanaged<SignalHandler>.fromOpaque(data).release() } })
        subscriptions.append(id)
        return true
    }

    final class SignalHandler {
        let body: (DBusSignal) -> Void
        init(_ body: @escaping (DBusSignal) -> Void) { self.body = body }
    }
}

/// Who a client is, as the daemon (not the client) knows it: what priority and which
/// global switches the policy grants are decided on this, never on what a client says
/// about itself (`application.name`, `media.role`, its declaration).
///
/// The module computes it when the client connects (from `pipewire.sec.pid`, which the
/// daemon sets from the socket's credentials, `/proc/<pid>/exe`, the Flatpak instance
/// file and `pipewire.access`) and hands it to the policy in the client's `ClientFacts`.
/// A client without one (the policy driven directly, as in tests) counts as trusted.
public struct ClientIdentity: Sendable, Equatable {
    /// The executable of the connecting process (`/proc/<pid>/exe`), nil when unknown.
    public var executable: String?
    /// The Flatpak application id, from the instance's own `.flatpak-info`.
    public var appID: String?
    /// `pipewire.sec.uid`.
    public var uid: UInt32?
    /// `pipewire.access` as the daemon had it when the client connected.
    public var access: ClientAccess?
    /// The connecting process runs in a Flatpak sandbox (its instance file exists).
    public var inFlatpak: Bool
    /// Whether the daemon had granted the client read and execute on its core object when
    /// the client was registered; nil when unknown. The access module grants an
    /// unrestricted client that before registration; a confined one gets its permissions
    /// later, from the session manager, if at all.
    public var coreAccessGranted: Bool?
    /// The daemon never takes `pipewire.access` from the client itself (PipeWire 0.3.82
    /// and later). Before, a client could bring its own value, and the access module then
    /// checked nothing and granted nothing.
    public var accessFromDaemon: Bool

    public init(executable: String? = nil, appID: String? = nil, uid: UInt32? = nil, access: ClientAccess? = nil, inFlatpak: Bool = false,
                coreAccessGranted: Bool? = nil, accessFromDaemon: Bool = true) {
        self.executable = executable
        self.appID = appID
        self.uid = uid
        self.access = access
        self.inFlatpak = inFlatpak
        self.coreAccessGranted = coreAccessGranted
        self.accessFromDaemon = accessFromDaemon
    }

    /// Sandboxed: confined by its access (`ClientAccess.confines`), in a Flatpak, or let in
    /// without the access an unrestricted client is granted (`unbacked`).
    public var sandboxed: Bool { inFlatpak || access?.confines == true || unbacked }

    /// The daemon did not back the access the client has: it was registered without read
    /// and execute on the core, which the access module grants every unrestricted client
    /// first. Such a client named its own `pipewire.access` (possible before PipeWire
    /// 0.3.82), or waits for the session manager to decide. The one exception is
    /// `default`, which the daemon itself sets (from 0.3.83, for a socket whose clients
    /// the session manager grants access to later) and which no client can bring then.
    var unbacked: Bool {
        guard coreAccessGranted == false else { return false }
        return !(accessFromDaemon && access == "default")
    }

    /// Whether an entry of an allow list names this client: an absolute path names the
    /// executable, `uid:<n>` the user, anything else a Flatpak application id.
    public func isNamed(by entry: String) -> Bool {
        if entry.hasPrefix("/") { return executable == entry }
        if entry.hasPrefix("uid:") {
            guard let uid, let n = UInt32(entry.dropFirst(4)) else { return false }
            return n == uid
        }
        return appID == entry
    }

    public func isNamed(byAnyOf list: Set<String>) -> Bool {
        list.contains { isNamed(by: $0) }
    }
}

/// A client's `pipewire.access`: how the daemon's access module let it in.
public struct ClientAccess: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public static let unrestricted: ClientAccess = "unrestricted"
    public static let restricted: ClientAccess = "restricted"
    public static let flatpak: ClientAccess = "flatpak"

    /// The one rule for "sandboxed by its access": `restricted`, `flatpak`, `rejected`, or
    /// `portal` (a connection the desktop portal opens to hand to a sandboxed program: the
    /// daemon lets it in unrestricted and the portal restricts it afterwards).
    public var confines: Bool {
        rawValue == "restricted" || rawValue == "flatpak" || rawValue == "rejected" || rawValue == "portal"
    }
}

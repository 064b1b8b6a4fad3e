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

    public init(executable: String? = nil, appID: String? = nil, uid: UInt32? = nil, access: ClientAccess? = nil, inFlatpak: Bool = false) {
        self.executable = executable
        self.appID = appID
        self.uid = uid
        self.access = access
        self.inFlatpak = inFlatpak
    }

    /// Sandboxed: confined by its access (`ClientAccess.confines`) or in a Flatpak.
    public var sandboxed: Bool { inFlatpak || access?.confines == true }

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

    /// The one rule for "sandboxed by its access": `restricted`, `flatpak` or `rejected`.
    public var confines: Bool {
        rawValue == "restricted" || rawValue == "flatpak" || rawValue == "rejected"
    }
}

/// Who a client is, as the daemon (not the client) knows it: what priority and which
/// global switches the policy grants are decided on this, never on what a client says
/// about itself (`application.name`, `media.role`, its declaration).
///
/// The module computes it when the client connects (from `pipewire.sec.pid`, which the
/// daemon sets from the socket's credentials, `/proc/<pid>/exe`, the Flatpak instance
/// file and `pipewire.access`) and hands it to the policy as the `IdentityKey` properties
/// of the client; keys of that prefix that a client or a stream brings are removed first.
/// A client without them (the policy driven directly, as in tests) counts as trusted.
public struct ClientIdentity: Sendable, Equatable {
    /// The executable of the connecting process (`/proc/<pid>/exe`), nil when unknown.
    public var executable: String?
    /// The Flatpak application id, from the instance's own `.flatpak-info`.
    public var appID: String?
    /// `pipewire.sec.uid`.
    public var uid: UInt32?
    /// Restricted by the access module or running in a Flatpak sandbox.
    public var sandboxed: Bool

    public init(executable: String? = nil, appID: String? = nil, uid: UInt32? = nil, sandboxed: Bool = false) {
        self.executable = executable
        self.appID = appID
        self.uid = uid
        self.sandboxed = sandboxed
    }

    /// Reads the identity keys of a client's properties (those the module put there).
    public init(_ props: Properties) {
        executable = props[IdentityKey.executable].flatMap { $0.isEmpty ? nil : $0 }
        appID = props[IdentityKey.appID].flatMap { $0.isEmpty ? nil : $0 }
        uid = props[IdentityKey.uid].flatMap { UInt32($0) }
        sandboxed = props[IdentityKey.sandboxed] == "true"
    }

    /// The identity as properties, for the policy.
    public var properties: Properties {
        var p: Properties = [IdentityKey.sandboxed: sandboxed ? "true" : "false"]
        if let executable { p[IdentityKey.executable] = executable }
        if let appID { p[IdentityKey.appID] = appID }
        if let uid { p[IdentityKey.uid] = String(uid) }
        return p
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

/// The client properties that carry a `ClientIdentity` to the policy. Not `audio.session.*`:
/// they declare nothing.
public enum IdentityKey {
    public static let prefix = "audio-session.identity."
    public static let executable = "audio-session.identity.executable"
    public static let appID = "audio-session.identity.app-id"
    public static let uid = "audio-session.identity.uid"
    public static let sandboxed = "audio-session.identity.sandboxed"
}

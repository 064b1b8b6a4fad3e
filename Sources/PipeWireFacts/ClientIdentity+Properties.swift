import SessionPolicy

/// A client's identity as properties: how tests and recorded graphs give one to the
/// policy through the translation (`ClientFacts(pipeWire:)`). Inside the daemon the
/// module sets the identity it established itself, and drops these keys from what a
/// client or stream brings.
extension ClientIdentity {
    /// Reads the identity keys of a client's properties (those the module put there).
    public init(_ props: Properties) {
        self.init(executable: props[IdentityKey.executable].flatMap { $0.isEmpty ? nil : $0 },
                  appID: props[IdentityKey.appID].flatMap { $0.isEmpty ? nil : $0 },
                  uid: props[IdentityKey.uid].flatMap { UInt32($0) },
                  sandboxed: props[IdentityKey.sandboxed] == "true")
    }

    /// The identity as properties, for the policy.
    public var properties: Properties {
        var p: Properties = [IdentityKey.sandboxed: sandboxed ? "true" : "false"]
        if let executable { p[IdentityKey.executable] = executable }
        if let appID { p[IdentityKey.appID] = appID }
        if let uid { p[IdentityKey.uid] = String(uid) }
        return p
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

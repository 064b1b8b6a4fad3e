import SessionPolicy
import PipeWireFacts

/// A client's identity as properties: how these tests write one next to a client's other
/// properties. Inside the daemon the module hands the identity it established with the
/// client (`as_core_client_added`); no property names one.
extension ClientIdentity {
    /// Reads the identity keys of a test's client properties.
    init(testProperties props: Properties) {
        self.init(executable: props[IdentityKey.executable].flatMap { $0.isEmpty ? nil : $0 },
                  appID: props[IdentityKey.appID].flatMap { $0.isEmpty ? nil : $0 },
                  uid: props[IdentityKey.uid].flatMap { UInt32($0) },
                  access: props[IdentityKey.sandboxed] == "true" ? .restricted : nil)
    }

    /// The identity as properties, for the policy.
    var properties: Properties {
        var p: Properties = [IdentityKey.sandboxed: sandboxed ? "true" : "false"]
        if let executable { p[IdentityKey.executable] = executable }
        if let appID { p[IdentityKey.appID] = appID }
        if let uid { p[IdentityKey.uid] = String(uid) }
        return p
    }
}

/// The client properties that carry a `ClientIdentity` to the policy. Not `audio.session.*`:
/// they declare nothing.
enum IdentityKey {
    static let prefix = "audio-session.identity."
    static let executable = "audio-session.identity.executable"
    static let appID = "audio-session.identity.app-id"
    static let uid = "audio-session.identity.uid"
    static let sandboxed = "audio-session.identity.sandboxed"
}

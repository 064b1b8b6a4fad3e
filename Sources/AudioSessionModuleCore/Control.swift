import SessionPolicy
import PipeWireFacts

/// The global switches a client may set on its own connection (R20):
/// `audio.session.control.silent-mode` and `audio.session.control.screen-lock`,
/// "true" or "false", in the client's own property updates. Sandboxed clients are not
/// permitted (see `refusal`).
public enum Control {
    public enum Switch: String, Sendable, Hashable, CaseIterable {
        case silentMode = "audio.session.control.silent-mode"
        case screenLock = "audio.session.control.screen-lock"
    }

    public struct Request: Equatable, Sendable {
        public var `switch`: Switch
        public var on: Bool
    }

    public static func requests(in props: Properties) -> [Request] {
        Switch.allCases.compactMap { s in
            switch props[s.rawValue] {
            case "true": return Request(switch: s, on: true)
            case "false": return Request(switch: s, on: false)
            default: return nil
            }
        }
    }

    /// Why a client may not set the global switches, nil when it may. The decision rests
    /// on what the daemon and the module know of the client (`ClientIdentity`), never on
    /// keys it could have written itself: sandboxed clients (restricted by the access
    /// module, or in a Flatpak) may not; when `allowed` is not empty, only the clients it
    /// names may. `pipewire.access` is read only to refuse (a client may bring its own
    /// value when it connects, so it never grants anything).
    public static func refusal(_ props: Properties, identity: ClientIdentity?, allowed: Set<String>) -> String? {
        switch props["pipewire.access"] {
        case "restricted", "flatpak", "rejected": return "sandboxed client"
        default: break
        }
        if identity?.sandboxed == true { return "sandboxed client" }
        if !allowed.isEmpty {
            guard let identity, identity.isNamed(byAnyOf: allowed) else { return "not in control.allowed-applications" }
        }
        return nil
    }
}

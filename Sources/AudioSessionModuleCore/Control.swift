import SessionPolicy

/// The global switches a client may set on its own connection (SPEC R20):
/// `audio.session.control.silent-mode` and `audio.session.control.screen-lock`,
/// "true" or "false". Sandboxed clients (`pipewire.access` = `restricted` or
/// `flatpak`) are not permitted.
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

    public static func isPermitted(_ props: Properties) -> Bool {
        switch props["pipewire.access"] {
        case "restricted", "flatpak": return false
        default: return true
        }
    }
}

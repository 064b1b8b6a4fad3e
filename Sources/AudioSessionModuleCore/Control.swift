import SessionPolicy
import PipeWireFacts

/// The global switches a client may ask for on its own connection (R20):
/// `audio.session.control.silent-mode` and `audio.session.control.screen-lock`,
/// "true" or "false", in the client's own property updates. This is the module's side:
/// reading the request from properties the client itself sent. Whether the client may
/// set them is the policy's decision (`Event.switchesRequested`, answered with
/// `Effect.switchRefused` when it may not).
public enum Control {
    /// The client property that asks for each switch.
    public static func key(_ s: GlobalSwitch) -> String {
        switch s {
        case .silentMode: return "audio.session.control.silent-mode"
        case .screenLock: return "audio.session.control.screen-lock"
        }
    }

    /// What `props` ask of the switches; any value but "true" or "false" asks nothing. It
    /// carries whether `props` say the client is sandboxed (`sandboxedByAccess`).
    public static func request(in props: Properties) -> SwitchRequest {
        var request = SwitchRequest(sandboxed: sandboxedByAccess(props))
        for s in GlobalSwitch.allCases {
            switch props[key(s)] {
            case "true": request[s] = true
            case "false": request[s] = false
            default: break
            }
        }
        return request
    }

    /// Whether `props` say the client is sandboxed: `pipewire.access` "restricted",
    /// "flatpak" or "rejected". Read only to refuse: a client may bring its own value when
    /// it connects (PipeWire 0.3.65 keeps it) or write one in its own update, so it never
    /// grants anything.
    ///
    /// It is handed to the policy with the request (`SwitchRequest.sandboxed`), read from
    /// the same properties as the request itself (what the client brought when it
    /// connected, or its own update), rather than folded into the client's identity: the
    /// identity is what the module established when the client connected (it already
    /// counts `pipewire.access` as the daemon had it then), and the policy grants call and
    /// alarm priority on it as well. Properties the client may have written itself can
    /// cost it this request, not those.
    public static func sandboxedByAccess(_ props: Properties) -> Bool {
        switch props["pipewire.access"] {
        case "restricted", "flatpak", "rejected": return true
        default: return false
        }
    }

    /// The reason in the module's warning: `<client> may not set <key>: <reason>`.
    public static func describe(_ refusal: SwitchRefusal) -> String {
        switch refusal {
        case .sandboxed: return "sandboxed client"
        case .notAllowed: return "not in control.allowed-applications"
        }
    }
}

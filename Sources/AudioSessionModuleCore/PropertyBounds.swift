import SessionPolicy
import PipeWireFacts

/// What the module keeps of a client's, stream's or endpoint's properties, and the size
/// a declaration may have. The daemon accepts any number of properties of any size from
/// a client; the policy reads a handful of short ones. Keeping only those (each cut to
/// `maximumKeptValueBytes`) and refusing oversized declarations keeps the core's memory
/// proportional to the number of objects, whatever the clients send.
public enum PropertyBounds {
    /// The longest value of an `audio.session.*` key that is accepted.
    public static let maximumDeclarationValueBytes = 256
    /// The most `audio.session.*` keys one client or stream may carry.
    public static let maximumDeclarationKeys = 16
    /// The most entries of `audio.session.options`.
    public static let maximumOptions = 16
    /// Other kept values (names, roles) are cut to this many bytes (the translation's limit).
    public static let maximumKeptValueBytes = Translation.maximumValueBytes

    /// The keys the policy and the module read, besides `audio.session.*` and the identity.
    public static let keptKeys: Set<String> = [
        PipeWireKey.mediaRole, PipeWireKey.applicationName, PipeWireKey.processBinary, "pipewire.access",
        "node.name", "node.description", "node.nick", "node.virtual", "factory.name",
        "device.description", PipeWireKey.formFactor, "device.bus", "device.api", "device.port.type",
        "api.bluez5.profile", "api.alsa.path",
        // A loopback's sink and stream share it: the policy sees through loopbacks by it.
        PipeWireKey.linkGroup,
    ]

    /// Why the `audio.session.*` keys of `props` are refused, nil when they are not.
    public static func refusal(_ props: Properties) -> SessionError? {
        var count = 0
        for (key, value) in props where key.hasPrefix(DeclarationKey.prefix) {
            count &+= 1
            if value.utf8.count > maximumDeclarationValueBytes {
                return SessionError(code: .badParam, message:
                    "\(SessionError.quote(key)) is longer than \(maximumDeclarationValueBytes) bytes (\(value.utf8.count))")
            }
        }
        if count > maximumDeclarationKeys {
            return SessionError(code: .badParam, message:
                "\(count) audio.session.* properties; at most \(maximumDeclarationKeys) are accepted")
        }
        if let options = props[DeclarationKey.options] {
            var entries = 1
            for byte in options.utf8 where byte == UInt8(ascii: ",") { entries &+= 1 }
            if entries > maximumOptions {
                return SessionError(code: .badParam, message:
                    "\(entries) entries in audio.session.options; at most \(maximumOptions) are accepted")
            }
        }
        return nil
    }

    /// The properties the core keeps: `audio.session.*` as given (check `refusal` first),
    /// the `keptKeys` cut to `maximumKeptValueBytes`, nothing else. Identity keys are dropped.
    public static func kept(_ props: Properties) -> Properties {
        var out = Properties(minimumCapacity: min(props.count, keptKeys.count + maximumDeclarationKeys))
        for (key, value) in props {
            if key.hasPrefix(DeclarationKey.prefix) {
                out[key] = value
            } else if keptKeys.contains(key) {
                out[key] = Translation.cut(value)
            }
        }
        return out
    }

    /// The `audio.session.*` keys of `props`.
    public static func declaration(_ props: Properties) -> Properties {
        Translation.sessionKeys(props)
    }
}

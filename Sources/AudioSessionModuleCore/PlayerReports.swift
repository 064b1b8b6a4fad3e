#if canImport(Glibc)
import Glibc
#endif
import SessionPolicy
import PipeWireFacts

/// What the MPRIS bridge (`pw-session mpris-bridge`, docs/mpris.md) reports on its own
/// connection, as client properties (`pw_core_update_properties`):
///
/// - `audio.session.control.mpris`: the legacy streams it governs and their player,
///   `"56=org.mpris.MediaPlayer2.mpv 61=org.mpris.MediaPlayer2.vlc"`. The module
///   publishes each as `audio-session.mpris` on the stream's subject.
/// - `audio.session.control.mpris-released`: the streams whose player reported
///   Paused after the bridge paused it, `"56 61"`. The policy lets go of its graph
///   pause of each (`GraphEvent.streamReleasedToProgram`); the node stays inactive.
///
/// Neither can make anything play: a release only stops the policy from resuming a
/// stream whose program paused itself. They are accepted from a trusted client only
/// (`isTrusted`).
public struct PlayerReports: Equatable, Sendable {
    public static let governedKey = DeclarationKey.mprisGoverned
    public static let releasedKey = DeclarationKey.mprisReleased

    /// Stream node id -> the player's MPRIS bus name.
    public var governed: [NodeID: String] = [:]
    public var released: Set<NodeID> = []

    public init(governed: [NodeID: String] = [:], released: Set<NodeID> = []) {
        self.governed = governed
        self.released = released
    }

    /// Reads both keys; malformed entries are skipped.
    public init(_ props: Properties) {
        for entry in Self.words(props[Self.governedKey]).prefix(Self.maxEntries) {
            guard let eq = entry.firstIndex(of: "=") else { continue }
            let name = String(entry[entry.index(after: eq)...])
            guard let id = UInt32(entry[..<eq]), Self.isBusName(name) else { continue }
            governed[NodeID(id)] = name
        }
        for entry in Self.words(props[Self.releasedKey]).prefix(Self.maxEntries) {
            if let id = UInt32(entry) { released.insert(NodeID(id)) }
        }
    }

    /// Whether the client carries either key (a bridge, trusted or not).
    public static func present(in props: Properties) -> Bool {
        props[governedKey] != nil || props[releasedKey] != nil
    }

    static func words(_ value: String?) -> [Substring] {
        guard let value else { return [] }
        return value.split(maxSplits: maxEntries, whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" })
    }

    /// An MPRIS well-known name: `org.mpris.MediaPlayer2.` and D-Bus name characters
    /// only, at most 255 bytes (the D-Bus limit).
    static func isBusName(_ name: String) -> Bool {
        let prefix = "org.mpris.MediaPlayer2."
        guard name.hasPrefix(prefix), name.utf8.count > prefix.utf8.count, name.utf8.count <= 255 else { return false }
        return name.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
        }
    }

    /// The one trust check for bridge reports: a client of the daemon's own user that is
    /// not sandboxed, as the module established it when the client connected
    /// (`ClientIdentity`: `pipewire.sec.uid`, set by the daemon from the socket's
    /// credentials, and `pipewire.access` / the Flatpak instance). What a client says
    /// about itself never counts; a client without an established identity is not trusted.
    public static func isTrusted(_ identity: ClientIdentity?, daemonUserID: UInt32?) -> Bool {
        guard let identity, !identity.sandboxed, let daemonUserID, let uid = identity.uid else { return false }
        return uid == daemonUserID
    }

    /// The two report keys of a client's properties, nothing else.
    public static func keys(of props: Properties) -> Properties {
        props.filter { $0.key == governedKey || $0.key == releasedKey }
    }

    /// At most this many entries of each key are read: a report names streams that exist,
    /// and no client needs more to say so.
    public static let maxEntries = 256

    /// The user the daemon runs as.
    public static func currentUserID() -> UInt32? {
        #if canImport(Glibc)
        return UInt32(getuid())
        #else
        return nil
        #endif
    }
}

extension MetadataFormat {
    /// Subject = a legacy stream's node id: the MPRIS player the bridge governs it through.
    public static let mprisKey = "audio-session.mpris"

    static func mpris(player: String) -> JSON {
        .object([("player", .string(player))])
    }
}

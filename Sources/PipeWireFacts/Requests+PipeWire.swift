import SessionPolicy

extension DeclarationFacts {
    /// What the `audio.session.*` properties of a client or stream declare and ask. The
    /// declaration is parsed and validated here (`Declaration.parse`: a malformed one is a
    /// refusal the policy answers); its size is measured for the policy's limits.
    public init(pipeWire props: Properties) {
        var size = DeclarationSize()
        var declares = false
        var usesLibrary = false
        for (key, value) in props where key.hasPrefix(DeclarationKey.prefix) {
            size.keys &+= 1
            let bytes = value.utf8.count
            if bytes > size.longestValueBytes || (bytes == size.longestValueBytes && key < (size.longestKey ?? key)) {
                size.longestValueBytes = bytes
                size.longestKey = key
            }
            if key == DeclarationKey.library {
                usesLibrary = true
            } else if !key.hasPrefix(DeclarationKey.controlPrefix) {
                declares = true
            }
        }
        guard size.keys > 0 else {
            self.init(declares: false)
            return
        }
        if let options = props[DeclarationKey.options] {
            size.options = 1
            for byte in options.utf8 where byte == UInt8(ascii: ",") { size.options &+= 1 }
        }
        // An oversized declaration is refused as a whole by the policy: nothing of it is read.
        if DeclarationLimits.refusal(size) != nil {
            self.init(declares: declares, size: size)
            return
        }
        let parsed: Parsed
        switch Declaration.parse(props) {
        case .success(nil): parsed = .none
        case .success(let d?): parsed = .valid(d)
        case .failure(let e): parsed = .refused(e)
        }
        var active: ActiveRequest?
        if let v = props[DeclarationKey.active] {
            active = Declaration.parseBool(v).map(ActiveRequest.value) ?? .malformed(Translation.cut(v))
        }
        self.init(
            declaration: parsed, active: active,
            activationRequest: Translation.value(props, DeclarationKey.activationRequest),
            notifyOthersOnDeactivation: props[DeclarationKey.deactivation] == DeclarationKey.notifyOthersOnDeactivation,
            outputOverride: Translation.value(props, DeclarationKey.outputOverride),
            usesLibrary: usesLibrary, declares: declares, size: size)
    }
}

extension PlayerReport {
    /// The MPRIS bridge's two keys, nil when the properties carry neither:
    ///
    /// - `audio.session.control.mpris`: the legacy streams it governs and their player,
    ///   `"56=org.mpris.MediaPlayer2.mpv 61=org.mpris.MediaPlayer2.vlc"`;
    /// - `audio.session.control.mpris-released`: the streams whose player reported Paused
    ///   after the bridge paused it, `"56 61"`.
    ///
    /// Malformed entries are skipped; at most `maximumEntries` of each are read.
    public init?(pipeWire props: Properties) {
        let governedValue = props[DeclarationKey.mprisGoverned]
        let releasedValue = props[DeclarationKey.mprisReleased]
        guard governedValue != nil || releasedValue != nil else { return nil }
        var governed: [NodeID: String] = [:]
        var released: Set<NodeID> = []
        for entry in Self.words(governedValue).prefix(Self.maximumEntries) {
            guard let eq = entry.firstIndex(of: "=") else { continue }
            let name = String(entry[entry.index(after: eq)...])
            guard let id = UInt32(entry[..<eq]), Self.isBusName(name) else { continue }
            governed[NodeID(id)] = name
        }
        for entry in Self.words(releasedValue).prefix(Self.maximumEntries) {
            if let id = UInt32(entry) { released.insert(NodeID(id)) }
        }
        self.init(governed: governed, released: released)
    }

    /// At most this many entries of each key are read: a report names streams that exist,
    /// and no client needs more to say so.
    public static let maximumEntries = 256

    static func words(_ value: String?) -> [Substring] {
        guard let value else { return [] }
        return value.split(maxSplits: maximumEntries, whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" })
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
}

extension SwitchRequest {
    /// The client property that asks for each switch (R20).
    public static func key(_ s: GlobalSwitch) -> String {
        switch s {
        case .silentMode: return "audio.session.control.silent-mode"
        case .screenLock: return "audio.session.control.screen-lock"
        }
    }

    /// What properties a client sent on its own connection ask of the global switches
    /// (`audio.session.control.silent-mode`, `…screen-lock`: "true" or "false"; any other
    /// value asks nothing), with the `pipewire.access` they carry.
    public init(pipeWire props: Properties) {
        self.init(access: props[PipeWireKey.access].map { ClientAccess(rawValue: Translation.cut($0)) })
        for s in GlobalSwitch.allCases {
            switch props[Self.key(s)] {
            case "true": self[s] = true
            case "false": self[s] = false
            default: break
            }
        }
    }
}

extension SwitchRefusal {
    /// The reason in the module's warning: `<client> may not set <key>: <reason>`.
    public var sentence: String {
        switch self {
        case .sandboxed: return "sandboxed client"
        case .notAllowed: return "not in control.allowed-applications"
        }
    }
}

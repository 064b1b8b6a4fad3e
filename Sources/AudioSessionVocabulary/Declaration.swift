/// What a session declared: `setCategory(_:mode:options:)` plus the two
/// preferences `setPrefersNoInterruptionsFromSystemAlerts(_:)` and
/// `setPrefersInterruptionOnRouteDisconnect(_:)`.
public struct Declaration: Sendable, Equatable {
    public var category: Category
    public var mode: Mode
    /// The options as declared (see `effectiveOptions` for the implied ones).
    public var options: CategoryOptions
    public var prefersNoInterruptionsFromSystemAlerts: Bool
    public var prefersInterruptionOnRouteDisconnect: Bool

    public init(
        category: Category = .soloAmbient,
        mode: Mode = .default,
        options: CategoryOptions = [],
        prefersNoInterruptionsFromSystemAlerts: Bool = false,
        prefersInterruptionOnRouteDisconnect: Bool = false
    ) {
        self.category = category
        self.mode = mode
        self.options = options
        self.prefersNoInterruptionsFromSystemAlerts = prefersNoInterruptionsFromSystemAlerts
        self.prefersInterruptionOnRouteDisconnect = prefersInterruptionOnRouteDisconnect
    }

    /// The declared options plus those the category and mode imply (§3, 4):
    /// ambient always mixes; duckOthers and interruptSpokenAudioAndMixWithOthers
    /// imply mixWithOthers; voiceChat and videoChat imply allowBluetoothHFP;
    /// videoChat implies defaultToSpeaker; output-only categories allow A2DP.
    public var effectiveOptions: CategoryOptions {
        var o = options
        if category == .ambient { o.insert(.mixWithOthers) }
        if o.contains(.duckOthers) || o.contains(.interruptSpokenAudioAndMixWithOthers) { o.insert(.mixWithOthers) }
        if mode == .voiceChat || mode == .videoChat { o.insert(.allowBluetoothHFP) }
        if mode == .videoChat { o.insert(.defaultToSpeaker) }
        if !category.hasInput { o.insert(.allowBluetoothA2DP) }
        return o
    }

    /// Whether this session mixes with others (§2).
    public var isMixable: Bool { effectiveOptions.contains(.mixWithOthers) }
}

/// The property keys of a declaration (§1).
public enum DeclarationKey {
    public static let category = "audio.session.category"
    public static let mode = "audio.session.mode"
    public static let options = "audio.session.options"
    public static let active = "audio.session.active"
    /// A counter the client library bumps on every `setActive` call, so that asking
    /// again for the same `active` value is still a request that gets an answer
    /// (PipeWire reports no change for a property set to the value it has).
    public static let activationRequest = "audio.session.activation-request"
    public static let deactivation = "audio.session.deactivation"
    public static let prefersNoInterruptionsFromSystemAlerts = "audio.session.prefers-no-interruptions-from-system-alerts"
    public static let prefersInterruptionOnRouteDisconnect = "audio.session.prefers-interruption-on-route-disconnect"
    /// A client property: the `node.name` of the output the session's `overrideOutputAudioPort`
    /// chose, "" for none (R33). The move itself is the session manager's (`target.object`).
    public static let outputOverride = "audio.session.output-override"
    /// The value of `deactivation` that asks for `notifyOthersOnDeactivation`.
    public static let notifyOthersOnDeactivation = "notifyOthersOnDeactivation"
    /// A client property the AudioSession library sets on its connection (its protocol
    /// version, "1"). Such a session resumes itself on `ended` with shouldResume; every
    /// other one (a wrapped or unmodified program, whatever carried its declaration) is
    /// resumed by the policy (R15). It declares nothing by itself.
    public static let library = "audio.session.library"
    /// The prefix that makes a client a declared session.
    public static let prefix = "audio.session."
    /// Requests to the policy itself (silent mode, screen lock), not a declaration.
    public static let controlPrefix = "audio.session.control."
    /// The MPRIS bridge's report of the legacy streams it governs and their player
    /// (`"56=org.mpris.MediaPlayer2.mpv 61=…"`).
    public static let mprisGoverned = "audio.session.control.mpris"
    /// The MPRIS bridge's report of the streams whose player paused itself (`"56 61"`).
    public static let mprisReleased = "audio.session.control.mpris-released"
}

extension Declaration {
    /// Parses and validates the declaration carried by a property set.
    ///
    /// - Returns: `.success(nil)` when nothing is declared (no category, mode,
    ///   options or preference key), `.success(declaration)` when it is valid,
    ///   `.failure` with `badParam` (unknown or malformed value, wrong case,
    ///   duplicate option) or `incompatibleCategory` (§3, 4) otherwise.
    ///   Never traps, whatever the bytes.
    public static func parse(_ props: Properties) -> Result<Declaration?, SessionError> {
        parse(DeclarationValues(props))
    }

    /// `parse(_:)` of the declaration values already read from a property set.
    package static func parse(_ values: DeclarationValues) -> Result<Declaration?, SessionError> {
        let categoryValue = values.category
        let modeValue = values.mode
        let optionsValue = values.options
        let noAlertsValue = values.prefersNoInterruptionsFromSystemAlerts
        let routeValue = values.prefersInterruptionOnRouteDisconnect
        if categoryValue == nil, modeValue == nil, optionsValue == nil, noAlertsValue == nil, routeValue == nil {
            return .success(nil)
        }
        var d = Declaration()
        if let v = categoryValue {
            guard let c = Category(rawValue: v) else {
                return .failure(SessionError(code: .badParam, message: "\(SessionError.quote(v)) is not a category; the categories are \(Category.allCases.map(\.rawValue).joined(separator: ", ")). [§1]"))
            }
            d.category = c
        }
        if let v = modeValue {
            guard let m = Mode(rawValue: v) else {
                return .failure(SessionError(code: .badParam, message: "\(SessionError.quote(v)) is not a mode; the modes are \(Mode.allCases.map(\.rawValue).joined(separator: ", ")). [§1]"))
            }
            d.mode = m
        }
        if let v = optionsValue {
            switch parseOptions(v) {
            case .success(let o): d.options = o
            case .failure(let e): return .failure(e)
            }
        }
        if let v = noAlertsValue {
            guard let b = parseBool(v) else {
                return .failure(SessionError(code: .badParam, message: "prefers-no-interruptions-from-system-alerts must be true or false, not \(SessionError.quote(v)). [§1]"))
            }
            d.prefersNoInterruptionsFromSystemAlerts = b
        }
        if let v = routeValue {
            guard let b = parseBool(v) else {
                return .failure(SessionError(code: .badParam, message: "prefers-interruption-on-route-disconnect must be true or false, not \(SessionError.quote(v)). [§1]"))
            }
            d.prefersInterruptionOnRouteDisconnect = b
        }
        if let e = d.validate() { return .failure(e) }
        return .success(d)
    }

    /// Parses a comma list of option names (whitespace around names ignored;
    /// an empty value means no options). Unknown, empty or repeated names are refused.
    public static func parseOptions(_ value: String) -> Result<CategoryOptions, SessionError> {
        var result: CategoryOptions = []
        if value.allSatisfy({ $0 == " " || $0 == "\t" }) { return .success(result) }
        for raw in value.split(separator: ",", omittingEmptySubsequences: false) {
            let name = trim(raw)
            guard !name.isEmpty else {
                return .failure(SessionError(code: .badParam, message: "The option list \(SessionError.quote(value)) has an empty entry. [§1]"))
            }
            guard let option = CategoryOptions.named(name) else {
                return .failure(SessionError(code: .badParam, message: "\(SessionError.quote(name)) is not an option. [§1]"))
            }
            guard !result.contains(option) else {
                return .failure(SessionError(code: .badParam, message: "The option \(SessionError.quote(name)) is given twice. [§1]"))
            }
            result.insert(option)
        }
        return .success(result)
    }

    /// Checks §3 (modes) and §4 (options) for this category.
    /// Used by the policy and by the client library before it sends anything.
    /// - Returns: `nil` when valid, else an `incompatibleCategory` error naming the rule.
    public func validate() -> SessionError? {
        if !mode.accepts(category) {
            return SessionError(code: .incompatibleCategory, message: "The mode \(mode.rawValue) does not go with the category \(category.rawValue). [§3]")
        }
        for entry in CategoryOptions.named where options.contains(entry.option) {
            if !CategoryOptions.accepts(entry.option, category) {
                return SessionError(code: .incompatibleCategory, message: "The option \(entry.name) does not go with the category \(category.rawValue). [§4]")
            }
        }
        if mode == .voicePrompt && category == .playAndRecord {
            return SessionError(code: .incompatibleCategory, message: "The mode voicePrompt does not go with the category playAndRecord. [§3]")
        }
        return nil
    }

    package static func parseBool(_ v: String) -> Bool? {
        switch v {
        case "true": return true
        case "false": return false
        default: return nil
        }
    }

    static func trim(_ s: Substring) -> String {
        var scalars = s.unicodeScalars[...]
        while let f = scalars.first, f == " " || f == "\t" { scalars = scalars.dropFirst() }
        while let l = scalars.last, l == " " || l == "\t" { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}

/// The values of the keys a declaration is parsed from (`Declaration.parse`), read once from
/// a property set: a property change compares them with the previous set's and parses them,
/// without looking the (long) keys up again.
package struct DeclarationValues: Equatable {
    package var category: String?
    package var mode: String?
    package var options: String?
    package var prefersNoInterruptionsFromSystemAlerts: String?
    package var prefersInterruptionOnRouteDisconnect: String?

    package init(_ props: Properties) {
        category = props[DeclarationKey.category]
        mode = props[DeclarationKey.mode]
        options = props[DeclarationKey.options]
        prefersNoInterruptionsFromSystemAlerts = props[DeclarationKey.prefersNoInterruptionsFromSystemAlerts]
        prefersInterruptionOnRouteDisconnect = props[DeclarationKey.prefersInterruptionOnRouteDisconnect]
    }
}

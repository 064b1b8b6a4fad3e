/// What a client's or a stream's `audio.session.*` properties declare and ask, typed by
/// the translation (`DeclarationFacts(pipeWire:)`). What each value means, and what a
/// declaration may hold (`DeclarationLimits`), is the policy's.
public struct DeclarationFacts: Sendable, Equatable {
    /// The category, mode, options and preferences (§1-4).
    public enum Parsed: Sendable, Equatable {
        /// None of their keys is present.
        case none
        case valid(Declaration)
        /// Present but malformed or against §3-4: the previous declaration stays in force.
        case refused(SessionError)
    }

    /// `audio.session.active`.
    public enum ActiveRequest: Sendable, Equatable {
        case value(Bool)
        /// Neither `true` nor `false` (the value, cut to the translation's limit).
        case malformed(String)
    }

    public var declaration: Parsed
    public var active: ActiveRequest?
    /// `audio.session.activation-request`: a counter bumped on every `setActive` call.
    public var activationRequest: String?
    /// `audio.session.deactivation = notifyOthersOnDeactivation`.
    public var notifyOthersOnDeactivation: Bool
    /// `audio.session.output-override`: the node name of the chosen output, "" for none;
    /// nil when absent.
    public var outputOverride: String?
    /// `audio.session.library`: the AudioSession library's connection (it resumes itself).
    public var usesLibrary: Bool
    /// Some key makes the object a declared session: any `audio.session.*` key but the
    /// library's mark and the requests to the policy (`audio.session.control.*`).
    public var declares: Bool
    /// How much was sent, for `DeclarationLimits`.
    public var size: DeclarationSize

    public init(
        declaration: Parsed = .none, active: ActiveRequest? = nil, activationRequest: String? = nil,
        notifyOthersOnDeactivation: Bool = false, outputOverride: String? = nil, usesLibrary: Bool = false,
        declares: Bool? = nil, size: DeclarationSize = DeclarationSize()
    ) {
        self.declaration = declaration
        self.active = active
        self.activationRequest = activationRequest
        self.notifyOthersOnDeactivation = notifyOthersOnDeactivation
        self.outputOverride = outputOverride
        self.usesLibrary = usesLibrary
        self.declares = declares ?? (declaration != .none || active != nil || activationRequest != nil
            || notifyOthersOnDeactivation || outputOverride != nil)
        self.size = size
    }

    /// The declaration's values compared for "did the program declare something else"
    /// (a refusal is answered again only when the declaration itself changed).
    var parsedDeclaration: Declaration? {
        if case .valid(let d) = declaration { return d }
        return nil
    }
}

/// The size of what an object sent under `audio.session.*`.
public struct DeclarationSize: Sendable, Equatable {
    /// How many `audio.session.*` keys.
    public var keys: Int
    /// The longest value and its key.
    public var longestKey: String?
    public var longestValueBytes: Int
    /// Entries of `audio.session.options` (commas plus one).
    public var options: Int

    public init(keys: Int = 0, longestKey: String? = nil, longestValueBytes: Int = 0, options: Int = 0) {
        self.keys = keys
        self.longestKey = longestKey
        self.longestValueBytes = longestValueBytes
        self.options = options
    }
}

/// What a declaration may hold. The daemon accepts properties of any number and size from
/// a client; a declaration larger than this is refused as a whole (`badParam`) and the last
/// accepted one stays in force, so the policy's memory stays proportional to the number of
/// objects whatever the clients send.
public enum DeclarationLimits {
    /// The longest value of an `audio.session.*` key that is accepted.
    public static let maximumValueBytes = 256
    /// The most `audio.session.*` keys one client or stream may carry.
    public static let maximumKeys = 16
    /// The most entries of `audio.session.options`.
    public static let maximumOptions = 16

    /// Why a declaration of this size is refused, nil when it is not.
    public static func refusal(_ size: DeclarationSize) -> SessionError? {
        if size.longestValueBytes > maximumValueBytes {
            return SessionError(code: .badParam, message:
                "\(SessionError.quote(size.longestKey ?? "")) is longer than \(maximumValueBytes) bytes (\(size.longestValueBytes))")
        }
        if size.keys > maximumKeys {
            return SessionError(code: .badParam, message:
                "\(size.keys) audio.session.* properties; at most \(maximumKeys) are accepted")
        }
        if size.options > maximumOptions {
            return SessionError(code: .badParam, message:
                "\(size.options) entries in audio.session.options; at most \(maximumOptions) are accepted")
        }
        return nil
    }
}

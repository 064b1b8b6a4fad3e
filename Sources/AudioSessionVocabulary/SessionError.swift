/// A refusal: a code (docs/policy.md §9) and a sentence a user understands, with
/// the rule in brackets (`"The option duckOthers does not go with the category record. [§4]"`).
/// Mirrors `AVAudioSession.ErrorCode`.
public struct SessionError: Error, Sendable, Equatable {
    public var code: SessionErrorCode
    public var message: String
    public init(code: SessionErrorCode, message: String) {
        self.code = code
        self.message = message
    }
}

/// `AVAudioSession.ErrorCode` cases the policy can answer with.
public enum SessionErrorCode: String, Sendable, Equatable, CaseIterable {
    case incompatibleCategory, badParam, insufficientPriority, cannotInterruptOthers
    case isBusy, mediaServicesFailed, sessionNotActive
}

extension SessionError {
    /// A property value shown in an error sentence: at most 40 characters,
    /// control characters escaped, so a 64 KiB or binary value stays harmless.
    public static func quote(_ value: String) -> String {
        var out = "\""
        var count = 0
        for scalar in value.unicodeScalars {
            if count >= 40 {
                out += "…"
                break
            }
            count &+= 1
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

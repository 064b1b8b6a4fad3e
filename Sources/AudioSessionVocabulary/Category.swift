/// `AVAudioSession.Category` (§2).
public enum Category: String, Sendable, Hashable, CaseIterable {
    case ambient, soloAmbient, playback, record, playAndRecord, multiRoute

    /// Silenced by silent mode and screen lock (R20).
    public var isSilencedBySilentMode: Bool { self == .ambient || self == .soloAmbient }
    /// Plays audio.
    public var hasOutput: Bool { self != .record }
    /// Captures audio.
    public var hasInput: Bool { self == .record || self == .playAndRecord || self == .multiRoute }
}

/// `AVAudioSession.Mode` (§1, 3).
public enum Mode: String, Sendable, Hashable, CaseIterable {
    case `default`, voiceChat, gameChat, videoRecording, measurement, moviePlayback
    case videoChat, spokenAudio, voicePrompt

    /// The categories that accept this mode (§3).
    public var acceptedCategories: Set<Category> {
        Set(Category.allCases.filter(accepts))
    }

    /// Whether `category` accepts this mode (§3), without building a set: the
    /// declaration is validated on every property change.
    func accepts(_ category: Category) -> Bool {
        switch self {
        case .default: return true
        case .voiceChat, .gameChat, .videoChat: return category == .playAndRecord
        case .videoRecording: return category == .record || category == .playAndRecord
        case .measurement: return category == .playback || category == .record || category == .playAndRecord
        case .moviePlayback, .spokenAudio, .voicePrompt: return category == .playback
        }
    }
}

/// `AVAudioSession.CategoryOptions` (§4).
public struct CategoryOptions: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let mixWithOthers = CategoryOptions(rawValue: 1 << 0)
    public static let duckOthers = CategoryOptions(rawValue: 1 << 1)
    public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 1 << 2)
    /// Parsed from `allowBluetoothHFP` or its alias `allowBluetooth`.
    public static let allowBluetoothHFP = CategoryOptions(rawValue: 1 << 3)
    public static let allowBluetoothA2DP = CategoryOptions(rawValue: 1 << 4)
    public static let allowAirPlay = CategoryOptions(rawValue: 1 << 5)
    public static let defaultToSpeaker = CategoryOptions(rawValue: 1 << 6)
    public static let overrideMutedMicrophoneInterruption = CategoryOptions(rawValue: 1 << 7)

    /// Every option with its property name, in declaration order.
    public static let named: [(name: String, option: CategoryOptions)] = [
        ("mixWithOthers", .mixWithOthers),
        ("duckOthers", .duckOthers),
        ("interruptSpokenAudioAndMixWithOthers", .interruptSpokenAudioAndMixWithOthers),
        ("allowBluetoothHFP", .allowBluetoothHFP),
        ("allowBluetoothA2DP", .allowBluetoothA2DP),
        ("allowAirPlay", .allowAirPlay),
        ("defaultToSpeaker", .defaultToSpeaker),
        ("overrideMutedMicrophoneInterruption", .overrideMutedMicrophoneInterruption),
    ]

    /// Looks up one option name; `allowBluetooth` is accepted as an alias of `allowBluetoothHFP`.
    public static func named(_ name: String) -> CategoryOptions? {
        if name == "allowBluetooth" { return .allowBluetoothHFP }
        for entry in named where entry.name == name { return entry.option }
        return nil
    }

    /// The property names of the options in this set, in declaration order.
    public var names: [String] {
        CategoryOptions.named.filter { contains($0.option) }.map(\.name)
    }

    /// Whether `category` accepts this single option (§4), without building a set.
    static func accepts(_ option: CategoryOptions, _ category: Category) -> Bool {
        switch option {
        case .mixWithOthers, .duckOthers:
            return category == .ambient || category == .playback || category == .playAndRecord || category == .multiRoute
        case .interruptSpokenAudioAndMixWithOthers:
            return category == .playback || category == .playAndRecord || category == .multiRoute
        case .allowBluetoothHFP: return category == .playAndRecord || category == .record
        // Always true for output-only categories: accepted there as a no-op.
        case .allowBluetoothA2DP:
            return category == .playAndRecord || category == .ambient || category == .soloAmbient || category == .playback
        case .allowAirPlay, .defaultToSpeaker: return category == .playAndRecord
        case .overrideMutedMicrophoneInterruption: return category == .playAndRecord || category == .multiRoute
        default: return false
        }
    }
}

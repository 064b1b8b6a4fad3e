/// `AVAudioSession.Category` (SPEC 2).
public enum Category: String, Sendable, Hashable, CaseIterable {
    case ambient, soloAmbient, playback, record, playAndRecord, multiRoute

    /// Silenced by silent mode and screen lock (R20).
    public var isSilencedBySilentMode: Bool { self == .ambient || self == .soloAmbient }
    /// Plays audio.
    public var hasOutput: Bool { self != .record }
    /// Captures audio.
    public var hasInput: Bool { self == .record || self == .playAndRecord || self == .multiRoute }
}

/// `AVAudioSession.Mode` (SPEC 1, 3).
public enum Mode: String, Sendable, Hashable, CaseIterable {
    case `default`, voiceChat, gameChat, videoRecording, measurement, moviePlayback
    case videoChat, spokenAudio, voicePrompt

    /// The categories that accept this mode (SPEC 3).
    public var acceptedCategories: Set<Category> {
        switch self {
        case .default: return Set(Category.allCases)
        case .voiceChat, .gameChat, .videoChat: return [.playAndRecord]
        case .videoRecording: return [.record, .playAndRecord]
        case .measurement: return [.playback, .record, .playAndRecord]
        case .moviePlayback, .spokenAudio, .voicePrompt: return [.playback]
        }
    }
}

/// `AVAudioSession.CategoryOptions` (SPEC 4).
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

    /// The categories that accept this single option (SPEC 4).
    static func acceptedCategories(of option: CategoryOptions) -> Set<Category> {
        switch option {
        case .mixWithOthers: return [.ambient, .playback, .playAndRecord, .multiRoute]
        case .duckOthers: return [.ambient, .playback, .playAndRecord, .multiRoute]
        case .interruptSpokenAudioAndMixWithOthers: return [.playback, .playAndRecord, .multiRoute]
        case .allowBluetoothHFP: return [.playAndRecord, .record]
        // Always true for output-only categories: accepted there as a no-op.
        case .allowBluetoothA2DP: return [.playAndRecord, .ambient, .soloAmbient, .playback]
        case .allowAirPlay, .defaultToSpeaker: return [.playAndRecord]
        case .overrideMutedMicrophoneInterruption: return [.playAndRecord, .multiRoute]
        default: return []
        }
    }
}

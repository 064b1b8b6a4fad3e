/// The priority classes of §5 (highest first: call > alarm > prompt > normal).
public enum PriorityClass: String, Sendable, Hashable, CaseIterable {
    case normal, prompt, alarm, call
}

/// What a legacy stream's `media.role` maps to (§1 table).
public struct RoleRule: Sendable, Equatable {
    public var category: Category
    public var mode: Mode
    public var options: CategoryOptions
    /// Deactivates with notifyOthersOnDeactivation (R14).
    public var transient: Bool
    public var priority: PriorityClass
    /// An alert (R17, R21): Notification, Event, Alarm.
    public var isAlert: Bool
    /// Never touched by the policy (Production, DSP, Test).
    public var unmanaged: Bool
    /// Not interrupted by a call (R10: Accessibility).
    public var exemptFromCalls: Bool
    /// Game: soloAmbient, or ambient when other audio already plays at activation.
    public var ambientWhenOtherAudioPlays: Bool

    public init(
        category: Category, mode: Mode = .default, options: CategoryOptions = [],
        transient: Bool = false, priority: PriorityClass = .normal, isAlert: Bool = false,
        unmanaged: Bool = false, exemptFromCalls: Bool = false, ambientWhenOtherAudioPlays: Bool = false
    ) {
        self.category = category
        self.mode = mode
        self.options = options
        self.transient = transient
        self.priority = priority
        self.isAlert = isAlert
        self.unmanaged = unmanaged
        self.exemptFromCalls = exemptFromCalls
        self.ambientWhenOtherAudioPlays = ambientWhenOtherAudioPlays
    }

    /// The §1 table.
    public static let defaultTable: [String: RoleRule] = {
        let media = RoleRule(category: .playback)
        let movie = RoleRule(category: .playback, mode: .moviePlayback)
        let alert = RoleRule(category: .ambient, transient: true, isAlert: true)
        let call = RoleRule(category: .playAndRecord, mode: .voiceChat, transient: true, priority: .call)
        let prompt = RoleRule(
            category: .playback, mode: .voicePrompt,
            options: [.duckOthers, .interruptSpokenAudioAndMixWithOthers], transient: true, priority: .prompt)
        let unmanaged = RoleRule(category: .ambient, unmanaged: true)
        return [
            "Music": media, "Movie": movie, "Video": movie,
            "Game": RoleRule(category: .soloAmbient, ambientWhenOtherAudioPlays: true),
            "Notification": alert, "Event": alert,
            "Alarm": RoleRule(category: .playback, transient: true, priority: .alarm, isAlert: true),
            "Phone": call, "Communication": call,
            "Navigation": prompt, "Assistant": prompt,
            "Accessibility": RoleRule(category: .playback, options: [.mixWithOthers], exemptFromCalls: true),
            "Production": unmanaged, "DSP": unmanaged, "Test": unmanaged,
        ]
    }()
}

/// Everything the policy can be told, with the documented defaults (docs/policy.md).
/// (The module parses the SPA-JSON configuration into this value.)
public struct PolicyConfiguration: Sendable, Equatable {
    /// How a legacy stream without `media.role` behaves (§1).
    public enum Profile: String, Sendable, CaseIterable {
        /// playback + mixWithOthers: never interrupts, can be interrupted and ducked.
        case desktop
        /// soloAmbient, like an iOS app that never set a category.
        case ios
    }
    /// What happens to an alert while a session prefers no interruptions from system alerts (R17).
    public enum AlertPolicy: String, Sendable, CaseIterable {
        /// The alert plays, mixed, without interrupting or ducking that session.
        case mix
        /// The alert is held back (paused) until that session deactivates.
        case holdBack
    }

    /// Default `desktop`.
    public var profile: Profile = .desktop
    /// The gain of a ducked session, multiplied into its user volume. Default 0.2 (−14 dB, §12).
    public var duckLevel: Float = 0.2
    /// The strong duck used by voicePrompt/navigation duckers when `strongDuckForPrompts` is on. Default 0.1.
    public var strongDuckLevel: Float = 0.1
    /// Whether voicePrompt duckers use `strongDuckLevel`. Default off (S4: music ducks to the duck level).
    public var strongDuckForPrompts: Bool = false
    /// Ramp down, default 250 ms (§12).
    public var duckRampDownMilliseconds: UInt32 = 250
    /// Ramp back up, default 500 ms (§12).
    public var duckRampUpMilliseconds: UInt32 = 500
    /// R42: how long an interrupted stream fades to silence before it is paused. 0 (the
    /// core's default) pauses at once; the module sets 300 ms.
    public var fadeOutMilliseconds: UInt32 = 0
    /// R42: how long a stream the policy faded out takes to ramp back to its gain when it
    /// plays again. 0 (the core's default) restores the gain at once; the module sets 500 ms.
    public var fadeInMilliseconds: UInt32 = 0
    /// How long the end of an interruption and of a duck is held after the session that
    /// caused it went: when a session of the same program and declaration starts within
    /// it (a speech synthesizer opens a stream per phrase), the interruption and the duck
    /// simply go on. 0 (the core's default) ends them at once; the module sets 200 ms.
    public var resumeGraceMilliseconds: UInt32 = 0
    /// R35: how long a Bluetooth headset whose sink went, while the headset stayed, has to
    /// show a sink of its new profile before the policy takes it for a loss (its profile
    /// turning off or the headset going decides at once).
    public var profileSwitchMilliseconds: UInt32 = 3000
    /// How often at most the module rewrites a key of its metadata: a state that changes
    /// again within this time is written once, as it stands at the end. Nothing waits
    /// around an event (an interruption's begin): the state held from before it is
    /// written first, and the state its decision leaves follows it at once. Not a policy
    /// decision: the policy's effects are the same; only how often they reach the metadata
    /// changes. 0 (the core's default) writes every change at once; the module sets 20 ms.
    public var publishIntervalMilliseconds: UInt32 = 0
    /// A session's published state is made when it is written, not with each decision:
    /// the policy emits `Effect.sessionChanged` for every session a decision touched, and
    /// `SessionPolicy.settledSnapshot(_:)` makes the state when the module writes it. A
    /// module that holds its writes for `publishIntervalMilliseconds` makes each state once
    /// an interval instead of once per event. Off (the core's default), every decision makes
    /// the states it touched and emits `publishSession` for those that changed.
    public var makesPublishedStateWhenWritten = false
    /// `media.role` -> rule (§1). Lookup is exact first, then case-insensitive.
    public var roleTable: [String: RoleRule] = RoleRule.defaultTable
    /// Port types that are private outputs (§8).
    public var privatePortTypes: Set<PortType> = [.headphones, .bluetoothA2DP, .bluetoothHFP, .bluetoothLE]
    /// `device.form-factor` values that are private outputs (§8), e.g. USB headsets.
    public var privateFormFactors: Set<FormFactor> = ["headphone", "headphones", "headset", "hands-free", "handset", "earbuds"]
    /// The clients granted call priority (R10), named by identity (`ClientIdentity.isNamed(by:)`:
    /// an executable path, `uid:<n>` or a Flatpak app id); empty = every client that is not sandboxed.
    public var callPriorityApplications: Set<String> = []
    /// The clients that may set the global switches (silent mode, screen lock), named like
    /// `callPriorityApplications`; empty = every client that is not sandboxed.
    public var controlApplications: Set<String> = []
    /// Applications the policy forbids to interrupt others (R6 `cannotInterruptOthers`). Default none.
    public var cannotInterruptApplications: Set<String> = []
    /// Priority of each class; higher wins (§5). Default call 30 > alarm 20 > prompt 10 > normal 0.
    public var priorities: [PriorityClass: Int] = [.call: 30, .alarm: 20, .prompt: 10, .normal: 0]
    /// Resume legacy streams paused by a private output's loss when it returns (R31). Default off.
    public var resumeLegacyOnDeviceReturn: Bool = false
    /// R17 alerts: mixed (default) or held back.
    public var alertsDuringPreferNoInterruptions: AlertPolicy = .mix
    /// R43: calls and recordings recognised from the graph (a program that captures a
    /// microphone while it plays). Default on; `calls.from-graph = false` turns it off.
    public var callsFromGraph: Bool = true
    /// R43: whether a program's output counts towards a call only once it carried sound
    /// (the module listens to it: `Effect.listen`). Off (the core's default), every running
    /// output counts; the module turns it on, and `calls.listen = false` turns it off.
    public var listensToOutputs: Bool = false
    /// R43: at most this many output streams of one program, and of all programs, are
    /// listened to at once; one beyond counts as sound, as without listening.
    public var listenedStreamsPerProgram: Int = 4
    public var listenedStreamsInAll: Int = 32
    /// The user the daemon runs as: MPRIS reports are accepted from this user's
    /// unsandboxed clients only; nil accepts none.
    public var daemonUserID: UInt32?

    public init() {}

    func priorityValue(_ p: PriorityClass) -> Int {
        priorities[p] ?? 0
    }

    func roleRule(_ role: MediaRole) -> RoleRule? {
        if let r = roleTable[role.rawValue] { return r }
        let lower = role.rawValue.lowercased()
        for key in roleTable.keys.sorted() where key.lowercased() == lower {
            return roleTable[key]
        }
        return nil
    }

    /// The rule for a stream without `media.role` (§1, last row).
    var noRoleRule: RoleRule {
        switch profile {
        case .desktop: return RoleRule(category: .playback, options: [.mixWithOthers])
        case .ios: return RoleRule(category: .soloAmbient)
        }
    }
}

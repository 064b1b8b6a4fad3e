/// What the module publishes for one session in the `audio-session` metadata:
/// the values an `AVAudioSession` reads back (`category`, `mode`,
/// `categoryOptions`, `currentRoute`, `secondaryAudioShouldBeSilencedHint`...).
public struct SessionSnapshot: Sendable, Equatable {
    public var category: Category
    public var mode: Mode
    /// Effective options (declared plus implied).
    public var options: CategoryOptions
    public var active: Bool
    /// Between `interruptionBegan` and `interruptionEnded`.
    public var interrupted: Bool
    public var interruptionReason: InterruptionReason?
    /// The policy's duck gain on the session's output (1 = not ducked).
    public var duckGain: Float
    /// The policy's softMute is on (R20, R21).
    public var silenced: Bool
    /// Output is flowing: active with a running, unpaused stream.
    public var isPlaying: Bool
    public var streams: [NodeID]
    /// `currentRoute`.
    public var route: Route
    /// A stream that declares nothing (its category comes from `media.role`).
    public var isLegacy: Bool
    /// `application.name` (or `application.process.binary`).
    public var applicationName: String?
    public var priority: PriorityClass
    public var prefersNoInterruptionsFromSystemAlerts: Bool
    public var prefersInterruptionOnRouteDisconnect: Bool
    /// The last `silenceSecondaryAudioHint` this session was told (R22).
    public var secondaryAudioShouldBeSilencedHint: Bool
    /// R34: where the session manager should place playAndRecord output
    /// (`builtInSpeaker` for defaultToSpeaker, `builtInReceiver` otherwise) when
    /// no private output is present; `nil` = no preference.
    public var preferredOutputPortType: PortType?
}

/// The state every session can read (`AVAudioSession.isOtherAudioPlaying`,
/// `secondaryAudioShouldBeSilencedHint`, the available route).
public struct GlobalSnapshot: Sendable, Equatable {
    /// Every sink (outputs) and source (inputs) present, in node order.
    public var currentRoute: Route
    public var silentMode: Bool
    public var screenLocked: Bool
    /// Some active output session plays (ambient included, R22). A client subtracts itself
    /// using `playingSessionCount` and its own `SessionSnapshot.isPlaying`.
    public var isOtherAudioPlaying: Bool
    /// Some non-mixable primary audio plays (R22).
    public var secondaryAudioShouldBeSilencedHint: Bool
    public var playingSessionCount: Int
    public var primaryAudioSessionCount: Int
}

/// A client as the policy knows it.
public struct ClientInfo: Sendable, Equatable {
    public var facts: ClientFacts
    /// The declaration in force (the last valid one), from the client properties.
    public var declaration: Declaration?
    public init(facts: ClientFacts, declaration: Declaration? = nil) {
        self.facts = facts
        self.declaration = declaration
    }
}

/// A stream node as the policy knows it.
public struct StreamInfo: Sendable, Equatable {
    public var client: ClientID
    public var direction: StreamDirection
    public var facts: StreamFacts
    /// The node runs (it is scheduled and not corked): a fact, as the module last reported
    /// it. No decision of the policy changes it; the module's report confirms a decision.
    public var running: Bool
    /// The policy paused it (and has not resumed it): a decision.
    public var pausedByPolicy: Bool
    /// The policy resumed it and the module has not reported it running yet: a decision
    /// waiting for its fact.
    public var resumedByPolicy: Bool
    /// The policy let go of its pause (the program paused itself: `streamReleasedToProgram`)
    /// while the module's pause still holds the node: the owner's next activation is still
    /// a request the policy answers (R16). Cleared by the policy's next pause or resume.
    public var pauseReleased: Bool = false
    /// The declaration in force from the stream's own properties.
    public var declaration: Declaration?
    /// The policy's duck gain currently applied (1 = none).
    public var duckGain: Float
    /// The policy's softMute currently applied.
    public var silenced: Bool
    /// The uid of the private output whose loss paused this stream (R31).
    public var lostOutput: String?
    /// The output the user chose for it (R33), if any.
    public var userChosenEndpoint: NodeID?
    /// Held paused while its Bluetooth headset switches profile (R35), until it is linked to
    /// a sink of the headset that suits its session.
    public var switchHold: SwitchHold?
    /// Where the policy's interruption fade (R42) holds the stream's gain: never set while
    /// the policy neither holds the stream paused nor has let go of its pause.
    public var fade: StreamFade = .none
    /// R43: the module listens to this output stream's level (`Effect.listen`), to tell a
    /// call's far end from the silence a program plays while it only records: a decision.
    public var listened: Bool = false
    /// R43: the stream has carried sound since its program began capturing a microphone (the
    /// module heard it: `Event.streamHeard`), or the policy could not listen to it and takes
    /// it as sound. Forgotten when the program stops capturing.
    public var heard: Bool = false

    public init(
        client: ClientID, direction: StreamDirection, facts: StreamFacts, running: Bool = false,
        pausedByPolicy: Bool = false, resumedByPolicy: Bool = false, declaration: Declaration? = nil, duckGain: Float = 1,
        silenced: Bool = false, lostOutput: String? = nil, userChosenEndpoint: NodeID? = nil
    ) {
        self.client = client
        self.direction = direction
        self.facts = facts
        self.running = running
        self.pausedByPolicy = pausedByPolicy
        self.resumedByPolicy = resumedByPolicy
        self.declaration = declaration
        self.duckGain = duckGain
        self.silenced = silenced
        self.lostOutput = lostOutput
        self.userChosenEndpoint = userChosenEndpoint
    }

    /// Whether the stream runs as the policy counts it: not held paused, and running or
    /// resumed by the policy (its decision counts until the module's report confirms it).
    public var runs: Bool { !pausedByPolicy && (running || resumedByPolicy) }
}

/// A stream held through its Bluetooth headset's profile switch (R35).
public struct SwitchHold: Sendable, Equatable {
    /// The headset.
    public var device: DeviceID
    /// It played (or its interruption ended with a resume meanwhile): the policy resumes it
    /// once it is on a sink of the headset that suits its session.
    public var resume: Bool
    public init(device: DeviceID, resume: Bool) {
        self.device = device
        self.resume = resume
    }
}

/// A Bluetooth headset's sink went while the headset stayed (R35): a switch of profile
/// (A2DP to hands-free and back) or a loss, which the headset's next report tells.
public struct ProfileSwitch: Sendable, Equatable {
    /// The window's timer: no sink of the headset and no word from it by then is a loss.
    /// nil once a new sink of the headset appeared: it switched.
    public var window: UInt64?
    /// The node name of the sink that went (a loss's `lostOutput`, R31).
    public var lostOutput: String
    /// Each held session's route before the switch (the previous route of what it is told).
    public var previous: [SessionID: Route]
    public init(window: UInt64?, lostOutput: String, previous: [SessionID: Route] = [:]) {
        self.window = window
        self.lostOutput = lostOutput
        self.previous = previous
    }
}

/// The policy's interruption fade on a stream (R42).
public enum StreamFade: Sendable, Equatable {
    /// No fade: the stream's gain is its duck gain.
    case none
    /// Its gain ramps to silence; the pause follows when the module reports silence
    /// (`Event.streamFadedOut`).
    case fadingOut
    /// Faded out (or paused at once mid-fade): the gain stays at silence until the stream
    /// plays again, when it ramps back in (`fadeInMilliseconds`).
    case silent
}

/// A sink or source.
public struct EndpointInfo: Sendable, Equatable {
    public var kind: EndpointKind
    public var facts: EndpointFacts { didSet { port = Self.port(kind, facts, route) } }
    /// The route active on it as last read (a card's port); nil when none was read.
    public var route: RouteReading? { didSet { port = Self.port(kind, facts, route) } }
    /// Its port: the active route's type, unless the device fixes it or the route names none.
    public private(set) var port: Port
    /// The name of the route whose loss (it became unavailable: a jack pulled out) the
    /// policy took for a loss of this node's port, until it is back.
    public var lostRoute: String?
    /// The device switched away from this node's private port (jack unplugged).
    public var portLost: Bool { lostRoute != nil }
    /// Source mute (R19).
    public var muted: Bool
    public init(kind: EndpointKind, facts: EndpointFacts, route: RouteReading? = nil, lostRoute: String? = nil, muted: Bool = false) {
        self.kind = kind
        self.facts = facts
        self.route = route
        self.port = Self.port(kind, facts, route)
        self.lostRoute = lostRoute
        self.muted = muted
    }

    static func port(_ kind: EndpointKind, _ facts: EndpointFacts, _ route: RouteReading?) -> Port {
        var p = facts.port
        if !facts.portTypeFixedByDevice, let type = route?.portType(kind) { p.type = type }
        return p
    }
}

/// The output stream of a virtual sink (a relay): a `Stream/Output/Audio` node that
/// shares its `node.link-group` with an `Audio/Sink`. PipeWire's loopback, filter-chain
/// and echo-cancel modules make such pairs (WirePlumber 0.5's role loopbacks are
/// loopbacks): what is played into the sink comes out of this stream. It is not an
/// application's stream: no session, never paused for long, never ducked; the route of a
/// stream playing into its sink is where this stream goes. (The policy does not pause it
/// when a private output behind it goes: the streams playing into the sink are paused
/// first, and with PipeWire 1.4 none of their audio reached the next output.)
public struct RelayInfo: Sendable, Equatable {
    public var client: ClientID
    /// `node.link-group`, shared with its sink.
    public var linkGroup: LinkGroup
    public var facts: StreamFacts

    public init(client: ClientID, linkGroup: LinkGroup, facts: StreamFacts) {
        self.client = client
        self.linkGroup = linkGroup
        self.facts = facts
    }
}

/// A link from an output node to an input node.
public struct LinkInfo: Sendable, Equatable, Hashable {
    public var output: NodeID
    public var input: NodeID
    public init(output: NodeID, input: NodeID) {
        self.output = output
        self.input = input
    }
}

/// Who or what interrupted a session.
public enum InterruptionCause: Sendable, Equatable, Hashable {
    /// Another session's activation (R1, R4, R10) or a refused activation (R6, R17).
    case session(SessionID)
    /// The source it captures from was muted (R19).
    case microphoneMuted(NodeID)
    /// A private output it played through was lost (R31).
    case routeDisconnected
}

/// An interruption between `began` and `ended`.
public struct InterruptionMark: Sendable, Equatable {
    public var cause: InterruptionCause
    public var reason: InterruptionReason
    /// The session was playing when interrupted (R14).
    public var wasPlaying: Bool
    /// The program paused itself meanwhile (R18).
    public var pausedItself: Bool
    /// `interruptionBegan` was delivered: false while the session's streams still fade out
    /// (R42: `began` follows the silence, R11). An interruption that ends before then is
    /// never told, neither its `began` nor its `ended`.
    public var beganTold: Bool
    public init(cause: InterruptionCause, reason: InterruptionReason, wasPlaying: Bool, pausedItself: Bool = false, beganTold: Bool = true) {
        self.cause = cause
        self.reason = reason
        self.wasPlaying = wasPlaying
        self.pausedItself = pausedItself
        self.beganTold = beganTold
    }
}

/// The policy's own record of one session.
public struct SessionMarks: Sendable, Equatable {
    public var active: Bool = false
    /// The last `audio.session.active` value seen (explicit activation).
    public var requestedActive: Bool?
    /// The last `audio.session.activation-request` counter seen with it.
    public var activationRequest: String?
    /// The route when the category last changed (R5): the next link that changes
    /// the route is reported as `routeChange(categoryChange)` from this route.
    public var routeBeforeCategoryChange: Route?
    public var interruption: InterruptionMark?
    /// The last `silenceSecondaryAudioHint` told (R22).
    public var hintTold: Bool = false
    /// The category chosen at activation for a Game stream (§1 table).
    public var adaptiveCategory: Category?
    public init() {}
}

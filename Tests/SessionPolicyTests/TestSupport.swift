@testable import SessionPolicy
import PipeWireFacts
import Testing

func C(_ raw: UInt32) -> ClientID { ClientID(raw) }
func N(_ raw: UInt32) -> NodeID { NodeID(raw) }
func L(_ raw: UInt32) -> LinkID { LinkID(raw) }

/// The decisions in an effect list: everything but publishing and the switch log
/// (publishing and switches have their own tests).
func decisions(_ effects: [Effect]) -> [Effect] {
    effects.filter {
        switch $0 {
        case .publishSession, .sessionChanged, .publishGlobal, .switchSet: return false
        default: return true
        }
    }
}

/// given / when / then over the policy.
struct World {
    var policy: SessionPolicy
    var clientProps: [ClientID: Properties] = [:]
    var streamProps: [NodeID: Properties] = [:]

    init(_ configure: (inout PolicyConfiguration) -> Void = { _ in }) {
        var config = PolicyConfiguration()
        configure(&config)
        policy = SessionPolicy(configuration: config)
    }

    /// Runs events; returns all effects. After every event the index must equal one rebuilt
    /// from the model, every table of it.
    @discardableResult
    mutating func when(_ events: Event...) -> [Effect] {
        run(events)
    }

    /// Runs events; returns the decisions (no publishing).
    mutating func decide(_ events: Event...) -> [Effect] {
        decisions(run(events))
    }

    mutating func run(_ events: [Event], sourceLocation: SourceLocation = #_sourceLocation) -> [Effect] {
        var out: [Effect] = []
        for e in events {
            out += policy.handle(e)
            let consistent = policy.indexIsConsistent()
            #expect(consistent, "after \(e): \(policy.indexDifferences())", sourceLocation: sourceLocation)
        }
        return out
    }

    // MARK: given

    /// A client; the identity the module would establish for it is read from the test's
    /// `IdentityKey` properties (`ClientIdentity(testProperties:)`).
    mutating func client(_ c: UInt32, _ props: Properties = [:]) {
        clientProps[C(c)] = props
        when(.clientAdded(C(c), props, identity: ClientIdentity(testProperties: props)))
    }

    /// A declared client: category/mode/options as given.
    /// A client that declares on its own connection. By default it is a client of the
    /// AudioSession library (`audio.session.library`), which resumes itself (R15);
    /// `library: false` is a wrapped program whose declaration reached its client
    /// (PULSE_PROP), which the policy resumes.
    mutating func declared(_ c: UInt32, _ category: String, mode: String? = nil, options: String? = nil,
                           library: Bool = true, extra: Properties = [:]) {
        var props = extra
        if library { props["audio.session.library"] = "1" }
        props["audio.session.category"] = category
        if let mode { props["audio.session.mode"] = mode }
        if let options { props["audio.session.options"] = options }
        client(c, props)
    }

    /// A stream (no props of its own unless given).
    mutating func stream(_ n: UInt32, client c: UInt32, _ direction: StreamDirection = .output, _ props: Properties = [:]) {
        if clientProps[C(c)] == nil { client(c) }
        streamProps[N(n)] = props
        when(.streamAdded(N(n), client: C(c), direction: direction, props))
    }

    /// A legacy stream with a media.role.
    mutating func legacy(_ n: UInt32, client c: UInt32, role: String?, _ direction: StreamDirection = .output) {
        var props: Properties = ["application.name": "app\(c)"]
        if let role { props["media.role"] = role }
        stream(n, client: c, direction, props)
    }

    mutating func play(_ n: UInt32) { when(.streamRunning(N(n), true)) }

    /// Merged client property change (what pw_core_update_properties does).
    mutating func set(_ c: UInt32, _ changes: Properties) -> [Effect] {
        var props = clientProps[C(c)] ?? [:]
        for (k, v) in changes { props[k] = v }
        clientProps[C(c)] = props
        return decisions(when(.clientChanged(C(c), props)))
    }

    mutating func activate(_ c: UInt32) -> [Effect] { set(c, ["audio.session.active": "true"]) }
    mutating func deactivate(_ c: UInt32, notifyOthers: Bool) -> [Effect] {
        set(c, ["audio.session.active": "false", "audio.session.deactivation": notifyOthers ? "notifyOthersOnDeactivation" : "none"])
    }

    mutating func sink(_ e: UInt32, _ props: Properties) { when(.endpointAdded(N(e), kind: .sink, props)) }
    mutating func source(_ e: UInt32, _ props: Properties) { when(.endpointAdded(N(e), kind: .source, props)) }
    mutating func link(_ l: UInt32, _ from: UInt32, _ to: UInt32) { when(.linkAdded(L(l), output: N(from), input: N(to))) }

    func session(_ s: SessionID) -> SessionSnapshot? { policy.sessions[s] }
}

let headphonesProps: Properties = [
    "node.name": "headphones", "node.description": "Headphones", "device.form-factor": "headphones",
    "media.class": "Audio/Sink",
]
let speakerProps: Properties = [
    "node.name": "speaker", "node.description": "Speaker", "device.form-factor": "internal", "device.api": "alsa",
    "media.class": "Audio/Sink",
]
let micProps: Properties = [
    "node.name": "mic", "node.description": "Microphone", "device.form-factor": "internal", "device.api": "alsa",
    "media.class": "Audio/Source",
]
let headphonesPort = Port(name: "Headphones", uid: "headphones", type: .headphones)
let speakerPort = Port(name: "Speaker", uid: "speaker", type: .builtInSpeaker)

func began(_ s: SessionID, _ reason: InterruptionReason = .default) -> Effect { .notify(s, .interruptionBegan(reason: reason)) }
func ended(_ s: SessionID, resume: Bool) -> Effect { .notify(s, .interruptionEnded(shouldResume: resume)) }
func activated(_ s: SessionID, _ warning: ActivationWarning? = nil) -> Effect { .notify(s, .activationResult(.success(warning))) }
func refused(_ s: SessionID, _ code: SessionErrorCode) -> (Effect) -> Bool {
    { effect in
        if case .notify(s, .activationResult(.failure(let e))) = effect { return e.code == code }
        return false
    }
}
func legacyS(_ n: UInt32) -> SessionID { .stream(N(n)) }

/// Silent mode and the screen lock as a permitted client sets them (R20): one the policy has
/// no record of, so without an identity, trusted as when the policy is driven directly
/// (`SwitchTests` has who may not).
let switchClient = C(9_000)
func silent(_ on: Bool) -> Event { .switchesRequested(switchClient, SwitchRequest(silentMode: on)) }
func locked(_ on: Bool) -> Event { .switchesRequested(switchClient, SwitchRequest(screenLock: on)) }
func clientS(_ c: UInt32) -> SessionID { .client(C(c)) }

/// A card's sink and its headphone jack, as the module reads the card's routes.
extension Event {
    /// The headphone port read as the sink's active route.
    static func headphonePortRead(_ e: NodeID) -> Event {
        .endpointRoutesRead(e, RouteReading(name: "analog-output-headphones", portType: "headphones", availability: .yes, unavailable: []))
    }
    /// Jack out: the headphone port unavailable, the card already on its speaker port.
    static func headphonePortLost(_ e: NodeID) -> Event {
        .endpointRoutesRead(e, RouteReading(
            name: "analog-output-speaker", portType: "speaker", availability: .yes, unavailable: ["analog-output-headphones"]))
    }
    /// Jack back in: the headphone port active and available again.
    static func headphonePortRestored(_ e: NodeID) -> Event { headphonePortRead(e) }
}

extension PolicyConfiguration {
    /// The module's fades (R42): 300 ms out, 500 ms in.
    static var moduleFades: PolicyConfiguration {
        var c = PolicyConfiguration()
        c.fadeOutMilliseconds = 300
        c.fadeInMilliseconds = 500
        return c
    }
}

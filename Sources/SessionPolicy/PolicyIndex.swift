/// Everything the policy derives from its model so that one event costs the same whatever
/// the number of sessions: a client's streams in node order, links by node, each stream's
/// route, cached traits, the activity sets and each session's membership of them.
///
/// Nothing here is truth: `PolicyState.rebuilt(from:configuration:)` recomputes all of it
/// from a `PolicyModel`, and `PolicyState.agreesWithRebuild()` (tests, after every event)
/// compares the index an event sequence left with that recomputation, table for table. The
/// index changes only inside `PolicyState`'s mutators, which keep it in step with the model.
struct PolicyIndex: Equatable {
    var streamsOfClient: [ClientID: NodeList] = [:]
    /// Each program's streams (R43: a PulseAudio program's streams come from several clients).
    var streamsOfProgram: [ProgramKey: NodeList] = [:]
    /// What each program's streams do (R43), counted so that one stream's change is O(1).
    var activityOfProgram: [ProgramKey: ProgramActivity] = [:]
    /// The output streams the module listens to (R43, `StreamInfo.listened`).
    var listened: Set<NodeID> = []
    /// The client's streams whose own properties carry an `audio.session.*` key (the only
    /// ones that can declare, ask activation or ask to notify others), in node order.
    var declaringStreamsOfClient: [ClientID: NodeList] = [:]
    var linksOfNode: [NodeID: Set<LinkID>] = [:]
    /// The sinks with a `node.link-group`, by group, and the relay of each group.
    var sinksOfGroup: [LinkGroup: Set<NodeID>] = [:]
    var relayOfGroup: [LinkGroup: NodeID] = [:]
    /// Each stream's own route (the endpoints its links reach), kept up to date by every
    /// change of links, endpoints or streams (`refreshRoute(ofStream:)`): a session with one
    /// stream publishes it without walking links and endpoints again.
    var streamRoutes: [NodeID: Route] = [:]
    /// The endpoints of each stream's cached route, and for each client how many of its
    /// streams reach each endpoint: a session of many streams publishes its merged route
    /// from these counts, without walking every stream's links.
    var streamEndpoints: [NodeID: StreamEndpoints] = [:]
    var endpointsOfClient: [ClientID: EndpointCounts] = [:]
    /// For each client, how many of its output streams are at each gain and silence: one
    /// entry means every output stream is at it (`uniformGains`), so a session of many
    /// streams is neither re-walked for its gains nor for its published duckGain and silence.
    var gainsOfClient: [ClientID: [UniformGains: Int]] = [:]
    /// The clients whose streams form one session (they declare).
    var declaredClients: Set<ClientID> = []
    /// The sessions each cause keeps interrupted.
    var victimsOf: [InterruptionCause: Set<SessionID>] = [:]
    var active: Set<SessionID> = []
    var activeNonMixable: Set<SessionID> = []
    var activeCalls: Set<SessionID> = []
    var activeDuckers: Set<SessionID> = []
    var activeRecorders: Set<SessionID> = []
    var activeNoAlerts: Set<SessionID> = []
    var playing: Set<SessionID> = []
    var primary: Set<SessionID> = []
    /// Which of the sets above each session is in (one lookup decides what to change).
    var membership: [SessionID: Membership] = [:]
    /// Each session's traits as its properties make them, recomputed only when the
    /// properties, declarations or stream set of its client change (`refreshDerived(ofClient:)`).
    var derived: [SessionID: DerivedTraits] = [:]
    /// Every endpoint present, as the global `currentRoute` publishes it.
    var availableRoute = Route()
    /// The private outputs present (`isPrivateOutput`): while there is one, no
    /// playAndRecord session prefers the built-in receiver or speaker.
    var privateOutputs: Set<NodeID> = []

    /// The gain and silence every output stream of the client is at; nil when they differ
    /// or it has none.
    func uniformGains(_ c: ClientID) -> UniformGains? {
        guard let counts = gainsOfClient[c], counts.count == 1 else { return nil }
        return counts.keys.first
    }
}

/// A client's streams, kept sorted by node (the order effects are emitted in), so reading
/// them in order needs no sort and no new array.
struct NodeList: Sequence, Equatable, ExpressibleByArrayLiteral {
    private(set) var nodes: [NodeID] = []

    init(arrayLiteral elements: NodeID...) {
        for n in elements { insert(n) }
    }

    var isEmpty: Bool { nodes.isEmpty }
    var first: NodeID? { nodes.first }

    /// The first index whose node is not below `n` (binary search).
    private func lowerBound(_ n: NodeID) -> Int {
        var low = 0
        var high = nodes.count
        while low < high {
            let mid = low + (high - low) / 2
            if nodes[mid] < n { low = mid + 1 } else { high = mid }
        }
        return low
    }

    func contains(_ n: NodeID) -> Bool {
        let i = lowerBound(n)
        return i < nodes.count && nodes[i] == n
    }

    @discardableResult
    mutating func insert(_ n: NodeID) -> Bool {
        let i = lowerBound(n)
        if i < nodes.count && nodes[i] == n { return false }
        nodes.insert(n, at: i)
        return true
    }

    @discardableResult
    mutating func remove(_ n: NodeID) -> NodeID? {
        let i = lowerBound(n)
        guard i < nodes.count && nodes[i] == n else { return nil }
        nodes.remove(at: i)
        return n
    }

    /// Already in order: no sort, no copy of the storage.
    func sorted() -> [NodeID] { nodes }

    func makeIterator() -> IndexingIterator<[NodeID]> { nodes.makeIterator() }
}

/// The activity sets a session belongs to (`active`, `activeNonMixable`, ...).
struct Membership: OptionSet, Equatable {
    var rawValue: UInt8
    static let active = Membership(rawValue: 1 << 0)
    static let nonMixable = Membership(rawValue: 1 << 1)
    static let call = Membership(rawValue: 1 << 2)
    static let ducker = Membership(rawValue: 1 << 3)
    static let recorder = Membership(rawValue: 1 << 4)
    static let noAlerts = Membership(rawValue: 1 << 5)
    static let playing = Membership(rawValue: 1 << 6)
    static let primary = Membership(rawValue: 1 << 7)
}

/// A session's traits as its properties make them (§1-4), cached per session.
struct DerivedTraits: Equatable {
    /// For a legacy session, with its role's own category: a Game's category chosen at
    /// activation (`SessionMarks.adaptiveCategory`) is applied when read.
    var traits: SessionTraits
    /// The options as declared (or as the role gives them), before implied ones.
    var declaredOptions: CategoryOptions
    /// The name published in the session's snapshot.
    var applicationName: String?
    /// §1 Game: ambient when other audio already plays at activation.
    var ambientWhenOtherAudioPlays: Bool

    /// The traits with the category chosen at activation applied (a Game stream's
    /// adaptive category, §1), when it differs from the declared one. A stream whose role
    /// no longer adapts (it stopped being a Game) has its role's own category.
    func adapted(to adaptive: Category?) -> SessionTraits {
        var t = traits
        if ambientWhenOtherAudioPlays, let adaptive, adaptive != t.category {
            t.category = adaptive
            t.options = Declaration(category: adaptive, mode: t.mode, options: declaredOptions).effectiveOptions
        }
        return t
    }
}

extension SessionPolicy {
    /// The index's members whose description differs from a rebuilt index's, for a failing
    /// test's message (a dictionary's description depends on its order, so this may list
    /// members that are equal; `indexIsConsistent` is the check).
    func indexDifferences() -> [String] {
        let rebuilt = Mirror(reflecting: PolicyState.rebuilt(from: state.model, configuration: configuration)).children
        var out: [String] = []
        for (mine, theirs) in zip(Mirror(reflecting: state.index).children, rebuilt) where "\(mine.value)" != "\(theirs.value)" {
            out.append("\(mine.label ?? "?"): \(mine.value) vs \(theirs.value)")
        }
        return out
    }
}

/// A session's streams, in order (`streamsOf`): a declaring client's list as the index keeps
/// it, or a legacy session's one node, for which no array is made (the session's events
/// would otherwise allocate and free one each time they walk its streams).
struct SessionStreams: Sequence {
    private let nodes: [NodeID]
    private let single: NodeID?

    init(nodes: [NodeID]) {
        self.nodes = nodes
        self.single = nil
    }

    init(single: NodeID?) {
        self.nodes = []
        self.single = single
    }

    var first: NodeID? { single ?? nodes.first }

    func makeIterator() -> Iterator { Iterator(nodes: nodes.makeIterator(), single: single) }

    struct Iterator: IteratorProtocol {
        var nodes: IndexingIterator<[NodeID]>
        var single: NodeID?

        mutating func next() -> NodeID? {
            if let n = single {
                single = nil
                return n
            }
            return nodes.next()
        }
    }
}

import SessionPolicy

/// The graph's links as the policy reads them: which node feeds which. PipeWire links
/// audio port by port, so a stereo stream reaches its sink by two links and a 5.1 one by
/// six; the policy follows routes, not channels. Each pair of nodes reaches it once, by
/// its first link's id, and leaves with its last link: a stereo stream's start and end
/// cost one decision each instead of two. Part of the translation of the graph, not a
/// decision: the policy would conclude the same from every link.
struct NodeLinks {
    struct Pair: Hashable {
        var output: NodeID
        var input: NodeID
    }

    /// What the policy hears of a change of the graph's links.
    enum Told: Equatable {
        /// Nothing: another link of the same two nodes stands.
        case nothing
        /// The pair's first link: the policy hears of it by this link.
        case linked(LinkID, Pair)
        /// The pair's last link went: the policy forgets it by the link it knew it by.
        case unlinked(LinkID)
        /// The daemon gave the id the policy knows a standing pair by to a new link: the
        /// policy hears of the pair by one of its own links first, then forgets the old id.
        case moved(to: LinkID, Pair, from: LinkID)
    }

    struct Links {
        /// The link the policy knows the pair by; it may have gone while others stand.
        var told: LinkID
        /// The pair's links in the graph now.
        var live: [LinkID]
    }

    /// Per pair of nodes, its links.
    private(set) var pairs: [Pair: Links] = [:]
    /// Per link in the graph, the nodes it joins.
    private(set) var links: [LinkID: Pair] = [:]
    /// Links that went while their pair stands, by which the policy still knows the pair.
    /// A stream's links go in the order they came, so the one the policy knows goes first:
    /// telling it of another one then would cost as much as following every link.
    private(set) var retired: [LinkID: Pair] = [:]

    /// A link was made. A link id seen again without its removal counts as the old link
    /// gone first.
    mutating func add(_ l: LinkID, _ pair: Pair) -> (gone: Told, added: Told) {
        var gone = links[l] != nil ? remove(l) : .nothing
        if let known = retired.removeValue(forKey: l), let i = pairs.index(forKey: known),
           let standing = pairs.values[i].live.first {
            pairs.values[i].told = standing
            gone = .moved(to: standing, known, from: l)
        }
        links[l] = pair
        if let i = pairs.index(forKey: pair) {
            pairs.values[i].live.append(l)
            return (gone, .nothing)
        }
        pairs[pair] = Links(told: l, live: [l])
        return (gone, .linked(l, pair))
    }

    /// A link went; an id never added tells nothing.
    mutating func remove(_ l: LinkID) -> Told {
        guard let pair = links.removeValue(forKey: l), let i = pairs.index(forKey: pair) else { return .nothing }
        pairs.values[i].live.removeAll { $0 == l }
        let told = pairs.values[i].told
        guard pairs.values[i].live.isEmpty else {
            if told == l { retired[l] = pair }
            return .nothing
        }
        pairs.remove(at: i)
        if told != l { retired.removeValue(forKey: told) }
        return .unlinked(told)
    }

    /// Storage for what the tables hold, after a crowd of links has gone.
    mutating func shrinkIfSparse() {
        pairs.shrinkIfSparse()
        links.shrinkIfSparse()
        retired.shrinkIfSparse()
    }
}

extension ModuleCore {
    /// A link of the graph (port to port) was made: the policy hears of its pair of nodes.
    public func portLinkAdded(_ l: LinkID, output: NodeID, input: NodeID) {
        let told = nodeLinks.add(l, NodeLinks.Pair(output: output, input: input))
        tell(told.gone)
        tell(told.added)
    }

    /// A link of the graph went: the policy hears of it when it was its pair's last.
    public func portLinkRemoved(_ l: LinkID) {
        tell(nodeLinks.remove(l))
        nodeLinks.shrinkIfSparse()
    }

    /// The pairs of nodes the graph's links join now, as the policy hears of them.
    public var linkedNodePairs: Int { nodeLinks.pairs.count }

    private func tell(_ told: NodeLinks.Told) {
        switch told {
        case .nothing:
            break
        case .linked(let l, let pair):
            handle(.linkAdded(l, output: pair.output, input: pair.input))
        case .unlinked(let l):
            handle(.linkRemoved(l))
        case .moved(let to, let pair, let from):
            handle(.linkAdded(to, output: pair.output, input: pair.input))
            handle(.linkRemoved(from))
        }
    }
}

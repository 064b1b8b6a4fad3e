/// Virtual sinks and their output streams (relays): PipeWire's loopback, filter-chain and
/// echo-cancel modules, and WirePlumber 0.5's role-based policy built on loopbacks.
///
/// Such a module makes two nodes that share a `node.link-group`: a sink (`Audio/Sink`)
/// that applications play into, and a stream (`Stream/Output/Audio`) that carries what
/// the sink receives on to a real output. PipeWire schedules a link group together and
/// WirePlumber finds a loopback's stream by it; the policy uses the same fact.
///
/// The relay is not an application's stream: it has no session, is never ducked (the
/// streams playing into its sink are), and is never left paused. The route of a stream
/// playing into the sink is the route of the relay (followed through chained virtual
/// sinks, `maxRelayDepth` deep), so the loss of a private output behind a loopback pauses
/// the application streams that play into the loopback.
extension PolicyReading {
    /// How many virtual sinks a route is followed through.
    static var maxRelayDepth: Int { 4 }

    static func linkGroup(_ group: LinkGroup?) -> LinkGroup? {
        guard let g = group, !g.rawValue.isEmpty else { return nil }
        return g
    }

    /// The link group of a stream that is a relay: an output stream whose
    /// `node.link-group` is a present sink's.
    func relayGroup(direction: StreamDirection, _ facts: StreamFacts) -> LinkGroup? {
        guard direction == .output, let g = Self.linkGroup(facts.linkGroup), index.sinksOfGroup[g]?.isEmpty == false else { return nil }
        return g
    }

    /// The relay behind a sink, when the sink is a virtual sink whose output stream is known.
    func relay(ofSink e: NodeID) -> NodeID? {
        guard let ep = model.endpoints[e], ep.kind == .sink, let g = Self.linkGroup(ep.facts.linkGroup) else { return nil }
        return index.relayOfGroup[g]
    }

    /// The streams linked to the endpoint, directly or through virtual sinks whose relay
    /// is linked to it.
    func streamsLinked(to e: NodeID) -> Set<NodeID> {
        var out: Set<NodeID> = []
        var seen: Set<NodeID> = []
        collectStreams(linkedTo: e, depth: 0, seen: &seen, into: &out)
        return out
    }

    private func collectStreams(linkedTo e: NodeID, depth: Int, seen: inout Set<NodeID>, into out: inout Set<NodeID>) {
        guard seen.insert(e).inserted else { return }
        for l in index.linksOfNode[e] ?? [] {
            guard let link = model.links[l] else { continue }
            let other = link.output == e ? link.input : link.output
            if model.streams[other] != nil {
                out.insert(other)
            } else if link.input == e, let r = model.relays[other], depth < Self.maxRelayDepth {
                for sink in index.sinksOfGroup[r.linkGroup] ?? [] {
                    collectStreams(linkedTo: sink, depth: depth + 1, seen: &seen, into: &out)
                }
            }
        }
    }

    /// Whether audio played into sink `e` reaches `output` (through virtual sinks).
    func reaches(_ e: NodeID, _ output: NodeID) -> Bool {
        var outs: [(NodeID, Port)] = []
        collectOutputs(through: e, excluding: nil, depth: 0, outs: &outs)
        return outs.contains { $0.0 == output }
    }

    /// The outputs an output stream reaches by playing into sink `e`: `e` itself, or for a
    /// virtual sink, what its relay is linked to (nothing while it is linked nowhere).
    func collectOutputs(through e: NodeID, excluding: NodeID?, depth: Int, outs: inout [(NodeID, Port)]) {
        guard e != excluding, let ep = model.endpoints[e] else { return }
        guard let r = relay(ofSink: e), depth < Self.maxRelayDepth else {
            outs.append((e, ep.port))
            return
        }
        for l in index.linksOfNode[r] ?? [] {
            guard let link = model.links[l], link.output == r else { continue }
            collectOutputs(through: link.input, excluding: excluding, depth: depth + 1, outs: &outs)
        }
    }
}

extension PolicyStep {
    /// A new relay. Streams already playing into its sink now reach what it reaches.
    mutating func relayAdded(_ n: NodeID, client c: ClientID, group: LinkGroup, _ facts: StreamFacts) {
        state.setRelay(n, RelayInfo(client: c, linkGroup: group, facts: facts))
        touchStreams(behindRelay: n)
    }

    /// The relay's node is gone.
    mutating func relayRemoved(_ n: NodeID) {
        guard let r = model.relays[n] else { return }
        for l in (index.linksOfNode[n] ?? []).sorted() { removeLink(l) }
        state.setRelay(n, nil)
        for e in (index.sinksOfGroup[r.linkGroup] ?? []).sorted() { for s in sessionsLinked(to: e) { touched.insert(s) } }
    }

    /// A sink with a link group appeared after the output stream of its group: the stream,
    /// tracked as an application stream so far, becomes the sink's relay. Its links are kept;
    /// whatever the policy did to it (a pause, a duck) is undone.
    mutating func adoptRelays(ofSink e: NodeID) {
        guard let ep = model.endpoints[e], ep.kind == .sink, let g = Self.linkGroup(ep.facts.linkGroup), index.relayOfGroup[g] == nil else {
            return
        }
        for n in model.streams.keys.sorted() {
            guard let st = model.streams[n], st.direction == .output, Self.linkGroup(st.facts.linkGroup) == g else { continue }
            let kept = (index.linksOfNode[n] ?? []).sorted().compactMap { l in model.links[l].map { (l, $0) } }
            if st.pausedByPolicy { emit(.resume(n)) }
            if st.duckGain != 1 { emit(.duck(n, gain: 1, rampMilliseconds: 0)) }
            if st.silenced { emit(.silence(n, false)) }
            streamRemoved(n)
            for (l, link) in kept { state.setLink(l, link) }
            relayAdded(n, client: st.client, group: g, st.facts)
            return
        }
    }

    /// Marks the sessions of the streams playing into the relay's sink(s): the relay was
    /// linked or unlinked, so their routes changed (`PolicyState` recomputed them).
    mutating func touchStreams(behindRelay n: NodeID) {
        guard let r = model.relays[n] else { return }
        for e in (index.sinksOfGroup[r.linkGroup] ?? []).sorted() {
            for s in sessionsLinked(to: e) { touched.insert(s) }
        }
    }
}

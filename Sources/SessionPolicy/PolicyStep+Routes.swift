/// Routes (§8: R30-R34). `AVAudioSession.currentRoute`, `routeChangeNotification`.

/// The distinct endpoints a stream's cached route reaches, in node order.
struct StreamEndpoints: Equatable {
    var outputs: [NodeID] = []
    var inputs: [NodeID] = []
}

/// For one client, how many of its streams reach each endpoint.
struct EndpointCounts: Equatable {
    var outputs: [NodeID: Int] = [:]
    var inputs: [NodeID: Int] = [:]
    var isEmpty: Bool { outputs.isEmpty && inputs.isEmpty }
}

extension PolicyReading {
    /// A private output: a sink whose port type or form factor is in the configured list.
    func isPrivateOutput(_ e: NodeID) -> Bool {
        guard let ep = model.endpoints[e], ep.kind == .sink, !ep.portLost else { return false }
        if configuration.privatePortTypes.contains(ep.port.type) { return true }
        if let ff = ep.facts.formFactor, configuration.privateFormFactors.contains(ff) { return true }
        return false
    }

    /// The session's route: sinks its output streams feed, sources its input streams read.
    /// `excluding` leaves out a lost endpoint.
    func route(_ s: SessionID, excluding: NodeID? = nil) -> Route {
        // Endpoints collected with their ports (one lookup each), then put in node order.
        var outs: [(NodeID, Port)] = []
        var ins: [(NodeID, Port)] = []
        func visit(_ n: NodeID) {
            guard let st = model.streams[n] else { return }
            collectRoute(n, st, excluding: excluding, outs: &outs, ins: &ins)
        }
        switch s {
        case .client(let c): for n in index.streamsOfClient[c] ?? [] { visit(n) }
        case .stream(let n): visit(n)
        }
        return Route(inputs: Self.portsInNodeOrder(&ins), outputs: Self.portsInNodeOrder(&outs))
    }

    /// The stream's own route, as `route(_:)` finds it for a session of that stream alone,
    /// and the endpoints it reaches.
    func computeStreamRoute(_ n: NodeID, _ st: StreamInfo) -> (route: Route, reached: StreamEndpoints) {
        var outs: [(NodeID, Port)] = []
        var ins: [(NodeID, Port)] = []
        collectRoute(n, st, excluding: nil, outs: &outs, ins: &ins)
        var reached = StreamEndpoints()
        let route = Route(
            inputs: Self.portsInNodeOrder(&ins, ids: &reached.inputs), outputs: Self.portsInNodeOrder(&outs, ids: &reached.outputs))
        return (route, reached)
    }

    /// The merged route of all the client's streams (as `route(.client(c))` finds it), from
    /// its endpoint counts: one lookup per distinct endpoint.
    func clientRoute(_ c: ClientID) -> Route {
        guard let counts = index.endpointsOfClient[c] else { return Route() }
        func ports(_ reached: [NodeID: Int]) -> [Port] {
            if reached.isEmpty { return [] }
            return reached.keys.sorted().compactMap { model.endpoints[$0]?.port }
        }
        return Route(inputs: ports(counts.inputs), outputs: ports(counts.outputs))
    }

    /// The endpoints a stream is linked to: sinks it feeds (output; for a virtual sink, the
    /// outputs its relay feeds), sources it reads (input).
    func collectRoute(_ n: NodeID, _ st: StreamInfo, excluding: NodeID?, outs: inout [(NodeID, Port)], ins: inout [(NodeID, Port)]) {
        for l in index.linksOfNode[n] ?? [] {
            guard let link = model.links[l] else { continue }
            if st.direction == .output, link.output == n {
                collectOutputs(through: link.input, excluding: excluding, depth: 0, outs: &outs)
            } else if st.direction == .input, link.input == n, link.output != excluding, let ep = model.endpoints[link.output] {
                ins.append((link.output, ep.port))
            }
        }
    }

    /// The ports of distinct endpoints, in node order, and those endpoints in `ids`.
    static func portsInNodeOrder(_ found: inout [(NodeID, Port)], ids: inout [NodeID]) -> [Port] {
        if found.isEmpty { return [] }
        if found.count > 1 { found.sort { $0.0 < $1.0 } }
        var out: [Port] = []
        out.reserveCapacity(found.count)
        ids.reserveCapacity(found.count)
        var last: NodeID?
        for (e, port) in found where e != last {
            last = e
            out.append(port)
            ids.append(e)
        }
        return out
    }

    /// The ports of distinct endpoints, in node order.
    static func portsInNodeOrder(_ found: inout [(NodeID, Port)]) -> [Port] {
        var ids: [NodeID] = []
        return portsInNodeOrder(&found, ids: &ids)
    }

    /// Sessions with a stream linked to or from the node (directly or through virtual
    /// sinks), in order.
    func sessionsLinked(to e: NodeID) -> [SessionID] {
        var out: Set<SessionID> = []
        for n in streamsLinked(to: e) {
            if let s = sessionOf(n) { out.insert(s) }
        }
        return out.sorted()
    }

    /// Every endpoint present (published as the global `currentRoute`), in node order.
    func availableRoute() -> Route {
        var r = Route()
        for e in model.endpoints.keys.sorted() {
            guard let ep = model.endpoints[e] else { continue }
            if ep.kind == .sink { r.outputs.append(ep.port) } else { r.inputs.append(ep.port) }
        }
        return r
    }

    /// R34: where playAndRecord output belongs when no private output is present.
    func preferredOutput(_ t: SessionTraits) -> PortType? {
        guard t.category == .playAndRecord else { return nil }
        guard index.privateOutputs.isEmpty else { return nil }
        if t.options.contains(.defaultToSpeaker) { return .builtInSpeaker }
        return .builtInReceiver
    }
}

extension PolicyStep {
    mutating func endpointAdded(_ e: NodeID, kind: EndpointKind, _ facts: EndpointFacts) {
        // The routes read before the node existed give its port; a re-announced node keeps
        // the port last read.
        let route = model.earlyRoutes[e] ?? model.endpoints[e]?.route
        if model.earlyRoutes[e] != nil { state.setEarlyRoute(e, nil) }
        state.setEndpoint(e, EndpointInfo(kind: kind, facts: facts, route: route))
        adoptRelays(ofSink: e)
        // Streams linked to it before it was announced (again) reach it now.
        for s in sessionsLinked(to: e) { touched.insert(s) }
        // A headset's sink of its next profile is no new device (R35).
        if !profileSwitchSinkAppeared(e) { deviceArrived(e) }
    }

    mutating func endpointChanged(_ e: NodeID, _ facts: EndpointFacts) {
        guard model.endpoints[e] != nil else { return }
        state.updateEndpoint(e) { $0.facts = facts }
        adoptRelays(ofSink: e)
        for s in sessionsLinked(to: e) { touched.insert(s) }
    }

    mutating func endpointRemoved(_ e: NodeID) {
        state.setEarlyRoute(e, nil)
        guard let ep = model.endpoints[e] else { return }
        if isPrivateOutput(e) {
            // A Bluetooth headset that stays may be switching profile (R35): held, not lost.
            if let d = switchingDevice(ep) { holdForProfileSwitch(e, device: d) } else { privateOutputLost(e) }
        }
        for s in sessionsLinked(to: e) { touched.insert(s) }
        for l in (index.linksOfNode[e] ?? []).sorted() { removeLink(l) }
        state.setEndpoint(e, nil)
        // A removed source cannot be unmuted: its mute interruptions end without resume.
        endInterruptions(causedBy: .microphoneMuted(e), resumable: false)
    }

    /// The endpoint's port (the route named `route`) became unavailable: for a private
    /// output, a loss (R30).
    mutating func portLost(_ e: NodeID, route: String) {
        guard let ep = model.endpoints[e], !ep.portLost else { return }
        if isPrivateOutput(e) { privateOutputLost(e) }
        state.updateEndpoint(e) { $0.lostRoute = route }
        for s in sessionsLinked(to: e) { touched.insert(s) }
    }

    /// The lost port is active and available again (`reading`): `newDeviceAvailable`
    /// (R32), no automatic resume (R31).
    mutating func portRestored(_ e: NodeID, _ reading: RouteReading) {
        guard model.endpoints[e] != nil else { return }
        // Streams still linked to it now go to the restored port: their routes change.
        state.updateEndpoint(e) { ep in
            ep.route = reading
            ep.lostRoute = nil
        }
        for s in sessionsLinked(to: e) { touched.insert(s) }
        deviceArrived(e)
    }

    /// R30/R31: a private output disappeared. Exactly the streams that were playing
    /// through it are paused first (zero samples elsewhere), then each affected session
    /// hears `routeChange(.oldDeviceUnavailable)` and, where preferred,
    /// `interruptionBegan(.routeDisconnected)`. A stream the user moved elsewhere is not affected (R33).
    mutating func privateOutputLost(_ e: NodeID) {
        guard let uid = model.endpoints[e]?.port.uid else { return }
        // A stream still fading out for an interruption is playing too (R42).
        let nodes = streamsPlaying(into: e) { $0.runs || $0.fade == .fadingOut }
        guard !nodes.isEmpty else { return }
        let sessions = Set(nodes.compactMap { sessionOf($0) }).sorted()
        var previous: [SessionID: Route] = [:]
        for s in sessions { previous[s] = route(s) }
        for n in nodes {
            pause(n)
            state.updateStream(n) { $0.lostOutput = uid }
        }
        for s in sessions {
            sessionLostOutput(s, previous: previous[s] ?? Route(), current: route(s, excluding: e))
        }
    }

    /// The managed output streams that play into `e` (or into a virtual sink, a loopback, whose
    /// relay plays into it) and are `selected`, in node order. A stream the user placed
    /// elsewhere is not among them (R33).
    func streamsPlaying(into e: NodeID, _ selected: (StreamInfo) -> Bool) -> [NodeID] {
        var found: [NodeID] = []
        for n in streamsLinked(to: e) {
            guard let st = model.streams[n], st.direction == .output, selected(st) else { continue }
            if let chosen = st.userChosenEndpoint, chosen != e, !reaches(chosen, e) { continue }
            guard let s = sessionOf(n), let t = traits(s), !t.unmanaged else { continue }
            found.append(n)
        }
        return found.sorted()
    }

    /// R31 for one session whose streams a lost private output paused: `routeChange
    /// (oldDeviceUnavailable)` and, where preferred, `interruptionBegan(routeDisconnected)`;
    /// a legacy session stays paused until its program resumes it.
    mutating func sessionLostOutput(_ s: SessionID, previous: Route, current: Route) {
        guard let t = traits(s) else { return }
        touched.insert(s)
        notify(s, .routeChange(reason: .oldDeviceUnavailable, previous: previous, current: current))
        let wasActive = isActive(s)
        if t.prefersRouteInterrupt, model.marks[s]?.interruption == nil {
            state.updateMarks(s) { $0.active = false }
            updateMembership(s)
            beginInterruption(s, cause: .routeDisconnected, reason: .routeDisconnected, wasPlaying: true)
        } else if t.isLegacy, wasActive {
            // A legacy stream stays paused until its program resumes it (R31).
            state.updateMarks(s) { $0.active = false }
            updateMembership(s)
        }
        if wasActive && !isActive(s) {
            endInterruptions(causedBy: .session(s), resumable: false)
        }
    }

    /// R32: a new device. Active sessions of the matching direction hear
    /// `routeChange(.newDeviceAvailable)`; playback continues (no pause, no auto-resume, R31).
    mutating func deviceArrived(_ e: NodeID) {
        guard let ep = model.endpoints[e], ep.port.type != .virtual else { return }
        for s in index.active.sorted() {
            guard let t = traits(s), !t.unmanaged else { continue }
            let matches = ep.kind == .sink ? t.hasOutput : t.hasInput
            guard matches else { continue }
            let r = route(s)
            notify(s, .routeChange(reason: .newDeviceAvailable, previous: r, current: r))
        }
        // R31 "unless configured": resume legacy streams this output's loss paused.
        if configuration.resumeLegacyOnDeviceReturn {
            let uid = ep.port.uid
            var sessions: Set<SessionID> = []
            for (n, st) in model.streams where st.pausedByPolicy && st.lostOutput == uid {
                if let s = sessionOf(n), traits(s)?.isLegacy == true { sessions.insert(s) }
            }
            for s in sessions.sorted() { activate(s, explicit: false) }
        }
    }

    mutating func linkAdded(_ l: LinkID, output: NodeID, input: NodeID) {
        if model.links[l] != nil { removeLink(l) }
        state.setLink(l, LinkInfo(output: output, input: input))
        if model.relays[output] != nil { touchStreams(behindRelay: output) }
        if model.streams[output]?.switchHold != nil { settleProfileSwitch(output, linkedTo: input) }
        if let s = sessionOf(output) { touched.insert(s); reportCategoryRouteChange(s) }
        if let s = sessionOf(input) { touched.insert(s); reportCategoryRouteChange(s) }
    }

    /// R5: the first new link after a category change that gives the session another
    /// route is reported as `routeChange(categoryChange)`. Only a link that arrives
    /// counts, so a stream moved (unlinked, then linked) is reported once, settled.
    mutating func reportCategoryRouteChange(_ s: SessionID) {
        guard let previous = model.marks[s]?.routeBeforeCategoryChange else { return }
        let current = route(s)
        guard current != previous else { return }
        state.updateMarks(s) { $0.routeBeforeCategoryChange = nil }
        notify(s, .routeChange(reason: .categoryChange, previous: previous, current: current))
    }

    mutating func linkRemoved(_ l: LinkID) {
        guard let link = model.links[l] else { return }
        removeLink(l)
        if let s = sessionOf(link.output) { touched.insert(s) }
        if let s = sessionOf(link.input) { touched.insert(s) }
    }

    mutating func removeLink(_ l: LinkID) {
        guard let link = model.links[l] else { return }
        state.setLink(l, nil)
        if model.relays[link.output] != nil { touchStreams(behindRelay: link.output) }
    }

    /// R33: the session's `overrideOutputAudioPort` (`audio.session.output-override`: the node
    /// name of the output it chose, "" for none). Its output streams count as placed by the user
    /// (so the loss of another output is not theirs), and it hears routeChange(override) once.
    /// An unknown node name changes nothing.
    mutating func outputOverrideChanged(_ c: ClientID, to uid: String) {
        let s = SessionID.client(c)
        guard index.declaredClients.contains(c), let t = traits(s), !t.unmanaged else { return }
        var endpoint: NodeID?
        if !uid.isEmpty {
            guard let e = model.endpoints.keys.sorted().first(where: { model.endpoints[$0]?.kind == .sink && model.endpoints[$0]?.port.uid == uid })
            else { return }
            endpoint = e
        }
        let previous = route(s)
        for n in index.streamsOfClient[c]?.nodes ?? [] where model.streams[n]?.direction == .output {
            state.updateStream(n) { $0.userChosenEndpoint = endpoint }
        }
        touched.insert(s)
        var current = previous
        if let e = endpoint, let ep = model.endpoints[e] { current.outputs = [ep.port] }
        notify(s, .routeChange(reason: .override, previous: previous, current: current))
    }
}

import SessionPolicy
import PipeWireFacts

/// Facts the module reports that are not yet events for the policy: the core decides
/// what they mean (the module itself makes no policy decision).
extension ModuleCore {
    /// The module read the routes of an endpoint's device (`as_core_endpoint_routes`).
    /// `EndpointRoutes` decides whether its port was lost, chosen by the user, or is back.
    public func endpointRoutesRead(_ n: NodeID, _ facts: EndpointRouteFacts) {
        let (events, log) = endpointRoutes.read(n, facts)
        if let log { effects.log(.info, log) }
        for event in events {
            // A loss is decided at once; the endpoint cannot go in between, but if it
            // did, what follows is not about it any more.
            guard endpointRoutes.entries[n] != nil else { return }
            submit(event, received: event)
        }
    }

    /// The endpoint's active route as the module last read it (name and port type), nil
    /// when none was read.
    public func activeRoute(ofEndpoint n: NodeID) -> ActiveRoute? {
        endpointRoutes.route(of: n)
    }

    /// The stream's node was made active by someone other than the module
    /// (`as_core_stream_activated`): its owner's activation request (R16) when the policy
    /// holds the stream paused, or when the module's pause still held the node after the
    /// policy let go of it (`releasedPauses`: the program's own start is arbitrated before
    /// it plays); otherwise nothing (the node's running state follows).
    public func streamActivated(_ n: NodeID) {
        let released = releasedPauses.remove(n) != nil
        guard released || policy.holdsPaused(n) else { return }
        effects.log(.info, "stream \(n.raw) re-activated by its owner")
        handle(.streamActivationRequested(n))
    }

    /// The module is going away (`as_core_undo_pauses`): every stream the policy holds
    /// paused is resumed, so no pause outlives it (R41). The policy is not told: nothing
    /// is decided after this.
    public func undoPauses() {
        for (n, st) in policy.snapshot().streams.sorted(by: { $0.key < $1.key }) where st.pausedByPolicy {
            effects.resume(n.raw)
        }
    }

    /// The endpoint event with the port of its device's active route as last read
    /// (`EndpointRoutes.route(of:)`); the properties are remembered for the events a later
    /// read of the routes makes.
    func withPorts(_ event: GraphEvent) -> GraphEvent {
        switch event {
        case .endpointAdded(let n, let kind, let props, _):
            let kept = endpointProperties(props)
            endpointRoutes.added(n, kept)
            return .endpointAdded(n, kind: kind, kept, route: endpointRoutes.route(of: n))
        case .endpointChanged(let n, let props, _):
            let kept = endpointProperties(props)
            endpointRoutes.changed(n, kept)
            return .endpointChanged(n, kept, route: endpointRoutes.route(of: n))
        case .endpointPortRestored(let n, let props, _):
            let kept = endpointProperties(props)
            endpointRoutes.changed(n, kept)
            return .endpointPortRestored(n, kept, route: endpointRoutes.route(of: n))
        case .endpointRemoved(let n):
            endpointRoutes.removed(n)
            return event
        default:
            return event
        }
    }
}

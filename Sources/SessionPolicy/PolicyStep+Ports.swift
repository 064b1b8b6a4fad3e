/// A card's ports (R30, R32, R33): what a read of an endpoint's device's routes means. A
/// jack pulled out keeps the sink node: its route becomes unavailable and the device
/// switches to another one.
///
/// - The endpoint's port became unavailable: a loss (R30), even when the device has
///   already switched to another port; then the new port.
/// - Another port while the old one is still available: the user's choice (pavucontrol,
///   `pw-cli set-param … Route`), never a loss (R33).
/// - The lost port active and available again: it is back (R32).
/// - The first read: the endpoint's port; kept for `endpointAdded` when the node does not
///   exist yet.
extension PolicyStep {
    mutating func routesRead(_ e: NodeID, _ reading: RouteReading) {
        guard let ep = model.endpoints[e] else {
            state.setEarlyRoute(e, reading)
            return
        }
        guard let current = ep.route else {
            portChanged(e, reading)
            return
        }
        if let lost = ep.lostRoute {
            if reading.name == lost && reading.availability != .no {
                portRestored(e, reading)
            } else if reading.name != current.name {
                portChanged(e, reading)
            }
            return
        }
        if reading.unavailable.contains(current.name) {
            portLost(e, route: current.name)
            if reading.name != current.name { portChanged(e, reading) }
            return
        }
        // Another port while this one is still there: the user's choice, never a loss (R33).
        if reading.name != current.name { portChanged(e, reading) }
    }

    /// The endpoint is on another port: its streams' routes changed.
    mutating func portChanged(_ e: NodeID, _ reading: RouteReading) {
        guard model.endpoints[e] != nil else { return }
        state.updateEndpoint(e) { $0.route = reading }
        for s in sessionsLinked(to: e) { touched.insert(s) }
    }
}

import SessionPolicy
import PipeWireFacts

/// What one read of a device's routes found for one of its endpoints
/// (`struct as_endpoint_route_facts`): a fact, no decision.
public struct EndpointRouteFacts: Sendable, Equatable {
    /// `SPA_PARAM_AVAILABILITY_*`.
    public enum Availability: Sendable, Equatable { case unknown, no, yes }

    /// The route (port) active on the endpoint's profile device.
    public var name: String
    /// Its info `port.type`; empty when it has none.
    public var portType: String
    /// Its availability, as the device's Route param says.
    public var availability: Availability
    /// The names of the device's routes known to be unavailable.
    public var unavailable: Set<String>

    public init(name: String, portType: String = "", availability: Availability = .unknown, unavailable: Set<String> = []) {
        self.name = name
        self.portType = portType
        self.availability = availability
        self.unavailable = unavailable
    }
}

/// The port each sink and source is on, kept from the module's reads of its device's
/// routes, and what a new read means for the policy. A jack pulled out keeps the sink
/// node: its port becomes unavailable and the device switches to another one.
///
/// - The endpoint's port became unavailable: `endpointPortLost`, even when the device
///   has already switched to another port; then the new port (`endpointChanged`).
/// - Another port while the old one is still available: the user's choice (pavucontrol,
///   `pw-cli set-param … Route`), never a loss (R33): `endpointChanged`.
/// - The lost port active and available again: `endpointPortRestored`.
/// - The first read of an endpoint's routes: `endpointChanged` with its port; none when
///   the routes were read before the endpoint was added (its `endpointAdded` carries it).
///
/// Every endpoint event carries the endpoint's port as it was last read (`ActiveRoute`,
/// next to the properties, never in them); the translation types it.
struct EndpointRoutes {
    struct Entry {
        /// The port as last read; nil until the first read.
        var port: ActiveRoute?
        /// The name of the port that became unavailable, until it is back.
        var lost: String?
        /// The endpoint's own properties (node and device) as the module last reported
        /// them; nil while the endpoint is not added yet.
        var properties: Properties?
    }

    private(set) var entries: [NodeID: Entry] = [:]

    var count: Int { entries.count }

    /// The endpoint's port as last read, nil when none was.
    func route(of n: NodeID) -> ActiveRoute? {
        entries[n]?.port
    }

    /// The endpoint was added with these properties.
    mutating func added(_ n: NodeID, _ props: Properties) {
        entries[n, default: Entry()].properties = props
    }

    /// The endpoint's properties changed (nothing kept for an endpoint never added).
    mutating func changed(_ n: NodeID, _ props: Properties) {
        guard entries[n]?.properties != nil else { return }
        entries[n]?.properties = props
    }

    mutating func removed(_ n: NodeID) {
        entries[n] = nil
    }

    /// A read of the endpoint's device's routes: what it means, as the events for the
    /// policy (in order), and a line for the log when the endpoint's port changed.
    mutating func read(_ n: NodeID, _ facts: EndpointRouteFacts) -> (events: [GraphEvent], log: String?) {
        var entry = entries[n] ?? Entry()
        let active = ActiveRoute(name: facts.name, portType: facts.portType)
        defer { entries[n] = entry }
        guard let props = entry.properties else {
            // Read before the endpoint was added: its `endpointAdded` carries the port.
            entry.port = active
            return ([], nil)
        }
        guard let current = entry.port else {
            entry.port = active
            return ([.endpointChanged(n, props, route: active)], nil)
        }
        if let lost = entry.lost {
            if active.name == lost && facts.availability != .no {
                entry.lost = nil
                entry.port = active
                return ([.endpointPortRestored(n, props, route: active)], "endpoint \(n.raw): port \(active.name) is back")
            }
            guard active.name != current.name else { return ([], nil) }
            entry.port = active
            return ([.endpointChanged(n, props, route: active)], "endpoint \(n.raw): port \(active.name)")
        }
        if facts.unavailable.contains(current.name) {
            // A loss even when the device has already switched to another port.
            entry.lost = current.name
            let log = "endpoint \(n.raw): port \(current.name) is unavailable"
            guard active.name != current.name else { return ([.endpointPortLost(n)], log) }
            entry.port = active
            return ([.endpointPortLost(n), .endpointChanged(n, props, route: active)], log + "; now port \(active.name)")
        }
        // Another port while this one is still there: the user's choice, never a loss (R33).
        guard active.name != current.name else { return ([], nil) }
        entry.port = active
        return ([.endpointChanged(n, props, route: active)], "endpoint \(n.raw): port \(active.name)")
    }
}

import SessionPolicy
import PipeWireFacts

/// Capture streams that record a sink's monitor (`pw-record -P stream.capture.sink=true`,
/// pavucontrol's level meters: `stream.monitor=true`): observation, not a session. The
/// module reports every audio stream; these are decided when they are added and the
/// policy never hears of them, nor of anything that happens to them afterwards.
struct MonitorStreams {
    private(set) var nodes: Set<NodeID> = []

    var count: Int { nodes.count }

    /// Whether a stream added with `props` records a sink's monitor (PipeWire's boolean
    /// reading: "true" or "1").
    static func isMonitor(_ direction: StreamDirection, _ props: Properties) -> Bool {
        guard direction == .input else { return false }
        func on(_ key: String) -> Bool { props[key] == "true" || props[key] == "1" }
        return on("stream.capture.sink") || on("stream.monitor")
    }

    /// Whether the policy hears of `event`: false for a monitor recorder's own events.
    mutating func admits(_ event: GraphEvent) -> Bool {
        switch event {
        case .streamAdded(let n, _, let direction, let props):
            guard Self.isMonitor(direction, props) else {
                nodes.remove(n)
                return true
            }
            nodes.insert(n)
            return false
        case .streamRemoved(let n):
            return nodes.remove(n) == nil
        case .streamChanged(let n, _), .streamRunning(let n, _), .streamActivationRequested(let n),
             .streamReleasedToProgram(let n):
            return !nodes.contains(n)
        default:
            return true
        }
    }
}

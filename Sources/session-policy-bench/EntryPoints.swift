// `--entry-points`: the module core's decisions made through its C entry points
// (`as_core_*`), as the daemon's module makes them.
import AudioSessionCoreABI
import AudioSessionModuleCore
import PipeWireFacts
import SessionPolicy
#if canImport(Glibc)
import Glibc
#endif

/// A property set in C memory, made once and handed over as often as needed.
final class CPropertySet {
    private let strings: [UnsafeMutablePointer<CChar>]
    private let items: UnsafeMutableBufferPointer<as_prop>
    private let count: Int

    init(_ props: Properties) {
        var strings: [UnsafeMutablePointer<CChar>] = []
        let items = UnsafeMutableBufferPointer<as_prop>.allocate(capacity: max(1, props.count))
        var count = 0
        // In key order: the same set in every run.
        for (key, value) in props.sorted(by: { $0.key < $1.key }) {
            guard let k = strdup(key), let v = strdup(value) else { continue }
            strings += [k, v]
            items[count] = as_prop(key: k, value: v)
            count += 1
        }
        self.strings = strings
        self.items = items
        self.count = count
    }

    func with(_ body: (UnsafePointer<as_props>) -> Void) {
        var props = as_props(items: items.baseAddress, n_items: UInt32(count))
        withUnsafePointer(to: &props) { body($0) }
    }

    deinit {
        strings.forEach { free($0) }
        items.deallocate()
    }
}

/// The keys PipeWire 0.3.65's daemon and its stream library add to a stream's node (none
/// of which the policy reads): every stream added crosses the entry point with them.
func daemonStreamKeys(_ n: NodeID, client: ClientID) -> Properties {
    [
        "media.class": "Stream/Output/Audio", "node.autoconnect": "true", "node.want-driver": "true",
        "node.rate": "1/48000", "node.latency": "1024/48000", "node.loop.name": "data-loop.0",
        "object.id": "\(n.raw)", "object.serial": "\(n.raw &+ 400)", "object.register": "false",
        "client.id": "\(client.raw)", "factory.id": "7", "clock.quantum-limit": "8192",
        "library.name.audioconvert": "audioconvert/libspa-audioconvert", "adapt.follower.spa-node": "",
        "port.group": "stream.0", "stream.is-live": "true", "application.language": "en_US.UTF-8",
        "application.process.user": "root", "application.process.host": "debian",
        "application.process.session-id": "3", "core.version": "0.3.65", "core.name": "pipewire-root-4242",
        "pipewire.sec.pid": "4242", "pipewire.sec.uid": "0", "pipewire.sec.gid": "0",
    ]
}

/// The keys the daemon adds to a client (none of which the policy reads).
let daemonClientKeys: Properties = [
    "pipewire.protocol": "protocol-native", "pipewire.sec.pid": "4242", "pipewire.sec.uid": "0",
    "pipewire.sec.gid": "0", "pipewire.sec.label": "unconfined", "module.id": "2", "object.serial": "60",
    "core.name": "pipewire-root-4242", "core.version": "0.3.65", "application.language": "en_US.UTF-8",
    "application.process.user": "root", "application.process.host": "debian", "log.level": "0",
]

/// One half of a round's reports as calls of the module core's entry points.
struct EntryPoints {
    private let calls: [() -> Void]

    init(_ core: ModuleCore, _ reports: [Report]) {
        let p = OpaquePointer(Unmanaged.passUnretained(core).toOpaque())
        calls = reports.map { report in
            switch report {
            case .streamAdded(let n, let c, let d, let props):
                let set = CPropertySet(props.merging(daemonStreamKeys(n, client: c)) { mine, _ in mine })
                let direction = d == .input ? AS_STREAM_INPUT : AS_STREAM_OUTPUT
                return { set.with { as_core_stream_added(p, n.raw, c.raw, direction, $0) } }
            case .clientChanged(let c, let props):
                let set = CPropertySet(props.merging(daemonClientKeys) { mine, _ in mine })
                return {
                    set.with { as_core_client_changed(p, c.raw, $0) }
                    as_core_flush(p)
                }
            case .event(.streamRunning(let n, let running)):
                return { as_core_stream_running(p, n.raw, running) }
            case .event(.streamActivatedByOwner(let n)):
                return { as_core_stream_activated(p, n.raw) }
            case .event(.streamRemoved(let n)):
                return { as_core_stream_removed(p, n.raw) }
            case .event(.linkAdded(let l, let output, let input)):
                return { as_core_link_added(p, l.raw, output.raw, input.raw) }
            case .event(.linkRemoved(let l)):
                return { as_core_link_removed(p, l.raw) }
            case .event(let e):
                return { core.handle(e) }
            }
        }
    }

    func run() {
        for call in calls { call() }
    }
}

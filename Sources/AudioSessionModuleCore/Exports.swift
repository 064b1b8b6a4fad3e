// The @_cdecl entry points declared in audio_session_core.h. Each one only
// converts its C arguments into Swift values and hands them to ModuleCore:
// nothing here may trap on any input (this runs inside the PipeWire daemon).
import AudioSessionCoreABI
import SessionPolicy
import PipeWireFacts

/// Strings from C: invalid UTF-8 is repaired (U+FFFD), NULL is "".
@inline(__always)
func string(_ p: UnsafePointer<CChar>?) -> String {
    guard let p else { return "" }
    return String(cString: p)
}

/// A C property set as `Properties`; the last of duplicate keys wins, like pw_properties.
/// `keeping`: only the keys it accepts are read (nil: all of them).
func properties(_ props: UnsafePointer<as_props>?, keeping: ((UnsafePointer<CChar>) -> Bool)? = nil) -> Properties {
    guard let props, let items = props.pointee.items else { return [:] }
    let count = Int(props.pointee.n_items)
    var out = Properties(minimumCapacity: keeping == nil ? count : 0)
    for item in UnsafeBufferPointer(start: items, count: count) {
        guard let key = item.key else { continue }
        if let keeping, !keeping(key) { continue }
        out[String(cString: key)] = string(item.value)
    }
    return out
}

/// A client's properties as far as anything of it is read from them (`Translation.readsClientKey`).
func clientProperties(_ props: UnsafePointer<as_props>?) -> Properties {
    properties(props, keeping: Translation.readsClientKey)
}

/// A stream's properties as far as anything of it is read from them (`Translation.readsStreamKey`).
func streamProperties(_ props: UnsafePointer<as_props>?) -> Properties {
    properties(props, keeping: Translation.readsStreamKey)
}

@inline(__always)
func core(_ p: OpaquePointer?) -> ModuleCore? {
    guard let p else { return nil }
    return Unmanaged<ModuleCore>.fromOpaque(UnsafeRawPointer(p)).takeUnretainedValue()
}

func writeError(_ message: String, into buffer: UnsafeMutablePointer<CChar>?, size: Int) {
    guard let buffer, size > 0 else { return }
    var n = 0
    for byte in message.utf8 where n < size - 1 {
        buffer[n] = CChar(bitPattern: byte)
        n += 1
    }
    buffer[n] = 0
}

@_cdecl("as_core_new")
public func as_core_new(
    _ args: UnsafePointer<as_props>?, _ effects: UnsafePointer<as_core_effects>?,
    _ data: UnsafeMutableRawPointer?, _ error: UnsafeMutablePointer<CChar>?, _ errorSize: Int
) -> OpaquePointer? {
    guard let effects else {
        writeError("no effect table", into: error, size: errorSize)
        return nil
    }
    switch ModuleArguments.configuration(from: properties(args)) {
    case .failure(let e):
        writeError(e.description, into: error, size: errorSize)
        return nil
    case .success(let configuration):
        let core = ModuleCore(configuration: configuration, effects: effects.pointee, data: data)
        return OpaquePointer(Unmanaged.passRetained(core).toOpaque())
    }
}

@_cdecl("as_core_free")
public func as_core_free(_ p: OpaquePointer?) {
    guard let p else { return }
    Unmanaged<ModuleCore>.fromOpaque(UnsafeRawPointer(p)).release()
}

@_cdecl("as_core_client_added")
public func as_core_client_added(
    _ p: OpaquePointer?, _ id: UInt32, _ props: UnsafePointer<as_props>?, _ identity: UnsafePointer<as_client_identity>?
) {
    core(p)?.clientAdded(ClientID(id), clientProperties(props), identity: clientIdentity(identity))
}

/// Who a client is, as the module established it from what the daemon knows of its
/// connection; no identity when the module gave none.
func clientIdentity(_ identity: UnsafePointer<as_client_identity>?) -> ClientIdentity {
    guard let i = identity?.pointee else { return ClientIdentity() }
    let uid: UInt32? = i.uid >= 0 && i.uid <= Int64(UInt32.max) ? UInt32(i.uid) : nil
    return ClientIdentity(
        executable: i.executable.map { String(cString: $0) }, appID: i.app_id.map { String(cString: $0) }, uid: uid,
        access: i.access.map { ClientAccess(rawValue: Translation.cut(String(cString: $0))) }, inFlatpak: i.flatpak,
        coreAccessGranted: i.core_access < 0 ? nil : i.core_access == 1, accessFromDaemon: i.access_from_daemon)
}

@_cdecl("as_core_client_changed")
public func as_core_client_changed(_ p: OpaquePointer?, _ id: UInt32, _ props: UnsafePointer<as_props>?) {
    core(p)?.handle(.clientChanged(ClientID(id), clientProperties(props)))
}

@_cdecl("as_core_client_removed")
public func as_core_client_removed(_ p: OpaquePointer?, _ id: UInt32) {
    core(p)?.handle(.clientRemoved(ClientID(id)))
}

@_cdecl("as_core_client_own_properties")
public func as_core_client_own_properties(_ p: OpaquePointer?, _ id: UInt32, _ props: UnsafePointer<as_props>?) {
    // Only the keys a request is read from: an update may be large.
    guard let core = core(p), let props, props.pointee.items != nil else { return }
    core.ownPropertiesWritten(ClientID(id), properties(props, keeping: Translation.isRequestKey))
}

@_cdecl("as_core_classify_node")
public func as_core_classify_node(_ mediaClass: UnsafePointer<CChar>?) -> as_node_class {
    guard let mediaClass, let c = NodeClass(mediaClass: mediaClass) else { return AS_NODE_OTHER }
    switch c {
    case .stream(.output): return AS_NODE_STREAM_OUTPUT
    case .stream(.input): return AS_NODE_STREAM_INPUT
    case .endpoint(.sink): return AS_NODE_SINK
    case .endpoint(.source): return AS_NODE_SOURCE
    }
}

@_cdecl("as_core_stream_added")
public func as_core_stream_added(
    _ p: OpaquePointer?, _ id: UInt32, _ client: UInt32, _ direction: as_stream_direction,
    _ props: UnsafePointer<as_props>?
) {
    let dir: StreamDirection = direction == AS_STREAM_INPUT ? .input : .output
    core(p)?.handle(.streamAdded(NodeID(id), client: ClientID(client), direction: dir, streamProperties(props)))
}

@_cdecl("as_core_stream_changed")
public func as_core_stream_changed(_ p: OpaquePointer?, _ id: UInt32, _ props: UnsafePointer<as_props>?) {
    core(p)?.handle(.streamChanged(NodeID(id), streamProperties(props)))
}

@_cdecl("as_core_stream_running")
public func as_core_stream_running(_ p: OpaquePointer?, _ id: UInt32, _ running: Bool) {
    core(p)?.handle(.streamRunning(NodeID(id), running))
}

@_cdecl("as_core_stream_activated")
public func as_core_stream_activated(_ p: OpaquePointer?, _ id: UInt32) {
    core(p)?.handle(.streamActivatedByOwner(NodeID(id)))
}

@_cdecl("as_core_stream_faded_out")
public func as_core_stream_faded_out(_ p: OpaquePointer?, _ id: UInt32) {
    core(p)?.handle(.streamFadedOut(NodeID(id)))
}

@_cdecl("as_core_stream_heard")
public func as_core_stream_heard(_ p: OpaquePointer?, _ id: UInt32) {
    core(p)?.handle(.streamHeard(NodeID(id)))
}

@_cdecl("as_core_stream_removed")
public func as_core_stream_removed(_ p: OpaquePointer?, _ id: UInt32) {
    core(p)?.handle(.streamRemoved(NodeID(id)))
}

@_cdecl("as_core_endpoint_added")
public func as_core_endpoint_added(
    _ p: OpaquePointer?, _ id: UInt32, _ kind: as_endpoint_kind, _ props: UnsafePointer<as_props>?
) {
    let k: EndpointKind = kind == AS_ENDPOINT_SOURCE ? .source : .sink
    core(p)?.handle(.endpointAdded(NodeID(id), kind: k, properties(props)))
}

@_cdecl("as_core_endpoint_changed")
public func as_core_endpoint_changed(_ p: OpaquePointer?, _ id: UInt32, _ props: UnsafePointer<as_props>?) {
    guard let core = core(p) else { return }
    let n = NodeID(id)
    core.handle(.endpointChanged(n, kind: core.policy.endpointKind(n) ?? .sink, properties(props)))
}

@_cdecl("as_core_endpoint_removed")
public func as_core_endpoint_removed(_ p: OpaquePointer?, _ id: UInt32) {
    core(p)?.handle(.endpointRemoved(NodeID(id)))
}

@_cdecl("as_core_timer_fired")
public func as_core_timer_fired(_ p: OpaquePointer?, _ token: UInt64) {
    core(p)?.timerFired(token)
}

@_cdecl("as_core_flush")
public func as_core_flush(_ p: OpaquePointer?) {
    core(p)?.flush()
}

@_cdecl("as_core_republish")
public func as_core_republish(_ p: OpaquePointer?) {
    core(p)?.republish()
}

@_cdecl("as_core_endpoint_routes")
public func as_core_endpoint_routes(_ p: OpaquePointer?, _ id: UInt32, _ facts: UnsafePointer<as_endpoint_route_facts>?) {
    guard let core = core(p), let f = facts?.pointee, let name = f.name else { return }
    var unavailable: [String] = []
    if let names = f.unavailable {
        let count = Int(min(f.n_unavailable, UInt32(RouteReading.maximumUnavailable)))
        for item in UnsafeBufferPointer(start: names, count: count) {
            if let item { unavailable.append(String(cString: item)) }
        }
    }
    let availability: RouteReading.Availability
    switch f.available {
    case AS_ROUTE_AVAILABILITY_NO: availability = .no
    case AS_ROUTE_AVAILABILITY_YES: availability = .yes
    default: availability = .unknown
    }
    let reading = RouteReading(name: String(cString: name), portType: string(f.port_type), availability: availability, unavailable: unavailable)
    core.handle(.endpointRoutesRead(NodeID(id), reading))
}

@_cdecl("as_core_device_profile")
public func as_core_device_profile(_ p: OpaquePointer?, _ id: UInt32, _ name: UnsafePointer<CChar>?) {
    guard let core = core(p), let name else { return }
    core.handle(.deviceProfileRead(DeviceID(id), DeviceProfile(pipeWireName: string(name))))
}

@_cdecl("as_core_device_removed")
public func as_core_device_removed(_ p: OpaquePointer?, _ id: UInt32) {
    core(p)?.handle(.deviceRemoved(DeviceID(id)))
}

@_cdecl("as_core_undo_pauses")
public func as_core_undo_pauses(_ p: OpaquePointer?) {
    core(p)?.unload()
}

@_cdecl("as_core_endpoint_mute_changed")
public func as_core_endpoint_mute_changed(_ p: OpaquePointer?, _ id: UInt32, _ muted: Bool) {
    core(p)?.handle(.endpointMuteChanged(NodeID(id), muted: muted))
}

@_cdecl("as_core_link_added")
public func as_core_link_added(_ p: OpaquePointer?, _ id: UInt32, _ output: UInt32, _ input: UInt32) {
    core(p)?.portLinkAdded(LinkID(id), output: NodeID(output), input: NodeID(input))
}

@_cdecl("as_core_link_removed")
public func as_core_link_removed(_ p: OpaquePointer?, _ id: UInt32) {
    core(p)?.portLinkRemoved(LinkID(id))
}

@_cdecl("as_core_session_count")
public func as_core_session_count(_ p: OpaquePointer?) -> UInt32 {
    UInt32(clamping: core(p)?.policy.publishedSessionCount ?? 0)
}

@_cdecl("as_core_stream_count")
public func as_core_stream_count(_ p: OpaquePointer?) -> UInt32 {
    UInt32(clamping: core(p)?.policy.snapshot().streams.count ?? 0)
}

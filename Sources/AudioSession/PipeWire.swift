// The boundary: every call into libpipewire (CPipeWire) and the aspw_ shim
// (CPipeWireShim) is in this file. Grep here for any C call the library makes.
//
// Threading: PipeWire runs on a `pw_thread_loop` owned by `PipeWireConnection`.
// Calls from Swift take the loop lock (`pw_thread_loop_lock`, recursive);
// callbacks arrive on the loop thread with the lock held and are forwarded as
// `PipeWireEvent` values to one handler, which must not block. The one exception
// is a stream's render callback: it runs on PipeWire's data (realtime) thread
// (`PW_STREAM_FLAG_RT_PROCESS`), without the lock.
//
// Callback contexts are `Unmanaged.passRetained(box).toOpaque()`, released
// exactly once by `teardown()` / `PipeWireStream.destroy()` after the hooks
// that could call them are freed. The `@convention(c)` thunks capture nothing.

import CPipeWire
import CPipeWireShim
import Dispatch
import FoundationEssentials
import AudioSessionVocabulary

/// What the connection reports (on the PipeWire loop thread).
enum PipeWireEvent: Sendable {
    /// The round trip started by `sync()` completed.
    case synced(seq: Int32)
    /// The daemon went away (or refused us).
    case disconnected(message: String)
    /// A metadata object with this `metadata.name` was bound.
    case metadataAppeared(name: String)
    /// It was removed from the registry.
    case metadataGone(name: String)
    /// One property of a bound metadata object (`value == nil`: removed; `key == nil`: all removed).
    case property(metadata: String, subject: UInt32, key: String?, value: String?)
    /// A node global (streams, sinks, sources) with its registry properties.
    case nodeAdded(id: UInt32, properties: [String: String])
    /// A client global (one connection) with its registry properties (`pipewire.sec.pid` …).
    case clientAdded(id: UInt32, properties: [String: String])
    case globalRemoved(id: UInt32)
}

/// One process-wide `pw_init`.
private let pipeWireInitialised: Bool = {
    pw_init(nil, nil)
    return true
}()

/// The context object of the C callbacks of one connection.
final class ConnectionBox: @unchecked Sendable {
    let handler: @Sendable (PipeWireEvent) -> Void
    /// metadata proxy ids -> name, filled on bind (loop thread only).
    var boundMetadata: [UInt32: String] = [:]
    unowned(unsafe) var owner: PipeWireConnection?
    init(handler: @escaping @Sendable (PipeWireEvent) -> Void) { self.handler = handler }
}

/// A thread loop, a context and (while connected) one `pw_core` with its
/// registry and the `audio-session` and `default` metadata bound.
final class PipeWireConnection: @unchecked Sendable {
    private let loop: OpaquePointer
    private let context: OpaquePointer

    /// What one connection made; touched only with the loop lock held (or with the loop stopped).
    fileprivate struct Live: @unchecked Sendable {
        var core: OpaquePointer?
        var registry: OpaquePointer?
        var coreHook: OpaquePointer?
        var registryHook: OpaquePointer?
        var metadata: [String: (proxy: OpaquePointer, hook: OpaquePointer?, global: UInt32)] = [:]
        var box: ConnectionBox?
        var streams: [ObjectIdentifier: PipeWireStream] = [:]
        var nodeQueries: [ObjectIdentifier: NodeQuery] = [:]
    }
    private var live = Live()
    private var core: OpaquePointer? { live.core }
    private var registry: OpaquePointer? { live.registry }

    /// The metadata objects the connection binds.
    static let watchedMetadata: Set<String> = ["audio-session", "default"]

    init(name: String) throws(SessionError) {
        _ = pipeWireInitialised
        guard let l = pw_thread_loop_new(name, nil) else {
            throw SessionError(code: .mediaServicesFailed, message: "pw_thread_loop_new failed")
        }
        guard let c = pw_context_new(pw_thread_loop_get_loop(l), nil, 0) else {
            pw_thread_loop_destroy(l)
            throw SessionError(code: .mediaServicesFailed, message: "pw_context_new failed")
        }
        loop = l
        context = c
        pw_thread_loop_start(l)
    }

    /// Stops the loop and frees everything. The last reference may go away on the
    /// loop's own thread (an application that lets go of its session in a
    /// notification handler): there `pw_thread_loop_stop` would join its own thread
    /// and the loop would be destroyed under the running iteration, and tearing the
    /// core down would free what libpipewire is dispatching. Then all of it is done
    /// on a new thread, once the callback has returned the lock.
    deinit {
        // The C callbacks still registered must not reach this object any more.
        locked { live.box?.owner = nil }
        let resources = Resources(loop: loop, context: context, live: live)
        if pw_thread_loop_in_thread(loop) {
            DispatchQueue.global().async { resources.destroy(stopFirst: false) }
        } else {
            resources.destroy(stopFirst: true)
        }
    }

    /// The C objects of a connection being destroyed.
    private struct Resources: @unchecked Sendable {
        let loop: OpaquePointer
        let context: OpaquePointer
        var live: Live

        func destroy(stopFirst: Bool) {
            var l = live
            if stopFirst {
                // Without the lock (pw_thread_loop_stop joins the loop thread); then nothing runs it.
                pw_thread_loop_stop(loop)
                PipeWireConnection.teardown(&l)
            } else {
                // Waits for the callback that dropped the last reference to return.
                pw_thread_loop_lock(loop)
                PipeWireConnection.teardown(&l)
                pw_thread_loop_unlock(loop)
                pw_thread_loop_stop(loop)
            }
            pw_context_destroy(context)
            pw_thread_loop_destroy(loop)
        }
    }

    /// Whether the caller is this connection's PipeWire thread.
    var isLoopThread: Bool { pw_thread_loop_in_thread(loop) }

    /// Runs `body` with the loop lock held (recursive: also fine from callbacks).
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        return try body()
    }

    var isConnected: Bool { locked { core != nil } }

    /// Whether a socket pw_context_connect would try exists (`serverSocketPaths`).
    static func serverSocketExists() -> Bool {
        serverSocketPaths(environment: ProcessInfo.processInfo.environment).contains { FileManager.default.fileExists(atPath: $0) }
    }

    /// The sockets pw_context_connect tries, in its order: `PIPEWIRE_REMOTE` (a name,
    /// default `pipewire-0`, or an absolute path, tried alone); a name in the first of
    /// `PIPEWIRE_RUNTIME_DIR`, `XDG_RUNTIME_DIR` and `USERPROFILE` that is set, then in the
    /// system's directory, `/run/pipewire` (even with no runtime directory at all).
    static func serverSocketPaths(environment env: [String: String]) -> [String] {
        let name = env["PIPEWIRE_REMOTE"].flatMap { $0.isEmpty ? nil : $0 } ?? "pipewire-0"
        if name.hasPrefix("/") { return [name] }
        var paths: [String] = []
        if let dir = ["PIPEWIRE_RUNTIME_DIR", "XDG_RUNTIME_DIR", "USERPROFILE"].lazy.compactMap({ env[$0] }).first {
            paths.append(dir + "/" + name)
        }
        paths.append("/run/pipewire/" + name)
        return paths
    }

    /// Connects with these client properties (`pw_context_connect`), starts
    /// watching the registry and asks for a round trip: returns the sequence
    /// number its `.synced(seq:)` will carry, nil when PipeWire is not there.
    func connect(properties: [String: String], handler: @escaping @Sendable (PipeWireEvent) -> Void) -> Int32? {
        locked {
            teardownLocked()
            // No socket, no PipeWire: don't call pw_context_connect. Its failure path
            // in 0.3.65 can close a file descriptor twice; retried by the reconnect
            // loop, that closed descriptors other threads of the process had opened.
            guard Self.serverSocketExists() else { return nil }
            guard let props = Self.makeProperties(properties) else { return nil }
            guard let c = pw_context_connect(context, props, 0) else { return nil }  // takes props
            let b = ConnectionBox(handler: handler)
            b.owner = self
            let ctx = Unmanaged.passRetained(b).toOpaque()
            live.core = c
            live.box = b
            live.coreHook = aspw_core_add_listener(c, onCoreDone, onCoreError, ctx)
            live.registry = aspw_core_get_registry(c)
            if let r = live.registry {
                live.registryHook = aspw_registry_add_listener(r, onGlobal, onGlobalRemove, ctx)
            }
            return aspw_core_sync(c, 0)
        }
    }

    /// Asks for a round trip; `.synced(seq:)` follows with the returned number.
    func sync() -> Int32? {
        locked { core.map { aspw_core_sync($0, 0) } }
    }

    /// Frees every hook and proxy and disconnects (safe to call repeatedly).
    func disconnect() { locked { teardownLocked() } }

    private func teardownLocked() { Self.teardown(&live) }

    /// Streams, then metadata and registry proxies (each after its listener), then the core.
    fileprivate static func teardown(_ l: inout Live) {
        for s in l.streams.values { s.destroyLocked() }
        l.streams.removeAll()
        for q in l.nodeQueries.values { q.finish(nil) }
        l.nodeQueries.removeAll()
        for m in l.metadata.values {
            aspw_hook_free(m.hook)
            pw_proxy_destroy(m.proxy)
        }
        l.metadata.removeAll()
        aspw_hook_free(l.registryHook); l.registryHook = nil
        if let r = l.registry { pw_proxy_destroy(r) }
        l.registry = nil
        aspw_hook_free(l.coreHook); l.coreHook = nil
        if let c = l.core { pw_core_disconnect(c) }
        l.core = nil
        if let b = l.box {
            l.box = nil
            b.owner = nil
            Unmanaged.passUnretained(b).release()  // the passRetained of connect()
        }
    }

    /// This connection's client id on the server (`pw_core_get_client` bound id).
    var clientID: UInt32? {
        locked {
            guard let c = core else { return nil }
            let id = aspw_core_client_id(c)
            return id == aspw_id_invalid ? nil : id
        }
    }

    /// `pw_core_update_properties`: the client properties the policy reads (pw_core_update_properties; unmodified programs get them from PIPEWIRE_PROPS or PULSE_PROP).
    @discardableResult
    func updateClientProperties(_ properties: [String: String]) -> Bool {
        locked {
            guard let c = core, let p = Self.makeProperties(properties) else { return false }
            defer { pw_properties_free(p) }
            return aspw_core_update_properties(c, p) >= 0
        }
    }

    /// `pw_metadata_set_property` on a bound metadata object (the `default` one for `target.object`).
    @discardableResult
    func setMetadata(_ name: String, subject: UInt32, key: String, type: String?, value: String?) -> Bool {
        locked {
            guard let m = live.metadata[name] else { return false }
            return aspw_metadata_set_property(m.proxy, subject, key, type, value) >= 0
        }
    }

    fileprivate func metadataBound(globalID: UInt32, type: String, version: UInt32, name: String, box b: ConnectionBox) {
        guard Self.watchedMetadata.contains(name), live.metadata[name] == nil, let r = registry else { return }
        guard let proxy = aspw_registry_bind(r, globalID, type, min(version, UInt32(PW_VERSION_METADATA))) else { return }
        let ctx = Unmanaged.passUnretained(b).toOpaque()
        let hook: OpaquePointer?
        switch name {
        case "audio-session": hook = aspw_metadata_add_listener(proxy, onSessionProperty, ctx)
        default: hook = aspw_metadata_add_listener(proxy, onDefaultProperty, ctx)
        }
        live.metadata[name] = (proxy, hook, globalID)
        b.handler(.metadataAppeared(name: name))
    }

    fileprivate func globalRemoved(_ id: UInt32, box b: ConnectionBox) {
        if let (name, m) = live.metadata.first(where: { $0.value.global == id }) {
            aspw_hook_free(m.hook)
            pw_proxy_destroy(m.proxy)
            live.metadata[name] = nil
            b.handler(.metadataGone(name: name))
        }
        b.handler(.globalRemoved(id: id))
    }

    // MARK: Streams

    /// Creates a playback (or, with `capture`, a capture) `pw_stream` on this connection
    /// (so it belongs to the session). A capture stream's `render` gets what was captured.
    func makeStream(name: String, properties: [String: String], rate: UInt32, channels: UInt32, active: Bool,
                    capture: Bool = false,
                    render: @escaping @Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Int,
                    stateChanged: @escaping @Sendable (PipeWireStream.State, String?) -> Void) -> PipeWireStream? {
        locked { () -> PipeWireStream? in
            guard let c = core, let p = Self.makeProperties(properties) else { return nil }
            guard let s = pw_stream_new(c, name, p) else { return nil }  // takes props
            let stream = PipeWireStream(stream: s, channels: channels, capture: capture, render: render,
                                        stateChanged: stateChanged, connection: self)
            let connected = capture ? aspw_stream_connect_capture(s, rate, channels, active)
                                    : aspw_stream_connect_playback(s, rate, channels, active)
            guard connected >= 0 else {
                stream.destroyLocked()
                return nil
            }
            live.streams[ObjectIdentifier(stream)] = stream
            return stream
        }
    }

    fileprivate func forget(_ stream: PipeWireStream) {
        locked { _ = live.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    // MARK: One node's full properties

    /// Binds node `id` and hands its full properties (the registry carries only some) to
    /// `done`, once; nil when there is no connection or `cancel(query:)` comes first.
    func queryNode(_ id: UInt32, _ done: @escaping @Sendable ([String: String]?) -> Void) -> NodeQuery? {
        locked { () -> NodeQuery? in
            guard let r = registry,
                  let proxy = aspw_registry_bind(r, id, "PipeWire:Interface:Node", UInt32(PW_VERSION_NODE)) else {
                done(nil)
                return nil
            }
            let q = NodeQuery(proxy: proxy, done: done)
            q.hook = aspw_node_add_listener(proxy, onNodeInfo, Unmanaged.passUnretained(q).toOpaque())
            live.nodeQueries[ObjectIdentifier(q)] = q
            return q
        }
    }

    /// Frees a query's proxy (answered or not): never from inside its own callback, which
    /// runs with the loop lock held; this takes the lock, so it waits for the callback to return.
    func finish(_ q: NodeQuery) {
        locked {
            guard live.nodeQueries.removeValue(forKey: ObjectIdentifier(q)) != nil else { return }
            q.finish(nil)
        }
    }

    // MARK: Properties

    static func makeProperties(_ dict: [String: String]) -> UnsafeMutablePointer<pw_properties>? {
        guard let p = pw_properties_new_string("") else { return nil }
        for (k, v) in dict.sorted(by: { $0.key < $1.key }) { pw_properties_set(p, k, v) }
        return p
    }

    static func dictionary(_ dict: UnsafePointer<spa_dict>?) -> [String: String] {
        var out: [String: String] = [:]
        let n = aspw_dict_count(dict)
        var i: UInt32 = 0
        while i < n {
            if let k = aspw_dict_key(dict, i), let v = aspw_dict_value(dict, i) {
                out[String(cString: k)] = String(cString: v)
            }
            i += 1
        }
        return out
    }
}

/// A bound node waiting for its info (`PipeWireConnection.queryNode`).
final class NodeQuery: @unchecked Sendable {
    let proxy: OpaquePointer
    var hook: OpaquePointer?
    private var done: (@Sendable ([String: String]?) -> Void)?
    private var freed = false

    init(proxy: OpaquePointer, done: @escaping @Sendable ([String: String]?) -> Void) {
        self.proxy = proxy
        self.done = done
    }

    /// The answer (loop thread, lock held): delivered once.
    func answer(_ props: [String: String]?) {
        let d = done
        done = nil
        d?(props)
    }

    /// Answers nil if not answered yet, and frees the hook and the proxy (lock held, outside its callbacks).
    func finish(_ props: [String: String]?) {
        answer(props)
        guard !freed else { return }
        freed = true
        aspw_hook_free(hook)
        hook = nil
        pw_proxy_destroy(proxy)
    }
}

private let onNodeInfo: aspw_node_info_fn = { data, props in
    guard let data else { return }
    Unmanaged<NodeQuery>.fromOpaque(data).takeUnretainedValue().answer(PipeWireConnection.dictionary(props))
}

/// A playback or capture `pw_stream` made by `PipeWireConnection.makeStream`.
final class PipeWireStream: @unchecked Sendable {
    enum State: Sendable { case error, unconnected, connecting, paused, streaming }
    final class Box: @unchecked Sendable {
        let render: @Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Int
        let stateChanged: @Sendable (State, String?) -> Void
        init(render: @escaping @Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Int,
             stateChanged: @escaping @Sendable (State, String?) -> Void) {
            self.render = render
            self.stateChanged = stateChanged
        }
    }
    private var stream: OpaquePointer?
    private var hook: OpaquePointer?
    private var box: Box?
    private weak var connection: PipeWireConnection?

    fileprivate init(stream: OpaquePointer, channels: UInt32, capture: Bool,
                     render: @escaping @Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Int,
                     stateChanged: @escaping @Sendable (State, String?) -> Void, connection: PipeWireConnection) {
        self.stream = stream
        self.connection = connection
        let b = Box(render: render, stateChanged: stateChanged)
        box = b
        let data = Unmanaged.passRetained(b).toOpaque()
        hook = capture ? aspw_stream_add_capture_listener(stream, onRender, onStreamState, channels, data)
                       : aspw_stream_add_listener(stream, onRender, onStreamState, channels, data)
    }

    /// The stream's node id (`pw_stream_get_node_id`), nil until connected.
    var nodeID: UInt32? {
        connection?.locked {
            guard let s = stream else { return nil }
            let id = pw_stream_get_node_id(s)
            return id == aspw_id_invalid ? nil : id
        } ?? nil
    }

    /// `pw_stream_set_active`: pause (false) or resume (true) this stream's node.
    func setActive(_ active: Bool) {
        connection?.locked { if let s = stream { _ = pw_stream_set_active(s, active) } }
    }

    /// `pw_stream_update_properties`.
    func updateProperties(_ properties: [String: String]) {
        connection?.locked {
            guard let s = stream, let p = PipeWireConnection.makeProperties(properties) else { return }
            defer { pw_properties_free(p) }
            _ = aspw_stream_update_properties(s, p)
        }
    }

    /// Disconnects and destroys the stream; idempotent.
    func destroy() {
        guard let c = connection else { return }
        c.locked { destroyLocked() }
        c.forget(self)
    }

    fileprivate func destroyLocked() {
        // Disconnect first: it takes the node off the data thread (synchronously), so
        // no process callback can still be running on the hook freed next.
        if let s = stream { pw_stream_disconnect(s) }
        aspw_hook_free(hook); hook = nil
        if let s = stream { pw_stream_destroy(s) }
        stream = nil
        if let b = box {
            box = nil
            Unmanaged.passUnretained(b).release()
        }
    }
}

// MARK: C thunks (capture nothing; convert and forward)

private func connectionBox(_ data: UnsafeMutableRawPointer?) -> ConnectionBox? {
    guard let data else { return nil }
    return Unmanaged<ConnectionBox>.fromOpaque(data).takeUnretainedValue()
}

private let onCoreDone: aspw_core_done_fn = { data, id, seq in
    guard let b = connectionBox(data), id == 0 else { return }
    b.handler(.synced(seq: seq))
}

private let onCoreError: aspw_core_error_fn = { data, id, seq, res, message in
    guard let b = connectionBox(data) else { return }
    let text = message.map { String(cString: $0) } ?? "error \(res)"
    // An error on the core object itself (-EPIPE: the daemon went away) ends the connection.
    if id == 0 { b.handler(.disconnected(message: text)) }
}

private let onGlobal: aspw_global_fn = { data, id, _, type, version, props in
    guard let b = connectionBox(data), let type else { return }
    let t = String(cString: type)
    if t == "PipeWire:Interface:Metadata" {
        if let n = aspw_dict_lookup(props, "metadata.name") {
            b.owner?.metadataBound(globalID: id, type: t, version: version, name: String(cString: n), box: b)
        }
    } else if t == "PipeWire:Interface:Node" {
        b.handler(.nodeAdded(id: id, properties: PipeWireConnection.dictionary(props)))
    } else if t == "PipeWire:Interface:Client" {
        b.handler(.clientAdded(id: id, properties: PipeWireConnection.dictionary(props)))
    }
}

private let onGlobalRemove: aspw_global_remove_fn = { data, id in
    guard let b = connectionBox(data) else { return }
    b.owner?.globalRemoved(id, box: b)
}

private func forwardProperty(_ data: UnsafeMutableRawPointer?, _ name: String, _ subject: UInt32,
                             _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let b = connectionBox(data) else { return 0 }
    b.handler(.property(metadata: name, subject: subject, key: key.map { String(cString: $0) },
                        value: value.map { String(cString: $0) }))
    return 0
}

private let onSessionProperty: aspw_property_fn = { data, subject, key, _, value in
    forwardProperty(data, "audio-session", subject, key, value)
}

private let onDefaultProperty: aspw_property_fn = { data, subject, key, _, value in
    forwardProperty(data, "default", subject, key, value)
}

private let onRender: aspw_render_fn = { data, dst, maxFrames, channels in
    guard let data, let dst else { return 0 }
    let b = Unmanaged<PipeWireStream.Box>.fromOpaque(data).takeUnretainedValue()
    let buffer = UnsafeMutableBufferPointer(start: dst, count: Int(maxFrames) * Int(channels))
    return UInt32(clamping: b.render(buffer, Int(channels)))
}

private let onStreamState: aspw_stream_state_fn = { data, _, state, error in
    guard let data else { return }
    let b = Unmanaged<PipeWireStream.Box>.fromOpaque(data).takeUnretainedValue()
    let s: PipeWireStream.State
    switch state {
    case -1: s = .error
    case 0: s = .unconnected
    case 1: s = .connecting
    case 2: s = .paused
    default: s = .streaming
    }
    b.stateChanged(s, error.map { String(cString: $0) })
}

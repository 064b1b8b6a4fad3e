// libaudiosession: the C API (include/audio-session/audio-session.h in CAudioSessionAPI)
// over the AudioSession library. Every exported function is `as_*`; meson links this
// target, with the Swift runtime, into libaudiosession.so.0 and exports nothing else.
//
// Nothing a caller passes may trap: NULL pointers, out-of-range enums and unknown option
// bits are answered with AS_ERROR_BAD_PARAM.

import AudioSession
import CAudioSessionAPI
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One `as_session`: the Swift session, the queue of notifications waiting for
/// `as_session_dispatch`, and the pipe whose read end is readable while they wait.
final class CSession: @unchecked Sendable {
    let session: AudioSession
    /// The pipe's read end (the program polls it) and write end (one byte per notification).
    let fd: Int32
    let wakeFD: Int32
    struct Shared: @unchecked Sendable {
        var queue: [AudioSessionNotification] = []
        var callbacks = as_callbacks()
        var data: UnsafeMutableRawPointer?
        var lastError: UnsafeMutablePointer<CChar>?
    }
    let shared = Mutex(Shared())
    var token: ObserverToken?

    init(session: AudioSession, fd: Int32, wakeFD: Int32) {
        self.session = session
        self.fd = fd
        self.wakeFD = wakeFD
    }

    func notified(_ n: AudioSessionNotification) {
        shared.withLock { $0.queue.append(n) }
        // Non-blocking: a full pipe is readable already.
        var one: UInt8 = 1
        _ = write(wakeFD, &one, 1)
    }

    /// Remembers the sentence of a failure and returns its code.
    func fail(_ code: Int32, _ message: String) -> Int32 {
        let copy = strdup(message)
        shared.withLock { s in
            free(s.lastError)
            s.lastError = copy
        }
        return code
    }

    func fail(_ e: SessionError) -> Int32 { fail(errorCode(e.code), e.message) }

    deinit {
        if let token { session.removeObserver(token) }
        close(fd)
        close(wakeFD)
        shared.withLock { free($0.lastError) }
    }
}

/// A C pointer handed to a callback on another thread (the caller's `data`).
struct UnsafeData: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
}

// Every handle (`as_session`, `as_output`, `as_input`) is one retained Swift object:
// a `CSession`, an `AudioOutput` or an `AudioInput`.

private func handle<T: AnyObject>(_ object: T) -> OpaquePointer {
    OpaquePointer(Unmanaged.passRetained(object).toOpaque())
}

private func object<T: AnyObject>(_ p: OpaquePointer?, as _: T.Type = T.self) -> T? {
    p.map { Unmanaged<T>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

/// Gives the handle's reference back (its free function).
private func release<T: AnyObject>(_ p: OpaquePointer?, as _: T.Type = T.self) -> T? {
    p.map { Unmanaged<T>.fromOpaque(UnsafeRawPointer($0)).takeRetainedValue() }
}

private func session(_ p: OpaquePointer?) -> CSession? { object(p) }

/// Why a stream's arguments are refused (`needs`: "an output needs a render function"), nil
/// when they are good.
private func streamRefusal(_ needs: String, hasCallback: Bool, rate: UInt32, channels: UInt32) -> String? {
    guard hasCallback, (8000...384_000).contains(rate), (1...8).contains(channels) else {
        return needs + ", a rate of 8000-384000 Hz and 1-8 channels"
    }
    return nil
}

let badParam = Int32(AS_ERROR_BAD_PARAM.rawValue)

func errorCode(_ c: SessionErrorCode) -> Int32 {
    switch c {
    case .incompatibleCategory: return Int32(AS_ERROR_INCOMPATIBLE_CATEGORY.rawValue)
    case .badParam: return badParam
    case .insufficientPriority: return Int32(AS_ERROR_INSUFFICIENT_PRIORITY.rawValue)
    case .cannotInterruptOthers: return Int32(AS_ERROR_CANNOT_INTERRUPT_OTHERS.rawValue)
    case .isBusy: return Int32(AS_ERROR_IS_BUSY.rawValue)
    case .mediaServicesFailed: return Int32(AS_ERROR_MEDIA_SERVICES_FAILED.rawValue)
    case .sessionNotActive: return Int32(AS_ERROR_SESSION_NOT_ACTIVE.rawValue)
    }
}

// The C enums in the order of the Swift ones (the header numbers them so).
let categories: [Category] = [.ambient, .soloAmbient, .playback, .record, .playAndRecord, .multiRoute]
let modes: [Mode] = [.default, .voiceChat, .gameChat, .videoRecording, .measurement, .moviePlayback, .videoChat, .spokenAudio, .voicePrompt]
let interruptionReasons: [InterruptionReason] = [.default, .builtInMicMuted, .routeDisconnected, .appWasSuspended]
let routeChangeReasons: [RouteChangeReason] = [.unknown, .newDeviceAvailable, .oldDeviceUnavailable, .categoryChange, .override,
                                               .wakeFromSleep, .noSuitableRouteForCategory, .routeConfigurationChange]
let errorNames: [(Int32, String)] = [(0, "ok"), (1, "isBusy")] + SessionErrorCode.allCases.map { (errorCode($0), $0.rawValue) }

/// Names as C strings that live as long as the process.
final class Names: @unchecked Sendable {
    private let table: [String: UnsafeMutablePointer<CChar>]
    private let unknown: UnsafeMutablePointer<CChar>
    init(_ names: [String]) {
        var t: [String: UnsafeMutablePointer<CChar>] = [:]
        for n in names { t[n] = strdup(n) }
        table = t
        unknown = strdup("unknown")
    }
    func get(_ n: String?) -> UnsafePointer<CChar> { UnsafePointer(n.flatMap { table[$0] } ?? unknown) }
}
let names = Names(categories.map(\.rawValue) + modes.map(\.rawValue) + interruptionReasons.map(\.rawValue)
                  + routeChangeReasons.map(\.rawValue) + errorNames.map(\.1))

private func element<T>(_ array: [T], _ raw: UInt32) -> T? {
    Int(exactly: raw).flatMap { array.indices.contains($0) ? array[$0] : nil }
}

final class ResultBox<T>: @unchecked Sendable {
    var value: T?
    init() {}
}

/// Runs async work to completion on the calling thread (the C caller's, never a Swift task's).
private func wait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await body()
        done.signal()
    }
    done.wait()
    guard let v = box.value else { preconditionFailure("the task ended without a value") }
    return v
}

// MARK: Sessions

@_cdecl("as_session_new")
public func as_session_new(_ name: UnsafePointer<CChar>?) -> OpaquePointer? {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return nil }
    for f in fds {
        _ = fcntl(f, F_SETFD, FD_CLOEXEC)
        _ = fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK)
    }
    let s = CSession(session: AudioSession(configuration: .init(applicationName: name.map { String(cString: $0) })),
                     fd: fds[0], wakeFD: fds[1])
    s.token = s.session.addObserver { [weak s] (n: AudioSessionNotification) in s?.notified(n) }
    return handle(s)
}

@_cdecl("as_session_free")
public func as_session_free(_ p: OpaquePointer?) {
    _ = release(p, as: CSession.self)
}

@_cdecl("as_session_set_category")
public func as_session_set_category(_ p: OpaquePointer?, _ category: as_category, _ mode: as_mode, _ options: UInt32) -> Int32 {
    guard let s = session(p) else { return badParam }
    guard let c = element(categories, category.rawValue), let m = element(modes, mode.rawValue) else {
        return s.fail(badParam, "no such category or mode (category \(category.rawValue), mode \(mode.rawValue))")
    }
    guard options < (1 << 8) else { return s.fail(badParam, "unknown category option bits \(options)") }
    do throws(SessionError) {
        try s.session.setCategory(c, mode: m, options: CategoryOptions(rawValue: options))
        return 0
    } catch {
        return s.fail(error)
    }
}

@_cdecl("as_session_set_active")
public func as_session_set_active(_ p: OpaquePointer?, _ active: Bool, _ flags: UInt32) -> Int32 {
    guard let s = session(p) else { return badParam }
    guard flags & ~UInt32(AS_NOTIFY_OTHERS_ON_DEACTIVATION) == 0 else { return s.fail(badParam, "unknown flags \(flags)") }
    let options: SetActiveOptions = flags != 0 ? [.notifyOthersOnDeactivation] : []
    let session = s.session
    let result: Result<ActivationWarning?, SessionError> = wait {
        do throws(SessionError) { return .success(try await session.setActive(active, options: options)) } catch { return .failure(error) }
    }
    switch result {
    case .success(let w): return w == nil ? 0 : Int32(AS_WARNING_IS_BUSY.rawValue)
    case .failure(let e): return s.fail(e)
    }
}

@_cdecl("as_session_last_error")
public func as_session_last_error(_ p: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let s = session(p) else { return UnsafePointer(names.get(nil)) }
    return s.shared.withLock { $0.lastError.map { UnsafePointer($0) } } ?? emptyString
}
nonisolated(unsafe) let emptyString = UnsafePointer(strdup("")!)

@_cdecl("as_session_set_prefers_no_interruptions_from_system_alerts")
public func as_session_set_prefers_no_interruptions_from_system_alerts(_ p: OpaquePointer?, _ prefers: Bool) -> Int32 {
    guard let s = session(p) else { return badParam }
    do throws(SessionError) { try s.session.setPrefersNoInterruptionsFromSystemAlerts(prefers); return 0 } catch { return s.fail(error) }
}

@_cdecl("as_session_set_prefers_interruption_on_route_disconnect")
public func as_session_set_prefers_interruption_on_route_disconnect(_ p: OpaquePointer?, _ prefers: Bool) -> Int32 {
    guard let s = session(p) else { return badParam }
    do throws(SessionError) { try s.session.setPrefersInterruptionOnRouteDisconnect(prefers); return 0 } catch { return s.fail(error) }
}

@_cdecl("as_session_override_output_port")
public func as_session_override_output_port(_ p: OpaquePointer?, _ port: as_port_override) -> Int32 {
    guard let s = session(p) else { return badParam }
    let choice: PortOverride
    switch port {
    case AS_PORT_OVERRIDE_NONE: choice = PortOverride.none
    case AS_PORT_OVERRIDE_SPEAKER: choice = .speaker
    default: return s.fail(badParam, "no such port override (\(port.rawValue))")
    }
    do throws(SessionError) { try s.session.overrideOutputAudioPort(choice); return 0 } catch { return s.fail(error) }
}

@_cdecl("as_session_set_callbacks")
public func as_session_set_callbacks(_ p: OpaquePointer?, _ callbacks: UnsafePointer<as_callbacks>?, _ data: UnsafeMutableRawPointer?) -> Int32 {
    guard let s = session(p) else { return badParam }
    var copy = as_callbacks()
    if let c = callbacks {
        guard c.pointee.version >= 1 else { return s.fail(badParam, "as_callbacks.version must be AS_CALLBACKS_VERSION") }
        // Version 1 is the whole structure today; a later version's extra members are ignored.
        copy = c.pointee
    }
    s.shared.withLock { sh in
        sh.callbacks = copy
        sh.data = data
    }
    return 0
}

@_cdecl("as_session_get_fd")
public func as_session_get_fd(_ p: OpaquePointer?) -> Int32 {
    session(p)?.fd ?? badParam
}

@_cdecl("as_session_dispatch")
public func as_session_dispatch(_ p: OpaquePointer?) -> Int32 {
    guard let s = session(p) else { return badParam }
    var drain = [UInt8](repeating: 0, count: 256)
    while read(s.fd, &drain, drain.count) > 0 {}
    let (pending, cb, data) = s.shared.withLock { sh -> ([AudioSessionNotification], as_callbacks, UnsafeMutableRawPointer?) in
        defer { sh.queue.removeAll() }
        return (sh.queue, sh.callbacks, sh.data)
    }
    for n in pending {
        switch n {
        case .interruption(.began(let reason)):
            cb.interruption?(data, AS_INTERRUPTION_BEGAN,
                             as_interruption_reason(UInt32(interruptionReasons.firstIndex(of: reason) ?? 0)), false)
        case .interruption(.ended(let shouldResume)):
            cb.interruption?(data, AS_INTERRUPTION_ENDED, AS_INTERRUPTION_REASON_DEFAULT, shouldResume)
        case .routeChange(let reason, let previous):
            guard let f = cb.route_change else { continue }
            let r = makeRoute(previous)
            f(data, as_route_change_reason(UInt32(routeChangeReasons.firstIndex(of: reason) ?? 0)), r)
            as_route_free(r)
        case .silenceSecondaryAudioHint(let begin):
            cb.silence_secondary_audio_hint?(data, begin)
        case .mediaServicesWereLost:
            cb.media_services_lost?(data)
        case .mediaServicesWereReset:
            cb.media_services_reset?(data)
        case .declarationRefused(let e):
            _ = s.fail(e)
        }
    }
    return Int32(clamping: pending.count)
}

@_cdecl("as_session_is_other_audio_playing")
public func as_session_is_other_audio_playing(_ p: OpaquePointer?) -> Bool { session(p)?.session.isOtherAudioPlaying ?? false }

@_cdecl("as_session_secondary_audio_should_be_silenced")
public func as_session_secondary_audio_should_be_silenced(_ p: OpaquePointer?) -> Bool {
    session(p)?.session.secondaryAudioShouldBeSilencedHint ?? false
}

@_cdecl("as_session_is_active")
public func as_session_is_active(_ p: OpaquePointer?) -> Bool { session(p)?.session.isActive ?? false }

@_cdecl("as_session_is_interrupted")
public func as_session_is_interrupted(_ p: OpaquePointer?) -> Bool { session(p)?.session.isInterrupted ?? false }

// MARK: Routes

/// A route in C memory: the struct, two port arrays and their strings, each from malloc.
func makeRoute(_ route: Route) -> UnsafeMutablePointer<as_route>? {
    guard let r = calloc(1, MemoryLayout<as_route>.stride)?.assumingMemoryBound(to: as_route.self) else { return nil }
    func ports(_ list: [Port]) -> UnsafeMutablePointer<as_port>? {
        guard !list.isEmpty, let a = calloc(list.count, MemoryLayout<as_port>.stride)?.assumingMemoryBound(to: as_port.self) else { return nil }
        for (i, p) in list.enumerated() {
            a[i] = as_port(name: UnsafePointer(strdup(p.name)), uid: UnsafePointer(strdup(p.uid)), type: UnsafePointer(strdup(p.type.rawValue)))
        }
        return a
    }
    let outs = ports(route.outputs)
    let ins = ports(route.inputs)
    r.pointee = as_route(n_outputs: outs == nil ? 0 : route.outputs.count, outputs: UnsafePointer(outs),
                         n_inputs: ins == nil ? 0 : route.inputs.count, inputs: UnsafePointer(ins))
    return r
}

@_cdecl("as_session_copy_current_route")
public func as_session_copy_current_route(_ p: OpaquePointer?) -> UnsafeMutablePointer<as_route>? {
    guard let s = session(p) else { return nil }
    return makeRoute(s.session.currentRoute)
}

@_cdecl("as_route_free")
public func as_route_free(_ r: UnsafeMutablePointer<as_route>?) {
    guard let r else { return }
    func freePorts(_ a: UnsafePointer<as_port>?, _ n: Int) {
        guard let a else { return }
        for i in 0..<n {
            free(UnsafeMutablePointer(mutating: a[i].name))
            free(UnsafeMutablePointer(mutating: a[i].uid))
            free(UnsafeMutablePointer(mutating: a[i].type))
        }
        free(UnsafeMutableRawPointer(mutating: a))
    }
    freePorts(r.pointee.outputs, r.pointee.n_outputs)
    freePorts(r.pointee.inputs, r.pointee.n_inputs)
    free(r)
}

// MARK: Outputs

@_cdecl("as_output_new")
public func as_output_new(_ p: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ rate: UInt32, _ channels: UInt32,
                          _ paused: Bool, _ render: as_render_fn?, _ data: UnsafeMutableRawPointer?) -> OpaquePointer? {
    guard let s = session(p) else { return nil }
    if let why = streamRefusal("an output needs a render function", hasCallback: render != nil, rate: rate, channels: channels) {
        _ = s.fail(badParam, why)
        return nil
    }
    guard let render else { return nil }
    let userData = UnsafeData(pointer: data)
    do throws(SessionError) {
        let o = try AudioOutput(session: s.session, name: name.map { String(cString: $0) } ?? "audio-session output",
                                rate: Int(rate), channels: Int(channels), paused: paused) { buffer, ch in
            guard let base = buffer.baseAddress, ch > 0 else { return 0 }
            let frames = UInt32(clamping: buffer.count / ch)
            return Int(min(render(userData.pointer, base, frames, UInt32(ch)), frames))
        }
        return handle(o)
    } catch {
        _ = s.fail(error)
        return nil
    }
}

@_cdecl("as_output_set_paused")
public func as_output_set_paused(_ p: OpaquePointer?, _ paused: Bool) {
    guard let o = object(p, as: AudioOutput.self) else { return }
    if paused { o.pause() } else { o.resume() }
}

@_cdecl("as_output_node_id")
public func as_output_node_id(_ p: OpaquePointer?) -> UInt32 { object(p, as: AudioOutput.self)?.nodeID ?? 0 }

@_cdecl("as_output_free")
public func as_output_free(_ p: OpaquePointer?) {
    release(p, as: AudioOutput.self)?.stop()
}

// MARK: Inputs

@_cdecl("as_input_new")
public func as_input_new(_ p: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ rate: UInt32, _ channels: UInt32,
                         _ paused: Bool, _ capture: as_capture_fn?, _ data: UnsafeMutableRawPointer?) -> OpaquePointer? {
    guard let s = session(p) else { return nil }
    if let why = streamRefusal("an input needs a capture function", hasCallback: capture != nil, rate: rate, channels: channels) {
        _ = s.fail(badParam, why)
        return nil
    }
    guard let capture else { return nil }
    let userData = UnsafeData(pointer: data)
    do throws(SessionError) {
        let i = try AudioInput(session: s.session, name: name.map { String(cString: $0) } ?? "audio-session input",
                               rate: Int(rate), channels: Int(channels), paused: paused) { buffer, ch in
            guard let base = buffer.baseAddress, ch > 0 else { return }
            capture(userData.pointer, base, UInt32(clamping: buffer.count / ch), UInt32(ch))
        }
        return handle(i)
    } catch {
        _ = s.fail(error)
        return nil
    }
}

@_cdecl("as_input_set_paused")
public func as_input_set_paused(_ p: OpaquePointer?, _ paused: Bool) {
    guard let i = object(p, as: AudioInput.self) else { return }
    if paused { i.pause() } else { i.resume() }
}

@_cdecl("as_input_node_id")
public func as_input_node_id(_ p: OpaquePointer?) -> UInt32 { object(p, as: AudioInput.self)?.nodeID ?? 0 }

@_cdecl("as_input_free")
public func as_input_free(_ p: OpaquePointer?) {
    release(p, as: AudioInput.self)?.stop()
}

// MARK: Names

@_cdecl("as_category_name")
public func as_category_name(_ c: as_category) -> UnsafePointer<CChar> { names.get(element(categories, c.rawValue)?.rawValue) }

@_cdecl("as_mode_name")
public func as_mode_name(_ m: as_mode) -> UnsafePointer<CChar> { names.get(element(modes, m.rawValue)?.rawValue) }

@_cdecl("as_error_name")
public func as_error_name(_ e: Int32) -> UnsafePointer<CChar> { names.get(errorNames.first { $0.0 == e }?.1) }

@_cdecl("as_interruption_reason_name")
public func as_interruption_reason_name(_ r: as_interruption_reason) -> UnsafePointer<CChar> {
    names.get(element(interruptionReasons, r.rawValue)?.rawValue)
}

@_cdecl("as_route_change_reason_name")
public func as_route_change_reason_name(_ r: as_route_change_reason) -> UnsafePointer<CChar> {
    names.get(element(routeChangeReasons, r.rawValue)?.rawValue)
}

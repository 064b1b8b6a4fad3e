import FoundationEssentials
import Synchronization

/// A playback stream (`pw_stream`) on the session's own connection: it belongs
/// to the session and inherits its declaration (§1).
///
/// `render` is called on PipeWire's data (realtime) thread with an interleaved
/// float buffer and the channel count; it returns the frames written (0 when
/// there is nothing to play right now) and must not block. After PipeWire comes back (R40) the
/// stream is made again on the new connection, paused or playing as it was.
public final class AudioOutput: Sendable {
    public let name: String
    public let rate: Int
    public let channels: Int
    public let properties: [String: String]
    private let session: AudioSession
    private let render: @Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Int
    private let inner: Mutex<Inner>
    private let observer: Mutex<ObserverToken?> = Mutex(nil)
    /// A capture stream (`AudioInput`): `render` gets what was captured.
    let capture: Bool

    /// `pw_stream_state` as last reported.
    public enum State: String, Sendable { case error, unconnected, connecting, paused, streaming }

    private struct Inner: ~Copyable {
        var state: State = .unconnected
        var stream: PipeWireStream?
        var paused: Bool
        var stopped = false
    }

    /// Makes and connects the stream (`pw_stream_new` + `pw_stream_connect`),
    /// playing unless `paused`. `properties` are extra stream properties
    /// (`media.role`, `node.name`, or a per-stream declaration).
    public convenience init(session: AudioSession = .shared, name: String, rate: Int = 48000, channels: Int = 2,
                            properties: [String: String] = [:], paused: Bool = false,
                            render: @escaping @Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Int) throws(SessionError) {
        try self.init(session: session, name: name, rate: rate, channels: channels, properties: properties,
                      paused: paused, capture: false, render: render)
    }

    init(session: AudioSession, name: String, rate: Int, channels: Int, properties: [String: String],
         paused: Bool, capture: Bool,
         render: @escaping @Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Int) throws(SessionError) {
        self.capture = capture
        self.session = session
        self.name = name
        self.rate = rate
        self.channels = channels
        self.properties = properties
        self.render = render
        inner = Mutex(Inner(stream: nil, paused: paused))
        guard make() else {
            throw SessionError(code: .mediaServicesFailed, message: "cannot create a PipeWire stream (is PipeWire running?)")
        }
        let token = session.addObserver { [weak self] n in
            guard let self else { return }
            switch n {
            case .mediaServicesWereLost:
                // Off the PipeWire thread; a no-op when the connection's teardown got there first.
                let old = self.inner.withLock { i -> PipeWireStream? in defer { i.stream = nil }; return i.stream }
                Task.detached { old?.destroy() }
            case .mediaServicesWereReset:
                _ = self.make()
            default: break
            }
        }
        observer.withLock { $0 = token }
    }

    deinit {
        if let t = observer.withLock({ $0 }) { session.removeObserver(t) }
        inner.withLock { $0.stream }?.destroy()
    }

    private func make() -> Bool {
        let (paused, stopped) = inner.withLock { ($0.paused, $0.stopped) }
        guard !stopped, let connection = session.connection else { return false }
        var props = properties
        props["media.type"] = props["media.type"] ?? "Audio"
        props["media.category"] = props["media.category"] ?? (capture ? "Capture" : "Playback")
        props["media.name"] = props["media.name"] ?? name
        // The session manager keys the user's stream volume on it (WirePlumber restore-stream).
        if let app = session.configuration.applicationName { props["application.name"] = props["application.name"] ?? app }
        let stream = connection.makeStream(
            name: name, properties: props, rate: UInt32(clamping: rate), channels: UInt32(clamping: channels),
            active: !paused, capture: capture, render: render, stateChanged: { [weak self] st, _ in
                let mapped: State
                switch st {
                case .error: mapped = .error
                case .unconnected: mapped = .unconnected
                case .connecting: mapped = .connecting
                case .paused: mapped = .paused
                case .streaming: mapped = .streaming
                }
                self?.inner.withLock { $0.state = mapped }
            })
        inner.withLock { $0.stream = stream }
        return stream != nil
    }

    /// The stream's node id, once PipeWire has given it one.
    public var nodeID: UInt32? { inner.withLock { $0.stream }?.nodeID }

    /// The stream's state (`paused` also when the policy paused its node).
    public var state: State { inner.withLock { $0.state } }

    /// Whether the application paused it.
    public var isPaused: Bool { inner.withLock { $0.paused } }

    /// `pw_stream_set_active(false)`: stop asking for samples.
    public func pause() {
        let s = inner.withLock { i -> PipeWireStream? in i.paused = true; return i.stream }
        s?.setActive(false)
    }

    /// `pw_stream_set_active(true)`.
    ///
    /// When the policy paused the node and then resumed it while this stream was
    /// inactive (the application paused on `began`, as Apple's guide says), the
    /// node is already active in the daemon: a lone `set_active(true)` changes
    /// nothing there, no Start reaches the stream and it stays silent (seen with
    /// PipeWire 0.3.65). Activating, deactivating and activating again makes the
    /// daemon see its owner stop and start the node.
    public func resume() {
        let s = inner.withLock { i -> PipeWireStream? in i.paused = false; return i.stream }
        s?.setActive(true)
        s?.setActive(false)
        s?.setActive(true)
    }

    /// `pw_stream_update_properties`.
    public func updateProperties(_ props: [String: String]) {
        inner.withLock { $0.stream }?.updateProperties(props)
    }

    /// Disconnects and destroys the stream for good.
    public func stop() {
        let s = inner.withLock { i -> PipeWireStream? in
            i.stopped = true
            defer { i.stream = nil }
            return i.stream
        }
        s?.destroy()
    }
}

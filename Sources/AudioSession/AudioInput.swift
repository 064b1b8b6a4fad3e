/// A capture stream (`pw_stream`, PW_DIRECTION_INPUT) on the session's own connection:
/// it belongs to the session (a `record` or `playAndRecord` declaration), follows
/// `setPreferredInput`, and is paused and resumed by the policy like an output
/// (microphone mute, R19; interruptions).
///
/// `capture` is called on PipeWire's data (realtime) thread with the interleaved float
/// frames just captured and the channel count; it must not block. After PipeWire comes
/// back (R40) the stream is made again on the new connection.
public final class AudioInput: Sendable {
    private let stream: AudioOutput

    /// Makes and connects the stream, capturing unless `paused`. `properties` are extra
    /// stream properties (`node.name`, a per-stream declaration).
    public init(session: AudioSession = .shared, name: String, rate: Int = 48000, channels: Int = 2,
                properties: [String: String] = [:], paused: Bool = false,
                capture: @escaping @Sendable (UnsafeBufferPointer<Float>, Int) -> Void) throws(SessionError) {
        stream = try AudioOutput(session: session, name: name, rate: rate, channels: channels,
                                 properties: properties, paused: paused, capture: true) { frames, channels in
            capture(UnsafeBufferPointer(frames), channels)
            return 0
        }
    }

    public var name: String { stream.name }
    /// The stream's node id, once PipeWire has given it one.
    public var nodeID: UInt32? { stream.nodeID }
    /// The stream's state (`paused` also when the policy paused its node).
    public var state: AudioOutput.State { stream.state }
    /// Whether the application paused it.
    public var isPaused: Bool { stream.isPaused }
    /// `pw_stream_set_active(false)`.
    public func pause() { stream.pause() }
    /// `pw_stream_set_active(true)` (see `AudioOutput.resume()`).
    public func resume() { stream.resume() }
    /// Disconnects and destroys the stream for good.
    public func stop() { stream.stop() }
}

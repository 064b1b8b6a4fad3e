import FoundationEssentials
import Synchronization

/// `AVAudioSession.interruptionNotification`'s payload.
public enum Interruption: Sendable, Equatable {
    /// `.began` with `AVAudioSession.InterruptionReason` (R11, R12): the
    /// session's output has already stopped.
    case began(reason: InterruptionReason)
    /// `.ended`; `shouldResume` is `AVAudioSession.InterruptionOptions.shouldResume` (R14).
    case ended(shouldResume: Bool)
}

/// The notifications of `AVAudioSession`, as one enum.
public enum AudioSessionNotification: Sendable, Equatable {
    /// `interruptionNotification`.
    case interruption(Interruption)
    /// `routeChangeNotification`: reason and `AVAudioSessionRouteChangePreviousRouteKey`.
    case routeChange(reason: RouteChangeReason, previousRoute: Route)
    /// `silenceSecondaryAudioHintNotification` (true: begin).
    case silenceSecondaryAudioHint(begin: Bool)
    /// `mediaServicesWereLostNotification` (R40).
    case mediaServicesWereLost
    /// `mediaServicesWereResetNotification`: the category is declared again;
    /// reactivate the session (R40).
    case mediaServicesWereReset
    /// The policy refused a declaration it received (should not happen through
    /// this library, which validates first).
    case declarationRefused(SessionError)
}

/// Returned by ``AudioSession/addObserver(_:)``; pass to ``AudioSession/removeObserver(_:)``.
public struct ObserverToken: Sendable, Hashable {
    let id: UInt64
}

extension AudioSession {
    /// Every notification of this session, from now on, in order.
    public var notifications: AsyncStream<AudioSessionNotification> {
        let (stream, continuation) = AsyncStream<AudioSessionNotification>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { s -> UInt64? in
            guard !s.closed else { return nil }
            s.nextSubscriber &+= 1
            s.subscribers[s.nextSubscriber] = continuation
            return s.nextSubscriber
        }
        guard let id else { continuation.finish(); return stream }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// `interruptionNotification`.
    public var interruptions: AsyncStream<Interruption> {
        notifications.compactMapStream { if case .interruption(let i) = $0 { i } else { nil } }
    }

    /// `routeChangeNotification`.
    public var routeChanges: AsyncStream<(reason: RouteChangeReason, previousRoute: Route)> {
        notifications.compactMapStream { if case .routeChange(let r, let p) = $0 { (r, p) } else { nil } }
    }

    /// `silenceSecondaryAudioHintNotification` (true: begin).
    public var silenceSecondaryAudioHints: AsyncStream<Bool> {
        notifications.compactMapStream { if case .silenceSecondaryAudioHint(let b) = $0 { b } else { nil } }
    }

    /// `mediaServicesWereLostNotification` and `mediaServicesWereResetNotification`:
    /// true for reset, false for lost.
    public var mediaServicesChanges: AsyncStream<Bool> {
        notifications.compactMapStream {
            switch $0 {
            case .mediaServicesWereLost: false
            case .mediaServicesWereReset: true
            default: nil
            }
        }
    }

    /// The callback form (`NotificationCenter.addObserver`). The handler runs on
    /// the library's PipeWire thread: it must return quickly and must not wait
    /// for `setActive` (start a `Task` for that).
    public func addObserver(_ handler: @escaping @Sendable (AudioSessionNotification) -> Void) -> ObserverToken {
        state.withLock { s in
            s.nextSubscriber &+= 1
            s.observers[s.nextSubscriber] = handler
            return ObserverToken(id: s.nextSubscriber)
        }
    }

    public func removeObserver(_ token: ObserverToken) {
        _ = state.withLock { $0.observers.removeValue(forKey: token.id) }
    }

    /// Every policy event of every session as published (`pw-session monitor`).
    public var policyEvents: AsyncStream<PolicyEvent> {
        let (stream, continuation) = AsyncStream<PolicyEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { s -> UInt64 in
            s.nextSubscriber &+= 1
            s.eventSubscribers[s.nextSubscriber] = continuation
            return s.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.eventSubscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers to every subscriber and observer (called without the state lock held).
    func deliver(_ n: AudioSessionNotification) {
        let (subs, obs) = state.withLock { s in (Array(s.subscribers.values), Array(s.observers.values)) }
        for c in subs { c.yield(n) }
        for o in obs { o(n) }
    }
}

extension AsyncStream where Element: Sendable {
    /// A stream of the transformed non-nil elements; cancelling it cancels the source.
    func compactMapStream<T: Sendable>(_ transform: @escaping @Sendable (Element) -> T?) -> AsyncStream<T> {
        let source = self
        return AsyncStream<T> { continuation in
            let task = Task {
                for await e in source {
                    if let t = transform(e) { continuation.yield(t) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

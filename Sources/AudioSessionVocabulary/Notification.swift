/// What a session hears: the notifications of `AVAudioSession`.
public enum Notification: Sendable, Equatable {
    /// `AVAudioSession.interruptionNotification`, type `.began`.
    case interruptionBegan(reason: InterruptionReason)
    /// `AVAudioSession.interruptionNotification`, type `.ended`, option `.shouldResume`.
    case interruptionEnded(shouldResume: Bool)
    /// `AVAudioSession.routeChangeNotification`.
    case routeChange(reason: RouteChangeReason, previous: Route, current: Route)
    /// `AVAudioSession.silenceSecondaryAudioHintNotification` (`.begin` = true).
    case silenceSecondaryAudioHint(begin: Bool)
    /// `AVAudioSession.mediaServicesWereLostNotification`.
    case mediaServicesWereLost
    /// `AVAudioSession.mediaServicesWereResetNotification`.
    case mediaServicesWereReset
    /// The answer to `setActive(_:options:)` (`audio.session.active`): success, possibly with a warning.
    case activationResult(Result<ActivationWarning?, SessionError>)
    /// The answer to `setCategory(_:mode:options:)` when the declaration was refused.
    case declarationRefused(SessionError)
}

/// `AVAudioSession.InterruptionReason`.
public enum InterruptionReason: String, Sendable, Equatable, CaseIterable {
    case `default`, builtInMicMuted, routeDisconnected, appWasSuspended
}

/// `AVAudioSession.RouteChangeReason`.
public enum RouteChangeReason: String, Sendable, Equatable, CaseIterable {
    case unknown, newDeviceAvailable, oldDeviceUnavailable, categoryChange, override
    case wakeFromSleep, noSuitableRouteForCategory, routeConfigurationChange
}

/// A successful activation change that still deserves a word (R8).
public enum ActivationWarning: String, Sendable, Equatable {
    /// `AVAudioSession.ErrorCode.isBusy`: deactivated while streams still run.
    case isBusy
}

/// What the desktop says about the screen lock and Do Not Disturb, source by source, and
/// what the agent has asked of the policy: the decisions of `DesktopSwitches`, without I/O.
///
/// A switch is on when any source that is there says so (a locked logind session, an active
/// screensaver; GNOME's banners off, a notification server that inhibits). With no source at
/// all the desktop says nothing, and the agent leaves the switch as it is. The agent writes a
/// switch only when the desktop's answer differs from what it last wrote: a switch set by
/// hand (`pw-session lock`, `pw-session silent`) holds until the desktop's answer changes.
public struct DesktopState: Sendable, Equatable {
    /// Where a fact comes from.
    public enum Source: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// systemd-logind's `LockedHint` of the user's session (system bus).
        case logind
        /// A screensaver's `Active` (`org.freedesktop.ScreenSaver`, `org.gnome.ScreenSaver`), by bus name.
        case screenSaver(String)
        /// GNOME's `org.gnome.desktop.notifications show-banners` (false: Do Not Disturb).
        case gnomeBanners
        /// The notification server's `Inhibited` property (KDE Plasma and others).
        case notificationServer

        public var description: String {
            switch self {
            case .logind: return "logind"
            case .screenSaver(let name): return name
            case .gnomeBanners: return "GNOME's notification banners setting"
            case .notificationServer: return "the notification server"
            }
        }
    }

    /// The screen-lock sources that are there now, with what each says (true: locked).
    public private(set) var lock: [Source: Bool] = [:]
    /// The Do Not Disturb sources that are there now (true: Do Not Disturb is on).
    public private(set) var doNotDisturb: [Source: Bool] = [:]
    /// What the agent last wrote to the policy.
    public private(set) var written: (lock: Bool?, silent: Bool?) = (nil, nil)

    public init() {}

    public static func == (a: DesktopState, b: DesktopState) -> Bool {
        a.lock == b.lock && a.doNotDisturb == b.doNotDisturb && a.written == b.written
    }

    /// A screen-lock source says `locked`; nil: it went away.
    public mutating func lock(_ source: Source, _ locked: Bool?) { lock[source] = locked }
    /// A Do Not Disturb source says `on`; nil: it went away.
    public mutating func doNotDisturb(_ source: Source, _ on: Bool?) { doNotDisturb[source] = on }

    /// The desktop's answer: nil when no source is there.
    public var screenLocked: Bool? { lock.isEmpty ? nil : lock.values.contains(true) }
    public var silent: Bool? { doNotDisturb.isEmpty ? nil : doNotDisturb.values.contains(true) }

    /// What to write now (nil: nothing), remembered as written.
    public mutating func writes(screenLock follow: Bool, doNotDisturb followDND: Bool) -> (lock: Bool?, silent: Bool?) {
        var out: (lock: Bool?, silent: Bool?) = (nil, nil)
        if follow, let l = screenLocked, l != written.lock {
            written.lock = l
            out.lock = l
        }
        if followDND, let s = silent, s != written.silent {
            written.silent = s
            out.silent = s
        }
        return out
    }
}

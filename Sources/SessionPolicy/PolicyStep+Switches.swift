/// The global switches (R20): silent mode (the ring/silent switch) and the screen lock.
/// Either one silences ambient and soloAmbient output; both stay as set.
public enum GlobalSwitch: Sendable, Hashable, CaseIterable {
    case silentMode
    case screenLock
}

/// Why a client may not set the global switches (R20).
public enum SwitchRefusal: Sendable, Hashable {
    /// The client is sandboxed (restricted by the access module, or in a Flatpak).
    case sandboxed
    /// `PolicyConfiguration.controlApplications` is not empty and does not name the client.
    case notAllowed
}

/// What one update of a client's own properties asks of the global switches: the
/// switches it sets to a new value; nil leaves a switch as it is.
public struct SwitchRequest: Sendable, Equatable {
    public var silentMode: Bool?
    public var screenLock: Bool?
    /// The `pipewire.access` the properties this request came with carry. It can only
    /// refuse (when it confines): an unconfined value grants nothing, the client's
    /// identity decides then. It travels with the request, not in the identity, because
    /// those properties may be the client's own writing: they may cost it this request,
    /// never the priorities its identity grants it elsewhere.
    public var access: ClientAccess?

    public init(silentMode: Bool? = nil, screenLock: Bool? = nil, access: ClientAccess? = nil) {
        self.silentMode = silentMode
        self.screenLock = screenLock
        self.access = access
    }

    /// The value asked for `s`, nil when the request leaves it alone.
    public subscript(_ s: GlobalSwitch) -> Bool? {
        get {
            switch s {
            case .silentMode: return silentMode
            case .screenLock: return screenLock
            }
        }
        set {
            switch s {
            case .silentMode: silentMode = newValue
            case .screenLock: screenLock = newValue
            }
        }
    }

    /// Whether it asks nothing of either switch.
    public var isEmpty: Bool { silentMode == nil && screenLock == nil }
}

extension PolicyReading {
    /// Who may set the global switches (R20): they change every session, so they are
    /// granted on who the client is, as the module established it (`ClientFacts.identity`,
    /// in the policy's own record of the client), never on what it calls itself
    /// (`application.name`). Sandboxed clients may not; when `controlApplications` is not
    /// empty, only the clients it names may. A client the policy has no record of has the
    /// identity of one that gave none (trusted, as when the policy is driven directly).
    func switchRefusal(_ c: ClientID, _ request: SwitchRequest) -> SwitchRefusal? {
        let id = identity(c)
        if id.sandboxed || request.access?.confines == true { return .sandboxed }
        let allowed = configuration.controlApplications
        if !allowed.isEmpty && !id.isNamed(byAnyOf: allowed) { return .notAllowed }
        return nil
    }
}

extension PolicyStep {
    /// One decision for one request, whichever switches it sets: refused, each switch it
    /// asked for is answered with `Effect.switchRefused` and nothing changes; permitted,
    /// the switches take their new values and every active session's gains are refreshed
    /// (one `publishGlobal` at the end of the event when the global state changed).
    mutating func switchesRequested(_ c: ClientID, _ asked: SwitchRequest) {
        // A switch the client asks for as it asked last time is not asked again: a client
        // that rewrites its properties does not flip a switch someone else changed since.
        var request = asked
        if model.clients[c] != nil {
            let last = model.switchRequests[c] ?? SwitchRequest()
            for s in GlobalSwitch.allCases where request[s] == last[s] { request[s] = nil }
            state.rememberSwitchRequest(c, asked)
        }
        guard !request.isEmpty else { return }
        if let refusal = switchRefusal(c, request) {
            for s in GlobalSwitch.allCases where request[s] != nil {
                emit(.switchRefused(c, s, reason: refusal))
            }
            return
        }
        for s in GlobalSwitch.allCases {
            if let on = request[s] { emit(.switchSet(c, s, on)) }
        }
        for s in GlobalSwitch.allCases {
            if let on = request[s], state.setSwitch(s, on) { refreshAll = true }
        }
    }
}

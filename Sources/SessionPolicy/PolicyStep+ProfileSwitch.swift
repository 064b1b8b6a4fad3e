/// R35: a Bluetooth headset's profile switch is not a loss.
///
/// When a call starts, the headset is switched from A2DP to hands-free (HFP) and back when
/// it ends; the user can switch it too. PipeWire's Bluetooth plugin then removes the sink
/// of the old profile and makes one for the new, on the same device. From the sink's
/// removal alone a switch cannot be told from a loss, so the streams that played on it
/// are held paused (nothing reaches another output, as for a loss) until the headset
/// tells which: a sink of the headset appears (a switch), or its profile turns off or the
/// headset goes, or nothing comes within `profileSwitchMilliseconds` (a loss: R30, R31).
///
/// After a switch each held stream waits until it is linked to the headset's new sink,
/// then its session is told `routeChange(routeConfigurationChange)` and the stream plays
/// again if it played (or its interruption ended with a resume meanwhile), when the new
/// profile suits the session: A2DP suits sessions with `allowBluetoothA2DP` (every
/// output-only category), hands-free those with `allowBluetoothHFP` (implied by voiceChat
/// and videoChat), and a call suits either. A session the new profile does not suit is
/// told `routeChange(noSuitableRouteForCategory)` and stays held until the headset
/// switches back to a profile that suits it: music paused by a call comes back in A2DP,
/// not in the hands-free profile between the call's end and the switch back. Its program
/// starting it itself (the user pressed play) ends the hold.
extension PolicyReading {
    /// The headset whose sink `ep` is, when its removal may be a profile switch: a Bluetooth
    /// sink (the device fixes its port type) whose device is known and not off.
    func switchingDevice(_ ep: EndpointInfo) -> DeviceID? {
        guard configuration.profileSwitchMilliseconds > 0, ep.kind == .sink, ep.facts.portTypeFixedByDevice,
              let d = ep.facts.device, let profile = model.devices[d], !profile.isOff else { return nil }
        return d
    }

    /// Whether a session may play on a headset port of this type after a switch (R35).
    func suitsAfterSwitch(_ t: SessionTraits, _ type: PortType) -> Bool {
        if t.priorityClass == .call { return true }
        switch type {
        case .bluetoothHFP: return t.options.contains(.allowBluetoothHFP)
        case .bluetoothA2DP: return t.options.contains(.allowBluetoothA2DP)
        default: return true
        }
    }

    /// The streams held for the headset's switch, in node order.
    func streamsHeld(for d: DeviceID) -> [NodeID] {
        model.streams.compactMap { n, st in st.switchHold?.device == d ? n : nil }.sorted()
    }
}

extension PolicyStep {
    /// The headset `d`'s sink `e` went while the headset stayed: its streams are held (those
    /// that play are paused now; those an interruption paused wait for the verdict too), and
    /// the window opens.
    mutating func holdForProfileSwitch(_ e: NodeID, device d: DeviceID) {
        guard let uid = model.endpoints[e]?.port.uid else { return }
        let nodes = streamsPlaying(into: e) { st in
            st.runs || st.fade == .fadingOut || st.switchHold != nil || (st.pausedByPolicy && st.lostOutput == nil)
        }
        guard !nodes.isEmpty else { return }
        var record = model.profileSwitches[d] ?? ProfileSwitch(window: nil, lostOutput: uid)
        record.lostOutput = uid
        for n in nodes {
            guard let s = sessionOf(n) else { continue }
            if record.previous[s] == nil { record.previous[s] = route(s) }
            touched.insert(s)
        }
        for n in nodes {
            guard let st = model.streams[n] else { continue }
            let resume = st.switchHold?.resume ?? st.runs
            if st.runs || st.fade == .fadingOut { pause(n) }
            state.updateStream(n) { $0.switchHold = SwitchHold(device: d, resume: resume) }
        }
        let token = state.newTimerToken()
        record.window = token
        state.setProfileSwitch(d, record)
        emit(.scheduleTimer(token: token, milliseconds: configuration.profileSwitchMilliseconds))
    }

    /// A sink appeared: of a headset whose switch is pending, the switch happened (its
    /// window closes; the held streams wait for their links to it). Whether it was that.
    mutating func profileSwitchSinkAppeared(_ e: NodeID) -> Bool {
        guard let ep = model.endpoints[e], ep.kind == .sink, let d = ep.facts.device,
              var record = model.profileSwitches[d], record.window != nil else { return false }
        record.window = nil
        state.setProfileSwitch(d, record)
        return true
    }

    /// `n` was linked to `e`: a held stream that reaches a sink of its headset settles (R35).
    mutating func settleProfileSwitch(_ n: NodeID, linkedTo e: NodeID) {
        guard let hold = model.streams[n]?.switchHold, let ep = model.endpoints[e], ep.kind == .sink,
              ep.facts.device == hold.device, var record = model.profileSwitches[hold.device],
              let s = sessionOf(n), let t = traits(s) else { return }
        // A sink of the headset before the window closed is its new profile's too.
        record.window = nil
        let current = route(s)
        let suits = suitsAfterSwitch(t, ep.port.type)
        if let previous = record.previous[s], previous != current {
            notify(s, .routeChange(reason: suits ? .routeConfigurationChange : .noSuitableRouteForCategory,
                                   previous: previous, current: current))
        }
        record.previous[s] = current
        touched.insert(s)
        state.setProfileSwitch(hold.device, record)
        guard suits else { return }
        endSwitchHold(n)
        if hold.resume, isActive(s), model.marks[s]?.interruption == nil { resumePausedStreams(s) }
    }

    /// The headset's profile was read: `off` while a switch is pending is a loss.
    mutating func deviceProfileRead(_ d: DeviceID, _ profile: DeviceProfile) {
        state.setDevice(d, profile)
        if profile.isOff { profileSwitchFailed(d) }
    }

    /// The headset is gone: a pending switch is a loss.
    mutating func deviceRemoved(_ d: DeviceID) {
        state.setDevice(d, nil)
        profileSwitchFailed(d)
    }

    /// The timer `token` ran out: when it is a switch's window with no sink of the headset
    /// seen, a loss. Whether the token was a switch's.
    mutating func profileSwitchWindowEnded(_ token: UInt64) -> Bool {
        guard let d = model.profileSwitches.first(where: { $0.value.window == token })?.key else { return false }
        profileSwitchFailed(d)
        return true
    }

    /// The headset did not come back with a sink: its held streams were lost with it (R30,
    /// R31). They stay paused; an interruption one of them waits out ends without a resume.
    mutating func profileSwitchFailed(_ d: DeviceID) {
        guard let record = model.profileSwitches[d] else { return }
        state.setProfileSwitch(d, nil)
        var sessions: Set<SessionID> = []
        for n in streamsHeld(for: d) {
            state.updateStream(n) {
                $0.switchHold = nil
                $0.lostOutput = record.lostOutput
            }
            if let s = sessionOf(n) { sessions.insert(s) }
        }
        for s in sessions.sorted() {
            if model.marks[s]?.interruption?.wasPlaying == true {
                state.updateMarks(s) { $0.interruption?.wasPlaying = false }
            }
            sessionLostOutput(s, previous: record.previous[s] ?? route(s), current: route(s))
        }
    }

    /// The hold of `n` ends: its program starts it (R16) or lets go of it itself.
    mutating func endSwitchHold(_ n: NodeID) {
        guard let d = model.streams[n]?.switchHold?.device else { return }
        state.updateStream(n) { $0.switchHold = nil }
        guard var record = model.profileSwitches[d] else { return }
        if let s = sessionOf(n), streamsHeld(for: d).allSatisfy({ sessionOf($0) != s }) { record.previous[s] = nil }
        state.setProfileSwitch(d, record.previous.isEmpty && record.window == nil ? nil : record)
    }
}

/// Calls and recordings recognised from the graph (R43): a browser's call, a call program
/// that declares nothing and sets no role. The evidence is the daemon's own graph: a link
/// from a source (a microphone, real or virtual) into the program's capture stream. What the
/// program says about itself plays no part, beyond grouping its streams by process.

/// A program: the streams of one process (its `application.process.id`, on the stream or
/// its client), or of one client when no process is known. A PulseAudio program may open a
/// connection per stream; its streams are still one program.
public enum ProgramKey: Hashable, Sendable {
    case process(UInt32)
    case client(ClientID)
}

/// How many of a program's streams capture a microphone while running, and how many play.
struct ProgramActivity: Equatable {
    var capturing = 0
    var playing = 0
    var isEmpty: Bool { capturing == 0 && playing == 0 }
    /// R43: it captures a microphone while it plays.
    var inCall: Bool { capturing > 0 && playing > 0 }
}

/// What a stream's program and its share of the program's activity are read from: its facts
/// (one reference), client and direction. Taken from a record where it lies, it spares a
/// copy of the whole record, its strings retained and released again.
struct ProgramPart {
    var facts: StreamFacts
    var client: ClientID
    var direction: StreamDirection

    init(_ st: borrowing StreamInfo) {
        facts = st.facts
        client = st.client
        direction = st.direction
    }
}

extension PolicyReading {
    /// The program a stream belongs to.
    func program(of n: NodeID) -> ProgramKey? {
        guard let st = model.streams[n] else { return nil }
        return program(of: st)
    }

    func program(of st: StreamInfo) -> ProgramKey {
        program(of: ProgramPart(st))
    }

    func program(of part: ProgramPart) -> ProgramKey {
        if let p = part.facts.processID ?? model.clients[part.client]?.facts.processID { return .process(p) }
        return .client(part.client)
    }

    /// A capture stream linked from a source (a microphone, real or virtual): not a sink's
    /// monitor (F1 keeps those out) and not another program's stream.
    func capturesMicrophone(_ n: NodeID, _ st: StreamInfo) -> Bool {
        capturesMicrophone(n, direction: st.direction)
    }

    func capturesMicrophone(_ n: NodeID, direction: StreamDirection) -> Bool {
        guard direction == .input else { return false }
        for l in index.linksOfNode[n] ?? [] {
            guard let link = model.links[l], link.input == n, model.endpoints[link.output]?.kind == .source else { continue }
            return true
        }
        return false
    }

    /// Whether the stream takes part in its program's activity when it runs: not a virtual
    /// device's stream, not of an unmanaged role, and a capture only of a microphone.
    func takesPart(_ n: NodeID, _ st: StreamInfo) -> Bool {
        st.runs && takesPartWhenRunning(n, st)
    }

    /// `takesPart` for a stream that runs (whatever `st.runs` says).
    func takesPartWhenRunning(_ n: NodeID, _ st: StreamInfo) -> Bool {
        takesPartWhenRunning(n, ProgramPart(st))
    }

    func takesPartWhenRunning(_ n: NodeID, _ part: ProgramPart) -> Bool {
        guard configuration.callsFromGraph, part.facts.linkGroup == nil else { return false }
        if part.direction == .input && !capturesMicrophone(n, direction: part.direction) { return false }
        return !roleRule(part.facts).unmanaged
    }

    /// What one stream adds to its program's activity: it captures a microphone and runs, or
    /// it plays, and (when the policy listens to outputs) has carried sound. Streams of
    /// virtual devices and of unmanaged roles add nothing.
    func activity(of n: NodeID, _ st: StreamInfo) -> ProgramActivity {
        activity(of: n, st, runs: st.runs, heard: st.heard)
    }

    /// `activity(of:_:)` with the stream's `runs` and `heard` as given: what it added before
    /// a change made to its record in place.
    func activity(of n: NodeID, _ st: StreamInfo, runs: Bool, heard: Bool) -> ProgramActivity {
        guard runs else { return ProgramActivity() }
        let part = ProgramPart(st)
        return activity(of: part, takesPart: takesPartWhenRunning(n, part), runs: runs, heard: heard)
    }

    /// `activity(of:_:runs:heard:)` with `takesPartWhenRunning` already asked.
    func activity(of part: ProgramPart, takesPart: Bool, runs: Bool, heard: Bool) -> ProgramActivity {
        guard runs, takesPart else { return ProgramActivity() }
        if part.direction == .input { return ProgramActivity(capturing: 1, playing: 0) }
        if configuration.listensToOutputs && !heard { return ProgramActivity() }
        return ProgramActivity(capturing: 0, playing: 1)
    }

    /// What the program's streams do, as counted in the index (`activityOfProgram`).
    func programActivity(_ key: ProgramKey) -> (capturing: Bool, playing: Bool) {
        let a = index.activityOfProgram[key] ?? ProgramActivity()
        return (a.capturing > 0, a.playing > 0)
    }

    /// R43: the rule a legacy stream follows instead of its role's when its program is in a
    /// call (it captures a microphone while it plays: every stream of it is the call) or
    /// records (its microphone stream, while it does not play). nil: its role's rule.
    /// Unmanaged roles (Production, DSP, Test) and the streams of a virtual device (they carry
    /// a `node.link-group`: loopbacks, filters, echo cancellers, which capture a microphone
    /// and play all the time) are never a call; `calls.from-graph = false` turns this off.
    func inferredRule(_ n: NodeID, _ st: StreamInfo, role: RoleRule) -> RoleRule? {
        guard configuration.callsFromGraph, !role.unmanaged, role.priority != .call, st.facts.linkGroup == nil else { return nil }
        let (capturing, playing) = programActivity(program(of: st))
        if capturing && playing { return .inferredCall }
        if st.direction == .input && capturesMicrophone(n, st) { return .inferredRecording }
        return nil
    }

    /// R43: the program whose call session `s` (with traits `t`) is, when the call was
    /// recognised from the graph (a legacy stream whose role makes no call); nil otherwise.
    func inferredCallProgram(_ s: SessionID, _ t: SessionTraits) -> ProgramKey? {
        guard t.priorityClass == .call, case .stream(let n) = s, let st = model.streams[n],
            roleRule(st.facts).priority != .call
        else { return nil }
        return program(of: st)
    }

    /// Whether session `a` is of program `key`: one of its streams is, or its client runs
    /// as the program's process.
    func belongs(_ a: SessionID, to key: ProgramKey) -> Bool {
        if case .client(let c) = a, let p = model.clients[c]?.facts.processID, key == .process(p) { return true }
        return anyStream(of: a) { program(of: $0) == key }
    }

    /// R43: whether `call` is a call recognised from the graph of the program session `a` is
    /// of. Such a call neither interrupts nor holds back its own program's sessions: its
    /// microphone and its far end are the call.
    func isOwnInferredCall(_ call: SessionID, of a: SessionID) -> Bool {
        guard let t = traits(call), let key = inferredCallProgram(call, t) else { return false }
        return belongs(a, to: key)
    }
}

extension RoleRule {
    /// R43: a call recognised from the graph. Call priority (R10); it mixes with the
    /// program's own streams and with other calls, and gives back what it interrupted when
    /// it ends (transient).
    static let inferredCall = RoleRule(
        category: .playAndRecord, mode: .voiceChat, options: [.mixWithOthers], transient: true, priority: .call)
    /// R43: a program that only records: a recording as R21 counts it (alerts and ambient
    /// output silenced), which mixes: the music plays on. A call does not pause it (a
    /// capture makes no sound), so a second program's call is seen when it starts playing.
    static let inferredRecording = RoleRule(category: .record, options: [.mixWithOthers], exemptFromCalls: true)
}

extension PolicyStep {
    /// The session's traits as this event found them: a session that stops or goes in the
    /// same event as its program's call ends (R43) ends what it interrupted as the call it was.
    func traitsAsTheEventFound(_ s: SessionID) -> SessionTraits? {
        state.traitChanges.isEmpty ? traits(s) : state.traitChanges[s] ?? traits(s)
    }

    /// R43: sessions whose traits the graph changed in this event (a program started or
    /// stopped capturing or playing). An active one is arbitrated again with its new traits;
    /// one that stops being a call gives back what it interrupted, with the grace period.
    mutating func applyProgramChanges() {
        let changes = state.takeTraitChanges()
        guard !changes.isEmpty else { return }
        for s in changes.keys.sorted() {
            touched.insert(s)
            guard exists(s), isActive(s), let before = changes[s] else { continue }
            applyDeclarationChange(s, before: before)
            if before.priorityClass == .call, traits(s)?.priorityClass != .call {
                endOrHold(s, traits: before, resumable: before.transient)
            }
        }
    }
}

extension PolicyStep {
    /// R43: the module heard sound on an output stream it listens to.
    mutating func streamHeard(_ n: NodeID) {
        guard let st = model.streams[n], st.listened, !st.heard else { return }
        state.updateStream(n) { $0.heard = true }
    }

    /// R43: which output streams the module listens to, for every program whose activity or
    /// streams changed in this event. While a program captures a microphone, each of its
    /// outputs that takes part and has not carried sound yet is listened to, until it does
    /// (then it counts as playing: the program is in a call) or stops running. A program that
    /// stops capturing forgets what was heard. Beyond `listenedStreamsPerProgram` and
    /// `listenedStreamsInAll` an output is taken as sound, as it would be without listening:
    /// a program gains nothing by opening many.
    mutating func reviewListening() {
        guard configuration.listensToOutputs else { return }
        // Each change below notes its program again; a second look at a program changes
        // nothing, so this ends. The bound keeps it so whatever happens.
        var budget = 64
        while budget > 0, let key = state.takeProgramToReview() {
            reviewListening(key)
            budget -= 1
        }
        while state.takeProgramToReview() != nil {}
    }

    mutating func reviewListening(_ key: ProgramKey) {
        guard let nodes = index.streamsOfProgram[key]?.nodes else { return }
        let capturing = state.captures(key)
        var listening = nodes.reduce(0) { $0 + (model.streams[$1]?.listened == true ? 1 : 0) }
        for n in nodes {
            guard let st = model.streams[n], st.direction == .output else { continue }
            if !capturing {
                if st.listened || st.heard {
                    if st.listened { fx.append(.listen(n, false)) }
                    state.updateStream(n) { $0.listened = false; $0.heard = false }
                }
                continue
            }
            let wanted = !st.heard && takesPart(n, st)
            if st.listened && !wanted {
                fx.append(.listen(n, false))
                state.updateStream(n) { $0.listened = false }
                listening -= 1
            } else if wanted && !st.listened {
                if listening < configuration.listenedStreamsPerProgram && index.listened.count < configuration.listenedStreamsInAll {
                    fx.append(.listen(n, true))
                    state.updateStream(n) { $0.listened = true }
                    listening += 1
                } else {
                    state.updateStream(n) { $0.heard = true }
                }
            }
        }
    }
}

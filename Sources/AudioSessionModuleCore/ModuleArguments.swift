import SessionPolicy
import PipeWireFacts

/// The module's arguments (the `args` of its `context.modules` entry, after
/// `module.audio-session.args` overrides) as a `PolicyConfiguration`.
/// Keys are documented in the module's doc block (Modules/module-audio-session.c).
public enum ModuleArguments {
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The module's defaults: the policy's, with a grace period of 200 ms. Measured:
    /// espeak-ng through pipewire-pulse leaves 11–45 ms between the streams of one
    /// utterance (phrase and sentence boundaries), and separate prompts come 0.5 s or more
    /// apart; 200 ms holds the first with a margin and releases between the second.
    public static var defaults: PolicyConfiguration {
        var c = PolicyConfiguration()
        c.resumeGraceMilliseconds = 200
        // R42: an interrupted stream is asked to fade out over 300 ms before its pause and
        // back in over 500 ms when it resumes (short enough that a call's first words are not
        // talked over for long, long enough that the cut is not heard as a click); the
        // module's step pacing stretches a whole fade-out to about half a second at
        // PipeWire's default quantum limit.
        c.fadeOutMilliseconds = 300
        c.fadeInMilliseconds = 500
        // R43: a program's output counts towards a call once it carried sound, so a program
        // that only records while it plays silence (Firefox does) is a recording.
        c.listensToOutputs = true
        // The published state is written at most once a graph cycle (about 21 ms at 1024
        // frames): a stream that starts and stops many times a second costs the daemon one
        // write per cycle, not one per change, and nobody can hear the difference.
        c.publishIntervalMilliseconds = 20
        return c
    }

    public static func configuration(from args: Properties) -> Result<PolicyConfiguration, Failure> {
        var c = defaults
        // Only our keys are parsed: PipeWire passes its own keys through module
        // args too, and their values need not be SPA-JSON we can read.
        for key in args.keys.sorted() where keys.contains(key) {
            let text = args[key] ?? ""
            let value: SPAJSONValue
            switch parseSPAJSONValue(text) {
            case .success(let v): value = v
            case .failure(let e): return .failure(Failure(description: "\(key): \(e.description)"))
            }
            if let failure = apply(key, value, to: &c) {
                return .failure(failure)
            }
        }
        if c.strongDuckLevel > c.duckLevel {
            return .failure(Failure(description: "duck.strong-level must not be above duck.level"))
        }
        return .success(c)
    }

    /// The keys `apply` reads; every other key is ignored.
    public static let keys: Set<String> = [
        "profile", "duck.level", "duck.strong-level", "duck.strong-for-prompts", "duck.ramp-down-ms",
        "duck.ramp-up-ms", "resume.grace-ms", "private.outputs", "private.form-factors", "call.allowed-applications",
        "control.allowed-applications", "interrupt.denied-applications", "legacy.resume-on-device-return", "alerts.prefer-no-interruptions",
        "role.table", "calls.from-graph", "calls.listen", "fade.out-ms", "fade.in-ms",
        "publish.interval-ms",
    ]

    static func fail(_ key: String, _ expected: String) -> Failure {
        Failure(description: "\(key): expected \(expected)")
    }

    static func level(_ key: String, _ v: SPAJSONValue) -> Result<Float, Failure> {
        guard let d = v.double, d.isFinite, d >= 0, d <= 1 else { return .failure(fail(key, "a gain from 0 to 1")) }
        return .success(Float(d))
    }

    static func milliseconds(_ key: String, _ v: SPAJSONValue, upTo most: UInt32 = 60_000) -> Result<UInt32, Failure> {
        guard let d = v.double, d.isFinite, d >= 0, d <= Double(most) else {
            return .failure(fail(key, "milliseconds from 0 to \(most)"))
        }
        return .success(UInt32(d))
    }

    static func apply(_ key: String, _ v: SPAJSONValue, to c: inout PolicyConfiguration) -> Failure? {
        switch key {
        case "profile":
            guard let s = v.string, let p = PolicyConfiguration.Profile(rawValue: s) else {
                return fail(key, "desktop or ios")
            }
            c.profile = p
        case "duck.level":
            switch level(key, v) { case .success(let x): c.duckLevel = x; case .failure(let f): return f }
        case "duck.strong-level":
            switch level(key, v) { case .success(let x): c.strongDuckLevel = x; case .failure(let f): return f }
        case "duck.strong-for-prompts":
            guard let b = v.bool else { return fail(key, "true or false") }
            c.strongDuckForPrompts = b
        case "duck.ramp-down-ms":
            switch milliseconds(key, v) { case .success(let x): c.duckRampDownMilliseconds = x; case .failure(let f): return f }
        case "publish.interval-ms":
            // Longer than a second, programs reading the state would see it late.
            switch milliseconds(key, v, upTo: 1000) { case .success(let x): c.publishIntervalMilliseconds = x; case .failure(let f): return f }
        case "resume.grace-ms":
            switch milliseconds(key, v) { case .success(let x): c.resumeGraceMilliseconds = x; case .failure(let f): return f }
        case "fade.out-ms":
            switch milliseconds(key, v) { case .success(let x): c.fadeOutMilliseconds = x; case .failure(let f): return f }
        case "fade.in-ms":
            switch milliseconds(key, v) { case .success(let x): c.fadeInMilliseconds = x; case .failure(let f): return f }
        case "duck.ramp-up-ms":
            switch milliseconds(key, v) { case .success(let x): c.duckRampUpMilliseconds = x; case .failure(let f): return f }
        case "private.outputs":
            guard let words = v.words else { return fail(key, "a list of port types") }
            var types = Set<PortType>()
            for w in words {
                guard let t = PortType(rawValue: w) else { return fail(key, "port types; unknown \"\(w)\"") }
                types.insert(t)
            }
            c.privatePortTypes = types
        case "private.form-factors":
            guard let words = v.words else { return fail(key, "a list of device.form-factor values") }
            c.privateFormFactors = Set(words.map(FormFactor.init(rawValue:)))
        case "call.allowed-applications":
            guard let words = v.words else { return fail(key, "a list of executables, uid:<n> or Flatpak app ids") }
            c.callPriorityApplications = Set(words)
        case "control.allowed-applications":
            guard let words = v.words else { return fail(key, "a list of executables, uid:<n> or Flatpak app ids") }
            c.controlApplications = Set(words)
        case "interrupt.denied-applications":
            guard let words = v.words else { return fail(key, "a list of application names") }
            c.cannotInterruptApplications = Set(words)
        case "legacy.resume-on-device-return":
            guard let b = v.bool else { return fail(key, "true or false") }
            c.resumeLegacyOnDeviceReturn = b
        case "calls.from-graph":
            guard let b = v.bool else { return fail(key, "true or false") }
            c.callsFromGraph = b
        case "calls.listen":
            guard let b = v.bool else { return fail(key, "true or false") }
            c.listensToOutputs = b
        case "alerts.prefer-no-interruptions":
            guard let s = v.string, let p = PolicyConfiguration.AlertPolicy(rawValue: s) else {
                return fail(key, "mix or holdBack")
            }
            c.alertsDuringPreferNoInterruptions = p
        case "role.table":
            guard case .object(let roles) = v else { return fail(key, "an object of roles") }
            for (role, rule) in roles {
                switch roleRule(role, rule, base: c.roleTable[role]) {
                case .success(let r): c.roleTable[role] = r
                case .failure(let f): return f
                }
            }
        default:
            // PipeWire passes its own keys through module args too; unknown keys are ignored.
            break
        }
        return nil
    }

    static func roleRule(_ role: String, _ v: SPAJSONValue, base: RoleRule?) -> Result<RoleRule, Failure> {
        let key = "role.table.\(role)"
        guard case .object = v else { return .failure(fail(key, "an object")) }
        var rule = base ?? RoleRule(category: .playback)
        if let s = v["category"]?.string {
            guard let cat = Category(rawValue: s) else { return .failure(fail(key, "a category; unknown \"\(s)\"")) }
            rule.category = cat
        }
        if let s = v["mode"]?.string {
            guard let mode = Mode(rawValue: s) else { return .failure(fail(key, "a mode; unknown \"\(s)\"")) }
            rule.mode = mode
        }
        if let words = v["options"]?.words {
            var options: CategoryOptions = []
            for w in words {
                guard let o = CategoryOptions.named(w) else { return .failure(fail(key, "options; unknown \"\(w)\"")) }
                options.insert(o)
            }
            rule.options = options
        }
        if let s = v["priority"]?.string {
            guard let p = PriorityClass(rawValue: s) else { return .failure(fail(key, "a priority; unknown \"\(s)\"")) }
            rule.priority = p
        }
        if let b = v["transient"]?.bool { rule.transient = b }
        if let b = v["alert"]?.bool { rule.isAlert = b }
        if let b = v["unmanaged"]?.bool { rule.unmanaged = b }
        return .success(rule)
    }
}

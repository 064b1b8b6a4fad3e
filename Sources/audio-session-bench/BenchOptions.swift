import ArgumentParser

/// The command line of `audio-session-bench` (make bench runs it through scripts/bench.sh).
/// A count or time left out takes its full-run default, or its `--quick` one.
struct BenchOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio-session-bench",
        abstract: "Measure the audio-session module against stock WirePlumber in private headless sandboxes.",
        discussion: """
        Systems: `module` and `baseline` (stock, no module) run the system's PipeWire; \
        `module-pw1.4` and `baseline-pw1.4` run the PipeWire tree given with --pw14-prefix \
        (scripts/pipewire-tree.sh makes one), the module from --pw14-module-dir, built against \
        that tree's headers; `peer-pw1.4` runs WirePlumber 0.5's own role-based policy \
        (role loopbacks, duck level 0.3) on that tree, without the module; `module-pw1.6` and \
        `baseline-pw1.6` run the PipeWire 1.6 root filesystem given with --pw16-prefix \
        (scripts/pipewire-rootfs.sh makes one), the module from --pw16-module-dir. \
        Writes OUT/results.json; scripts/plot.py turns it into BENCHMARKS.md and the plots. \
        Exits 1 when no system could be measured (every sandbox failed to start).

        Examples:
          audio-session-bench --quick --out /tmp/b
          audio-session-bench --only headphones,duck --systems module,baseline --hl-trials 20
        """
    )

    @Option(help: ArgumentHelp("Where results.json goes.", valueName: "dir"))
    var out = "bench-out"
    @Flag(help: "Few trials and short windows: a quick look, not figures to publish.")
    var quick = false
    @Option(help: ArgumentHelp("Sections to run, comma separated: idle, headphones, duck, interrupt, notify, streams, cpu, props, churn, profile (the module system: perf on the daemon), faults, bluetooth and peer (the PipeWire 1.6 systems only).", valueName: "list"))
    var only = "idle,headphones,duck,interrupt,notify,streams,cpu,props,churn,profile,faults,bluetooth,peer"
    @Option(help: ArgumentHelp("Systems to measure, comma separated (default: module,baseline, the -pw1.4 systems when a 1.4 tree is given and the -pw1.6 pair when a 1.6 root is given).", valueName: "list"))
    var systems: String?
    @Option(name: .customLong("pw14-prefix"), help: ArgumentHelp("The PipeWire 1.4 tree (default: AUDIO_SESSION_PIPEWIRE_PREFIX).", valueName: "dir"))
    var pw14Prefix: String?
    @Option(name: .customLong("pw14-module-dir"), help: ArgumentHelp("The module built against the PipeWire 1.4 tree.", valueName: "dir"))
    var pw14ModuleDir: String?
    @Option(name: .customLong("pw16-prefix"), help: ArgumentHelp("The PipeWire 1.6 root filesystem (scripts/pipewire-rootfs.sh).", valueName: "dir"))
    var pw16Prefix: String?
    @Option(name: .customLong("pw16-module-dir"), help: ArgumentHelp("The module built against PipeWire 1.6.", valueName: "dir"))
    var pw16ModuleDir: String?
    @Option(name: .customLong("peer-trials"), help: "Trials per player and loss in the peer section (5; quick 2).")
    var peerTrials: Int?
    @Option(name: .customLong("bluetooth-trials"), help: "Bluetooth headset disconnects under pw-play in the bluetooth section (100; quick 5).")
    var bluetoothTrials: Int?
    @Option(help: ArgumentHelp("The command that ran the bench, for the report.", valueName: "text"))
    var command = "make bench"

    @Option(name: .customLong("hl-trials"), help: "Headphone-loss trials per client and system (100; quick 5).")
    var hlTrials: Int?
    @Option(name: .customLong("hl-settle"), help: "Seconds the player plays before the unplug (0.1).")
    var hlSettle: Double?
    @Option(name: .customLong("duck-trials"), help: "Duck trials with the module (10; quick 2).")
    var duckTrials: Int?
    @Option(name: .customLong("baseline-duck-trials"), help: "Duck trials without it (5; quick 2).")
    var baselineDuckTrials: Int?
    @Option(name: .customLong("interrupt-trials"), help: "Call trials with the module (10; quick 2).")
    var interruptTrials: Int?
    @Option(name: .customLong("baseline-interrupt-trials"), help: "Call trials without it (5; quick 2).")
    var baselineInterruptTrials: Int?
    @Option(name: .customLong("notify-trials"), help: "Notification latency samples (200; quick 20).")
    var notifyTrials: Int?
    @Option(name: .customLong("idle-seconds"), help: "Idle window in seconds (20; quick 5).")
    var idleSeconds: Double?
    @Option(help: "Streams for the memory section (200; quick 50).")
    var streams: Int?
    @Option(name: .customLong("toggle-events"), help: "Pause/resume events for the CPU section (2000; quick 400).")
    var toggleEvents: Int?
    @Option(name: .customLong("toggle-rate"), help: "Pause/resume events per second (200).")
    var toggleRate: Double?
    @Option(name: .customLong("churn-seconds"), help: "Length of the churn in seconds (60; quick 10).")
    var churnSeconds: Double?
    @Option(name: .customLong("churn-rate"), help: "Streams created per second during the churn (50).")
    var churnRate: Double?
    @Option(name: .customLong("churn-live"), help: "Streams alive at once during the churn (200; quick 50).")
    var churnLive: Int?

    @Option(name: .customLong("churn-cost-live"), help: "Streams alive at once in the churn's CPU rounds, each made after the last one plays (20).")
    var churnCostLive: Int?
    @Option(name: .customLong("churn-cost-rate"), help: "At most this many streams made per second in the churn's CPU rounds (10).")
    var churnCostRate: Double?
    @Flag(name: .customLong("all-cpus"), help: "Run the CPU sections (pause/resume, the churn's rounds, the property floods) on every CPU instead of one: the kernel's share of the daemon's CPU then depends on which process lands on which CPU.")
    var allCPUs = false

    @Option(name: .customLong("cost-attempts"), help: "At most this many attempts of each CPU section (pause/resume, churn, each property flood): one runs again while the stock daemon's own figures spread as on a busy machine, and the calmest attempt is kept (3; quick 1).")
    var costAttempts: Int?
    @Option(name: .customLong("calm-spread"), help: "The stock daemon's figures in a CPU section count as a quiet machine's when their third quartile is at most this many times their first (1.5).")
    var calmSpread: Double?

    @Option(name: .customLong("fault-rounds"), help: "Rounds of hostile clients in the faults section (5; quick 2).")
    var faultRounds: Int?
    @Option(help: "Activation-request updates in the props section (20,000; quick 2,000).")
    var floodActivationUpdates: Int?
    @Option(help: "Silent-mode flips in the props section (20,000; quick 2,000).")
    var floodSilentUpdates: Int?
    @Option(name: .customLong("fault-clients"), help: "Hostile clients per round (200; quick 50).")
    var faultClients: Int?
    @Option(name: .customLong("fault-daemons"), help: "Daemons per system for the faults section, each started for it and given the same rounds; the memory the daemon keeps afterwards is their median (5; quick 1).")
    var faultDaemons: Int?

    static let knownSections = ["idle", "headphones", "duck", "interrupt", "notify", "streams", "cpu", "props",
                                "churn", "profile", "faults", "bluetooth", "peer"]
    static let knownSystems = ["module", "baseline", "module-pw1.4", "baseline-pw1.4", "peer-pw1.4",
                               "module-pw1.6", "baseline-pw1.6"]

    /// Names in a comma-separated list that are not in `known`.
    static func unknown(_ list: String, _ known: [String]) -> [String] {
        list.split(separator: ",").map(String.init).filter { !known.contains($0) }
    }

    mutating func validate() throws {
        guard only.contains(where: { $0 != "," }) else {
            throw ValidationError("--only names no section; the sections are \(Self.knownSections.joined(separator: ", ")).")
        }
        if let systems, !systems.contains(where: { $0 != "," }) {
            throw ValidationError("--systems names no system; the systems are \(Self.knownSystems.joined(separator: ", ")).")
        }
        let badSections = Self.unknown(only, Self.knownSections)
        guard badSections.isEmpty else {
            throw ValidationError("--only: no section named \(badSections.map { "'\($0)'" }.joined(separator: ", ")); the sections are \(Self.knownSections.joined(separator: ", ")).")
        }
        if let systems {
            let badSystems = Self.unknown(systems, Self.knownSystems)
            guard badSystems.isEmpty else {
                throw ValidationError("--systems: no system named \(badSystems.map { "'\($0)'" }.joined(separator: ", ")); the systems are \(Self.knownSystems.joined(separator: ", ")).")
            }
        }
        let counts: [(String, Int?)] = [("--peer-trials", peerTrials), ("--bluetooth-trials", bluetoothTrials),
            ("--hl-trials", hlTrials), ("--duck-trials", duckTrials), ("--baseline-duck-trials", baselineDuckTrials),
            ("--interrupt-trials", interruptTrials), ("--baseline-interrupt-trials", baselineInterruptTrials),
            ("--notify-trials", notifyTrials), ("--streams", streams), ("--toggle-events", toggleEvents),
            ("--churn-live", churnLive), ("--churn-cost-live", churnCostLive), ("--cost-attempts", costAttempts),
            ("--fault-rounds", faultRounds), ("--flood-activation-updates", floodActivationUpdates),
            ("--flood-silent-updates", floodSilentUpdates), ("--fault-clients", faultClients), ("--fault-daemons", faultDaemons)]
        for (name, value) in counts {
            if let value, value < 1 { throw ValidationError("\(name) must be at least 1 (it was \(value)).") }
        }
        if let hlSettle, !(hlSettle.isFinite && hlSettle >= 0) {
            throw ValidationError("--hl-settle must be a number of seconds, 0 or more (it was \(hlSettle)).")
        }
        let amounts: [(String, Double?)] = [("--idle-seconds", idleSeconds), ("--toggle-rate", toggleRate),
            ("--churn-seconds", churnSeconds), ("--churn-rate", churnRate), ("--churn-cost-rate", churnCostRate),
            ("--calm-spread", calmSpread)]
        for (name, value) in amounts {
            if let value, !(value.isFinite && value > 0) { throw ValidationError("\(name) must be a number above 0 (it was \(value)).") }
        }
    }

    /// `value`, else the full or the quick default.
    func pick<T>(_ value: T?, _ full: T, _ quickDefault: T) -> T { value ?? (quick ? quickDefault : full) }
}

/// `audio-session-bench helper NAME ARGS...`: this program run inside a sandbox as an
/// AudioSession client (Helpers.swift); the bench starts it with every argument given.
struct HelperOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio-session-bench helper",
        abstract: "An AudioSession client the bench runs inside a sandbox (not for direct use).",
        subcommands: [Notify.self, Streams.self, Toggle.self, Churn.self]
    )

    struct Notify: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Notification latency, A interrupted by B and back.")
        @Argument(help: "Trials.") var trials = 200
        @Argument(help: "Seconds to wait for the policy's session entries.") var policyTimeout = 5.0
    }

    struct Streams: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "COUNT silent streams, until terminated.")
        @Argument(help: "Streams.") var count = 200
    }

    struct Toggle: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One stream paused and resumed EVENTS times.")
        @Argument(help: "Pause/resume events.") var events = 2000
        @Argument(help: "Events per second.") var rate = 200.0
        @Argument(help: "A file whose creation starts the events.") var startFile = ""
        @Option(help: "Runs this many bursts of EVENTS events instead of one: burst N starts when START-FILE.N is made (N from 0) and ends with a `DONE N` line.")
        var bursts = 0
    }

    struct Churn: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "LIVE streams, the oldest replaced RATE times a second.")
        @Argument(help: "Seconds.") var seconds = 60.0
        @Argument(help: "Streams created per second.") var rate = 50.0
        @Argument(help: "Streams alive at once.") var live = 200
        @Argument(help: "A file whose creation starts the churn.") var startFile = ""
        @Flag(help: "Every stream plays before the next is made: the first LIVE before READY, each new one before the next replacement (RATE is then a ceiling). Reports how many played.")
        var pacedByPlaying = false
    }
}

import AudioSession
import ArgumentParser
import Foundation

/// `pw-session status`: every session the policy knows and the global state.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every audio session and the global state.",
        discussion: """
        Reads the audio-session metadata the policy publishes. Exits 1 when no \
        policy is reachable. The --json document is described in docs/cli.md.

        Examples:
          pw-session status
          pw-session status --json | jq '.sessions[] | select(.active)'
        """
    )

    @Flag(name: .long, help: "One JSON document (schema: docs/cli.md).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the policy.", valueName: "seconds"))
    var timeout: Double = 3

    func run() throws {
        let session = try observePolicy(timeout: timeout)
        let snap = session.policySnapshot
        let doc = StatusDocument(snap)
        if json {
            say(jsonLine(doc))
            return
        }
        if let g = doc.global {
            say("global: silent mode \(g.silentMode ? "on" : "off"), screen lock \(g.screenLocked ? "on" : "off"), " +
                "\(g.playingSessions) playing, \(g.primaryAudioSessions) primary, " +
                "secondary audio should be silenced: \(g.secondaryAudioShouldBeSilencedHint ? "yes" : "no")")
            say("route: \(describe(g.currentRoute.route))")
        } else {
            say("global: (not published yet)")
        }
        if doc.sessions.isEmpty { say("no sessions") }
        for s in doc.sessions {
            let flags = [s.active ? "active" : "inactive", s.playing ? "playing" : nil,
                         s.interrupted ? "interrupted" + (s.interruptionReason.map { " (\($0))" } ?? "") : nil,
                         s.ducked ? "ducked \(s.duckGain)" : nil, s.silenced ? "silenced" : nil,
                         s.legacy ? "legacy" : nil, s.mpris.map { "via MPRIS \($0)" }].compactMap { $0 }
            let opts = s.options.isEmpty ? "" : " [\(s.options.joined(separator: ","))]"
            say("\(s.session.kind.rawValue) \(s.session.id)  \(s.application ?? "?")  \(s.category)/\(s.mode)\(opts)  \(flags.joined(separator: ", "))")
            for st in s.streamDetails {
                say("  stream \(st.id) \(st.name ?? "")  \(describe(s.route.route))")
            }
        }
    }
}

/// The `status --json` document (docs/cli.md).
struct StatusDocument: Encodable {
    struct Stream: Encodable {
        var id: UInt32
        var name: String?
        var mediaClass: String?
        var mediaRole: String?
    }
    struct Session: Encodable {
        var session: SessionRef
        var application: String?
        var legacy: Bool
        var category: String
        var mode: String
        var options: [String]
        var priority: String?
        var active: Bool
        var playing: Bool
        var interrupted: Bool
        var interruptionReason: String?
        var ducked: Bool
        var duckGain: Double
        var silenced: Bool
        var streams: [UInt32]
        var streamDetails: [Stream]
        var route: RouteDescription
        var prefersNoInterruptionsFromSystemAlerts: Bool
        var prefersInterruptionOnRouteDisconnect: Bool
        var secondaryAudioShouldBeSilencedHint: Bool
        /// The MPRIS player the bridge governs this legacy session through (docs/mpris.md).
        var mpris: String?
    }
    var global: GlobalState?
    var sessions: [Session]

    init(_ snap: PolicySnapshot) {
        global = snap.global
        sessions = snap.sessions.map { s in
            Session(session: s.session, application: s.application, legacy: s.legacy, category: s.category, mode: s.mode,
                    options: s.options, priority: s.priority, active: s.active, playing: s.playing, interrupted: s.interrupted,
                    interruptionReason: s.interruptionReason, ducked: s.ducked, duckGain: s.duckGain, silenced: s.silenced,
                    streams: s.streams,
                    streamDetails: s.streams.map { id in
                        let p = snap.nodes[id] ?? [:]
                        return Stream(id: id, name: p["media.name"] ?? p["node.name"], mediaClass: p["media.class"], mediaRole: p["media.role"])
                    },
                    route: s.route,
                    prefersNoInterruptionsFromSystemAlerts: s.prefersNoInterruptionsFromSystemAlerts ?? false,
                    prefersInterruptionOnRouteDisconnect: s.prefersInterruptionOnRouteDisconnect ?? false,
                    secondaryAudioShouldBeSilencedHint: s.secondaryAudioShouldBeSilencedHint ?? false,
                    mpris: s.streams.lazy.compactMap { snap.players[$0] }.first)
        }
    }
}

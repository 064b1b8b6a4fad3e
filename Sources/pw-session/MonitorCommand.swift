import AudioSession
import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `pw-session monitor`: every policy event, one line each, until interrupted.
struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print every policy event as it happens, until interrupted.",
        discussion: """
        One line per event, in the policy's order (its sequence number first). \
        With --json, one JSON object per line: the document the policy published \
        on audio-session.event (docs/cli.md). Prints "monitoring" on stderr once \
        it listens. Exits 1 when no policy is reachable or when it goes away.

        Examples:
          pw-session monitor
          pw-session monitor --json | jq -c 'select(.type == "interruption")'
        """
    )

    @Flag(name: .long, help: "One JSON object per line (schema: docs/cli.md).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the policy.", valueName: "seconds"))
    var timeout: Double = 3

    func run() throws {
        let session = try observePolicy(timeout: timeout)
        let events = session.policyEvents
        let lost = session.mediaServicesChanges
        FileHandle.standardError.write(Data("monitoring\n".utf8))
        let asJSON = json
        try blocking {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await e in events { say(asJSON ? MonitorCommand.compact(e.json) : MonitorCommand.line(e)) }
                }
                group.addTask {
                    for await reset in lost where !reset {
                        complain("the audio-session policy went away")
                        throw ExitCode(1)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    static func compact(_ json: String) -> String {
        guard let obj = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
              let data = try? JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .withoutEscapingSlashes]),
              let s = String(data: data, encoding: .utf8) else { return json.replacingOccurrences(of: "\n", with: " ") }
        return s
    }

    static func line(_ e: PolicyEvent) -> String {
        "#\(e.sequence) \(e.session) " + text(e.notification)
    }

    static func text(_ n: PolicyNotification) -> String {
        switch n {
        case .interruptionBegan(let r): return "interruption began reason=\(r.rawValue)"
        case .interruptionEnded(let b): return "interruption ended shouldResume=\(b)"
        case .routeChange(let r, let p, let c): return "routeChange reason=\(r.rawValue) previous=(\(describe(p))) current=(\(describe(c)))"
        case .silenceSecondaryAudioHint(let b): return "silenceSecondaryAudioHint \(b ? "begin" : "end")"
        case .mediaServicesWereLost: return "mediaServicesWereLost"
        case .mediaServicesWereReset: return "mediaServicesWereReset"
        case .activationResult(.success(let w)): return "activation ok" + (w.map { " warning=\($0.rawValue)" } ?? "")
        case .activationResult(.failure(let e)): return "activation refused \(e.code.rawValue): \(e.message)"
        case .declarationRefused(let e): return "declarationRefused \(e.code.rawValue): \(e.message)"
        }
    }
}

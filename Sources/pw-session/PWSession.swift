import ArgumentParser
import Foundation

@main
struct PWSession: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pw-session",
        abstract: "Audio sessions for PipeWire: inspect, test and sandbox the audio-session policy.",
        version: "0.1.0",
        subcommands: [StatusCommand.self, MonitorCommand.self, RunCommand.self, PlayCommand.self, InterruptCommand.self,
                      RouteCommand.self, SilentCommand.self, LockCommand.self, AgentCommand.self, MPRISBridgeCommand.self, SandboxCommand.self]
    )

    /// Usage errors exit with status 2 (ArgumentParser's default is 64).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if let status = report(error) { Foundation.exit(status) }
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

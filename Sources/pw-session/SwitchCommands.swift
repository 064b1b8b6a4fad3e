import AudioSession
import ArgumentParser
import Foundation

enum OnOff: String, ExpressibleByArgument, CaseIterable {
    case on, off
}

/// Sets a global switch and waits until the policy publishes it.
private func setSwitch(_ on: Bool, timeout: Double, set: (AudioSession) -> Void, read: @escaping @Sendable (GlobalState) -> Bool) throws {
    let session = try observePolicy(timeout: timeout)
    set(session)
    let applied = try blocking {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if let g = session.policySnapshot.global, read(g) == on { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
    guard applied else {
        complain("the policy did not apply the switch (a sandboxed client may not set it)")
        throw ExitCode(1)
    }
}

/// `pw-session silent on|off`.
struct SilentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "silent",
        abstract: "Turn silent mode (the ring/silent switch) on or off.",
        discussion: """
        Silent mode silences ambient and soloAmbient sessions (R20). The switch \
        stays as set after pw-session exits.

        Examples:
          pw-session silent on
          pw-session silent off
        """
    )
    @Argument(help: "on or off.") var state: OnOff
    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the policy.", valueName: "seconds")) var timeout: Double = 3

    func run() throws {
        try setSwitch(state == .on, timeout: timeout, set: { $0.setSilentMode(state == .on) }, read: { $0.silentMode })
    }
}

/// `pw-session lock on|off`.
struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Tell the policy the screen is locked (on) or unlocked (off).",
        discussion: """
        A locked screen silences ambient and soloAmbient sessions (R20).

        Examples:
          pw-session lock on
          pw-session lock off
        """
    )
    @Argument(help: "on or off.") var state: OnOff
    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the policy.", valueName: "seconds")) var timeout: Double = 3

    func run() throws {
        try setSwitch(state == .on, timeout: timeout, set: { $0.setScreenLocked(state == .on) }, read: { $0.screenLocked })
    }
}

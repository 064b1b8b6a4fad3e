import AudioSession
import ArgumentParser
import Foundation
import Synchronization

/// `pw-session interrupt --as call|alarm|prompt`.
struct InterruptCommand: ParsableCommand {
    enum Kind: String, ExpressibleByArgument, CaseIterable { case call, alarm, prompt }

    static let configuration = CommandConfiguration(
        commandName: "interrupt",
        abstract: "Play the part of a phone call, an alarm or a navigation prompt.",
        discussion: """
        A real session with a real stream (a quiet tone), active for the duration, \
        then deactivated:
          call    playAndRecord, voiceChat (call priority: interrupts everything, R10)
          alarm   a stream with media.role Alarm (alert priority; transient: always notifies)
          prompt  playback, voicePrompt, duckOthers + interruptSpokenAudioAndMixWithOthers (ducks music, R3; interrupts spoken audio, R4)
        Deactivation uses notifyOthersOnDeactivation unless --no-notify, so that \
        interrupted sessions get shouldResume (R7, R14). Prints "active" when the \
        session is active and "deactivated" at the end. Exits 1 when activation is refused.

        Examples:
          pw-session interrupt --as call --duration 5
          pw-session interrupt --as call --duration 2 --no-notify
          pw-session interrupt --as prompt --duration 1.5
        """
    )

    @Option(name: .customLong("as"), help: ArgumentHelp("call, alarm or prompt.", valueName: "kind"))
    var kind: Kind

    @Option(name: .long, help: ArgumentHelp("Seconds the session stays active.", valueName: "seconds"))
    var duration: Double = 3

    @Flag(name: .customLong("no-notify"), help: "Deactivate without notifyOthersOnDeactivation.")
    var noNotify = false

    @Flag(name: .long, help: "One JSON object per line.")
    var json = false

    func validate() throws {
        if !(duration >= 0 && duration < 86_400) { throw ValidationError("--duration must be between 0 and 86400 seconds") }
    }

    func out(_ event: String, _ extra: [String: Any] = [:]) {
        if json {
            var o = extra; o["event"] = event; o["as"] = kind.rawValue
            let d = (try? JSONSerialization.data(withJSONObject: o, options: [.sortedKeys])) ?? Data()
            say(String(decoding: d, as: UTF8.self))
        } else {
            say(([event] + extra.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " "))
        }
    }

    func run() throws {
        let declares = kind != .alarm
        let session = AudioSession(configuration: .init(applicationName: "pw-session interrupt (\(kind.rawValue))", declares: declares))
        var props: [String: String] = ["node.name": "pw-session-\(kind.rawValue)"]
        switch kind {
        case .call:
            try session.setCategory(.playAndRecord, mode: .voiceChat)
        case .prompt:
            try session.setCategory(.playback, mode: .voicePrompt, options: [.duckOthers, .interruptSpokenAudioAndMixWithOthers])
        case .alarm:
            props["media.role"] = "Alarm"
            guard try blocking({ await session.waitForPolicy() }) else {
                throw SessionError(code: .mediaServicesFailed, message: "no audio-session policy reachable")
            }
        }
        if declares {
            try blocking { try await session.setActive(true) }
        }
        let phase = Atomic<Int>(0)
        let output = try AudioOutput(session: session, name: "pw-session \(kind.rawValue)", rate: 48000, channels: 2,
                                     properties: props) { dst, ch in
            var p = phase.load(ordering: .relaxed)
            let frames = dst.count / ch
            for f in 0..<frames {
                let v = Float(sin(Double(p) * 2 * .pi * 660 / 48000) * 0.1)
                for c in 0..<ch { dst[f * ch + c] = v }
                p = (p + 1) % 48000
            }
            phase.store(p, ordering: .relaxed)
            return frames
        }
        if !declares {
            // A legacy alarm is active while its node runs.
            let running = try blocking {
                let deadline = ContinuousClock.now + .seconds(5)
                while ContinuousClock.now < deadline {
                    if output.state == .streaming { return true }
                    try? await Task.sleep(for: .milliseconds(10))
                }
                return false
            }
            if !running { complain("the alarm stream did not start") }
        }
        out("active", ["duration": duration])
        Thread.sleep(forTimeInterval: duration)
        output.stop()
        if declares {
            let notify = !noNotify
            let warning = try blocking { try await session.setActive(false, options: notify ? .notifyOthersOnDeactivation : []) }
            out("deactivated", ["notifyOthers": notify, "warning": warning?.rawValue ?? "none"])
        } else {
            out("deactivated", ["notifyOthers": true])
        }
    }
}

import AudioSessionCoreABI
import AudioSessionModuleCore
import Foundation
import SessionPolicy
import PipeWireFacts
import Testing

/// `ModuleArguments.configuration(from:)`: the keys of the module's doc block
/// (Modules/module-audio-session.c) as pw_properties hands them over (a nested
/// value arrives as its SPA-JSON text).
@Suite struct ModuleArgumentsTests {
    func configuration(_ args: Properties) throws -> PolicyConfiguration {
        switch ModuleArguments.configuration(from: args) {
        case .success(let c): return c
        case .failure(let f): throw f
        }
    }

    func failure(_ args: Properties) -> String? {
        if case .failure(let f) = ModuleArguments.configuration(from: args) { return f.description }
        return nil
    }

    @Test func noArgumentsGiveTheSpecDefaults() throws {
        #expect(try configuration([:]) == ModuleArguments.defaults)
        #expect(ModuleArguments.defaults.resumeGraceMilliseconds == 200)
        // R42: the module fades interruptions, 300 ms out and 500 ms in.
        #expect(ModuleArguments.defaults.fadeOutMilliseconds == 300)
        #expect(ModuleArguments.defaults.fadeInMilliseconds == 500)
        var policyDefaults = ModuleArguments.defaults
        policyDefaults.resumeGraceMilliseconds = 0
        policyDefaults.fadeOutMilliseconds = 0
        policyDefaults.fadeInMilliseconds = 0
        // R43: the module listens to a capturing program's outputs.
        #expect(ModuleArguments.defaults.listensToOutputs)
        policyDefaults.listensToOutputs = false
        // The published state is written at most every 20 ms.
        #expect(ModuleArguments.defaults.publishIntervalMilliseconds == 20)
        policyDefaults.publishIntervalMilliseconds = 0
        #expect(policyDefaults == PolicyConfiguration())
    }

    @Test func everyDocumentedKeyIsApplied() throws {
        let c = try configuration([
            "profile": "ios",
            "duck.level": "0.5",
            "duck.strong-level": "0.05",
            "duck.ramp-down-ms": "100",
            "duck.ramp-up-ms": "1000",
            "private.outputs": "[ headphones usbAudio ]",
            "call.allowed-applications": "[ linphone \"Zoom Meetings\" ]",
            "interrupt.denied-applications": "[ spotify ]",
            "role.table": "{ Game = { category = ambient } Beep = { category = ambient, alert = true, transient = true } }",
        ])
        #expect(c.profile == .ios)
        #expect(c.duckLevel == 0.5)
        #expect(c.strongDuckLevel == 0.05)
        #expect(c.duckRampDownMilliseconds == 100)
        #expect(c.duckRampUpMilliseconds == 1000)
        #expect(c.privatePortTypes == [.headphones, .usbAudio])
        #expect(c.callPriorityApplications == ["linphone", "Zoom Meetings"])
        #expect(c.cannotInterruptApplications == ["spotify"])
        #expect(c.roleTable["Game"]?.category == .ambient)
        // An override keeps the rest of the default rule.
        #expect(c.roleTable["Game"]?.ambientWhenOtherAudioPlays == true)
        #expect(c.roleTable["Beep"] == RoleRule(category: .ambient, transient: true, isAlert: true))
        #expect(c.roleTable["Music"] == RoleRule.defaultTable["Music"])
    }

    @Test func theOtherKeysTheParserKnowsAreApplied() throws {
        let c = try configuration([
            "duck.strong-for-prompts": "true",
            "private.form-factors": "headset, earbuds",
            "legacy.resume-on-device-return": "true",
            "alerts.prefer-no-interruptions": "holdBack",
            "calls.from-graph": "false",
            "calls.listen": "false",
            "fade.out-ms": "0",
            "fade.in-ms": "1500",
            "publish.interval-ms": "0",
        ])
        #expect(c.publishIntervalMilliseconds == 0)
        #expect(c.fadeOutMilliseconds == 0)
        #expect(c.fadeInMilliseconds == 1500)
        #expect(c.strongDuckForPrompts)
        #expect(!c.callsFromGraph)
        #expect(!c.listensToOutputs)
        #expect(c.privateFormFactors == ["headset", "earbuds"])
        #expect(c.resumeLegacyOnDeviceReturn)
        #expect(c.alertsDuringPreferNoInterruptions == .holdBack)
    }

    @Test func pipeWiresOwnKeysAndUnknownKeysAreIgnored() throws {
        #expect(try configuration(["module.id": "7", "whatever": "{ ] bad", "object.serial": "3"]) == ModuleArguments.defaults)
    }

    @Test func quotedAndSpacedValuesAreAccepted() throws {
        let c = try configuration(["profile": "\"ios\"", "duck.level": "  0.25 ", "duck.ramp-up-ms": "0"])
        #expect(c.profile == .ios)
        #expect(c.duckLevel == 0.25)
        #expect(c.duckRampUpMilliseconds == 0)
    }

    @Test(arguments: [
        ("duck.level", "1.5"), ("duck.level", "-0.1"), ("duck.level", "nan"), ("duck.level", "NaN"),
        ("duck.level", "inf"), ("duck.level", "loud"), ("duck.level", "[ 0.2 ]"), ("duck.level", ""),
        ("duck.strong-level", "2"),
        ("duck.ramp-down-ms", "60001"), ("duck.ramp-down-ms", "-1"), ("duck.ramp-down-ms", "nan"),
        ("duck.ramp-up-ms", "1e300"), ("duck.ramp-up-ms", "soon"),
        ("profile", "android"), ("profile", "{ desktop }"),
        ("duck.strong-for-prompts", "yes"),
        ("private.outputs", "[ headphones earTrumpet ]"), ("private.outputs", "{ a = b }"),
        ("private.outputs", "[ [ headphones ] ]"),
        ("private.form-factors", "{ x = y }"),
        ("call.allowed-applications", "{ x = y }"),
        ("interrupt.denied-applications", "[ { x = y } ]"),
        ("legacy.resume-on-device-return", "1"),
        ("calls.from-graph", "maybe"), ("calls.listen", "2"),
        ("publish.interval-ms", "1001"), ("publish.interval-ms", "-5"), ("publish.interval-ms", "often"),
        ("alerts.prefer-no-interruptions", "never"),
        ("role.table", "[ Game ]"), ("role.table", "{ Game = ambient }"),
        ("role.table", "{ Game = { category = loud } }"), ("role.table", "{ Game = { mode = opera } }"),
        ("role.table", "{ Game = { options = [ shout ] } }"), ("role.table", "{ Game = { priority = top } }"),
        ("role.table", "{ Game = { category = ambient }"), ("role.table", "{ Game = { category = \"ambient } }"),
        ("role.table", "{ Game = }"), ("role.table", "{ Game = { category = ambient } } trailing"),
    ])
    func badValueFailsNamingItsKey(key: String, value: String) throws {
        let message = try #require(failure([key: value]), "\(key)=\(value) was accepted")
        #expect(message.hasPrefix(key), "\(message)")
    }

    @Test func nestingTooDeepFailsNamingTheKey() throws {
        let deep = String(repeating: "{ a = ", count: 100) + "b" + String(repeating: " }", count: 100)
        let message = try #require(failure(["role.table": deep]))
        #expect(message.hasPrefix("role.table"))
        #expect(message.contains("nested too deeply"))
        // Far deeper than any stack: still a failure, not a crash.
        let abyss = String(repeating: "[", count: 200_000)
        #expect(failure(["private.outputs": abyss])?.hasPrefix("private.outputs") == true)
    }

    @Test func strongDuckAboveTheDuckLevelFailsNamingBothKeys() throws {
        let message = try #require(failure(["duck.level": "0.1", "duck.strong-level": "0.3"]))
        #expect(message.contains("duck.strong-level"))
        #expect(message.contains("duck.level"))
    }

    @Test func theFirstBadKeyInSortedOrderIsTheOneNamed() throws {
        let message = try #require(failure(["profile": "android", "duck.level": "7"]))
        #expect(message.hasPrefix("duck.level"))
    }
}

import AudioSessionCoreABI
import AudioSessionModuleCore
import Foundation
import SessionPolicy
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
        var policyDefaults = ModuleArguments.defaults
        policyDefaults.resumeGraceMilliseconds = 0
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
        ])
        #expect(c.strongDuckForPrompts)
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

/// `as_core_new` with bad arguments: NULL and a sentence in the caller's buffer.
@Suite struct CoreNewErrorTests {
    /// Calls as_core_new with `duck.level = 7` and an error buffer of `size` bytes
    /// (pre-filled with 0x7F); returns the core and the buffer.
    func newCore(args: KeyValuePairs<String, String>, bufferSize size: Int, effects: Bool = true)
        -> (OpaquePointer?, [CChar])
    {
        var buffer = [CChar](repeating: 0x7F, count: max(size, 1))
        var table = recordingTable
        let props = CProps(args)
        let core: OpaquePointer? = props.with { p in
            buffer.withUnsafeMutableBufferPointer { b in
                withUnsafePointer(to: &table) { t in
                    AudioSessionCoreABI.as_core_new(p, effects ? t : nil, nil, b.baseAddress, size)
                }
            }
        }
        return (core, buffer)
    }

    @Test func badArgumentReturnsNullAndWritesTheSentenceNamingTheKey() {
        let (core, buffer) = newCore(args: ["duck.level": "7"], bufferSize: 256)
        #expect(core == nil)
        AudioSessionCoreABI.as_core_free(core)
        #expect(String(cString: buffer) == "duck.level: expected a gain from 0 to 1")
    }

    @Test func aShortBufferGetsATruncatedTerminatedSentence() {
        let (core, buffer) = newCore(args: ["duck.level": "7"], bufferSize: 8)
        #expect(core == nil)
        #expect(buffer[7] == 0)
        #expect(String(cString: buffer) == "duck.le")
    }

    @Test func aBufferOfOneByteGetsOnlyTheTerminator() {
        let (core, buffer) = newCore(args: ["profile": "android"], bufferSize: 1)
        #expect(core == nil)
        #expect(buffer == [0])
    }

    @Test func aBufferOfZeroBytesIsNotWritten() {
        let (core, buffer) = newCore(args: ["profile": "android"], bufferSize: 0)
        #expect(core == nil)
        #expect(buffer == [0x7F])
    }

    @Test func aNullBufferIsNotWritten() {
        var table = recordingTable
        let props = CProps(["profile": "android"])
        let core = props.with { p in withUnsafePointer(to: &table) { AudioSessionCoreABI.as_core_new(p, $0, nil, nil, 512) } }
        #expect(core == nil)
    }

    @Test func aMissingEffectTableIsAnErrorToo() {
        let (core, buffer) = newCore(args: [:], bufferSize: 64, effects: false)
        #expect(core == nil)
        #expect(String(cString: buffer) == "no effect table")
    }

    @Test func goodArgumentsLeaveTheBufferAlone() {
        let (core, buffer) = newCore(args: ["duck.level": "0.3", "role.table": "{ Game = { category = ambient } }"],
                                     bufferSize: 4)
        #expect(core != nil)
        AudioSessionCoreABI.as_core_free(core)
        #expect(buffer == [0x7F, 0x7F, 0x7F, 0x7F])
    }
}

/// The module's doc block and MODULE_USAGE name exactly the keys the parser reads.
@Suite struct ModuleArgumentsDocumentationTests {
    static let moduleSource: String? = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try? String(contentsOf: root.appendingPathComponent("Modules/module-audio-session.c"), encoding: .utf8)
    }()

    /// The `- \`key\`` (and `- \`a\`, \`b\``) items of the "Module Options" section.
    static func documentedKeys(_ source: String) -> Set<String> {
        guard let start = source.range(of: "## Module Options"),
              let end = source.range(of: "## Example configuration", range: start.upperBound..<source.endIndex)
        else { return [] }
        var keys = Set<String>()
        for line in source[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let text = line.drop { $0 == " " || $0 == "*" }
            guard text.hasPrefix("- `"), let colon = text.firstIndex(of: ":") else { continue }
            // The odd pieces between backticks before the colon are the keys.
            for (i, piece) in text[..<colon].split(separator: "`", omittingEmptySubsequences: false).enumerated()
            where i % 2 == 1 {
                keys.insert(String(piece))
            }
        }
        return keys
    }

    @Test func everyKeyTheParserReadsIsDocumentedAndNoOther() throws {
        let source = try #require(Self.moduleSource)
        let documented = Self.documentedKeys(source)
        #expect(documented.contains("duck.ramp-down-ms"))
        #expect(documented.subtracting(ModuleArguments.keys).isEmpty, "documented, not read: \(documented.subtracting(ModuleArguments.keys).sorted())")
        #expect(ModuleArguments.keys.subtracting(documented).isEmpty, "read, not documented: \(ModuleArguments.keys.subtracting(documented).sorted())")
    }

    @Test func everyKeyIsInModuleUsage() throws {
        let source = try #require(Self.moduleSource)
        let start = try #require(source.range(of: "#define MODULE_USAGE"))
        let end = try #require(source.range(of: "#define METADATA_NAME", range: start.upperBound..<source.endIndex))
        let usage = source[start.upperBound..<end.lowerBound]
        for key in ModuleArguments.keys.sorted() {
            #expect(usage.contains("( \(key)="), "\(key) missing from MODULE_USAGE")
        }
    }
}

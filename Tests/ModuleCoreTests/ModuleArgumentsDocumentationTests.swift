import AudioSessionCoreABI
import AudioSessionModuleCore
import Foundation
import SessionPolicy
import PipeWireFacts
import Testing

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

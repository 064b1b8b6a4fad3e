@testable import AudioSessionModuleCore
import Foundation
import Testing

/// The metadata's JSON text: what a reader's JSON parser gets back is what was written.
@Suite struct JSONWriterTests {
    func parsed(_ v: JSON) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(v.bytes), options: [.fragmentsAllowed])
    }

    @Test(arguments: [
        "plain", "", "say \"hi\"", #"back\slash"#, "line\nbreak\r\ttab", "bell\u{7} nul\u{0} esc\u{1B} us\u{1F}",
        "café", "日本語", "🎧 headphones", "e\u{301}", "\u{7F} delete",
    ])
    func everyStringComesBackAsItWas(_ s: String) throws {
        let text = JSON.object([("k", .string(s)), ("list", .array([.string(s), .int(-3), .bool(true), .null]))])
        let back = try #require(try parsed(text) as? [String: Any])
        #expect(back["k"] as? String == s)
        #expect((back["list"] as? [Any])?.first as? String == s)
        // Control characters never reach the text raw; nothing else is escaped.
        #expect(text.bytes.allSatisfy { $0 >= 0x20 })
        #expect(text.description == String(decoding: text.bytes, as: UTF8.self))
    }

    @Test func numbersAndLiteralsAreJSON() throws {
        #expect(JSON.double(.nan).description == "null")
        #expect(JSON.double(.infinity).description == "null")
        #expect(JSON.double(0.25).description == "0.25")
        #expect(JSON.int(Int64.min).description == "-9223372036854775808")
        #expect(JSON.object([]).description == "{}")
        #expect(JSON.array([]).description == "[]")
        #expect(JSON.object([("a", .bool(false)), ("b", .null)]).description == #"{"a":false,"b":null}"#)
    }
}

import AudioSessionModuleCore
import Testing

/// The SPA-JSON reader of module arguments (PipeWire's relaxed JSON).
@Suite struct SPAJSONTests {
    func parse(_ text: String) throws -> SPAJSONValue {
        try parseSPAJSON(text).get()
    }

    func error(_ text: String) -> String? {
        if case .failure(let e) = parseSPAJSON(text) { return e.description }
        return nil
    }

    @Test func anObjectMayUseEqualsOrColonsAndNoCommas() throws {
        let v = try parse("{ a = 1 b: \"two words\" c = [ x y z ] d = { e = f } }")
        #expect(v == .object([
            ("a", .string("1")), ("b", .string("two words")),
            ("c", .array([.string("x"), .string("y"), .string("z")])),
            ("d", .object([("e", .string("f"))])),
        ]))
        #expect(v["a"]?.double == 1)
        #expect(v["d"]?["e"]?.string == "f")
    }

    @Test func strictJSONReadsTheSame() throws {
        let v = try parse("{\"a\": 1, \"b\": [\"x\", \"y\"], \"c\": {\"d\": true}}")
        #expect(v == .object([
            ("a", .string("1")), ("b", .array([.string("x"), .string("y")])), ("c", .object([("d", .string("true"))])),
        ]))
        #expect(v["c"]?["d"]?.bool == true)
    }

    @Test func bareTopLevelMembersAreAnObject() throws {
        #expect(try parse("a = b c = d") == .object([("a", .string("b")), ("c", .string("d"))]))
        #expect(try parse("") == .object([]))
        #expect(try parse("  # only a comment\n") == .object([]))
    }

    @Test func commasAreOptionalAndRepeatedCommasAreSpace() throws {
        #expect(try parse("[ 1, 2 3,, 4 ]") == .array(["1", "2", "3", "4"].map(SPAJSONValue.string)))
        #expect(try parse("{ a = 1, b = 2 }") == .object([("a", .string("1")), ("b", .string("2"))]))
    }

    @Test func keyWithoutSeparatorTakesTheNextValue() throws {
        #expect(try parse("{ a 1 b [ c ] }") == .object([("a", .string("1")), ("b", .array([.string("c")]))]))
    }

    @Test func bareWordsStopAtStructuralCharacters() throws {
        #expect(try parse("{ a=b c:d e=[f]g={} }") == .object([
            ("a", .string("b")), ("c", .string("d")), ("e", .array([.string("f")])), ("g", .object([])),
        ]))
        #expect(try parse("[ a#comment\n b\"c\" ]") == .array([.string("a"), .string("b"), .string("c")]))
    }

    @Test func quotedStringsKeepSpacesAndDecodeEscapes() throws {
        #expect(try parse(#"[ "a b" "q\"q" "back\\slash" "n\nt\tr\r" "sl\/ash" ]"#) == .array([
            .string("a b"), .string("q\"q"), .string("back\\slash"), .string("n\nt\tr\r"), .string("sl/ash"),
        ]))
        // A quoted string may hold structural characters and '#'.
        #expect(try parse(#"{ k = "{ [ # ] } = :" }"#)["k"]?.string == "{ [ # ] } = :")
    }

    @Test func unicodeEscapesDecodeLikeSPAJSON() throws {
        // spa_json_parse_stringn decodes \uXXXX (and \b, \f).
        #expect(try parse(#"[ "\u0041\u00e9" "a\bb\fc" ]"#) == .array([.string("Aé"), .string("a\u{8}b\u{C}c")]))
        #expect(try parse(#"[ "\ud83d\ude00" ]"#) == .array([.string("😀")]))
        // A lone surrogate or a bad escape is replaced, and the rest is kept.
        #expect(try parse(#"[ "x\ud83dy" "\uZZ" "\u12" ]"#) == .array([
            .string("x\u{FFFD}y"), .string("\u{FFFD}ZZ"), .string("\u{FFFD}12"),
        ]))
    }

    @Test func commentsRunToTheEndOfTheLine() throws {
        let v = try parse("""
            # leading comment
            {
                a = 1   # after a value
                # b = 2
                c = "#not a comment"
            }
            """)
        #expect(v == .object([("a", .string("1")), ("c", .string("#not a comment"))]))
    }

    @Test func nonASCIIWordsAndKeysAreRead() throws {
        #expect(try parse("{ café = naïve }") == .object([("café", .string("naïve"))]))
    }

    @Test(arguments: [
        ("{ a = 1", "} expected"), ("[ 1 2", "] expected"), ("\"abc", "unterminated string"),
        ("{ a = \"x }", "unterminated string"), ("{ a = }", "unexpected '}'"), ("{ a = ", "value expected"),
        ("[ ] ]", "trailing text"), ("{ } x", "trailing text"), ("{ = 1 }", "word expected"),
        ("[ : ]", "unexpected ':'"), ("\"esc\\", "unterminated string"),
    ])
    func malformedInputFailsWithAReasonAndAPosition(text: String, reason: String) throws {
        let message = try #require(error(text), "\(text) was accepted")
        #expect(message.hasPrefix(reason), "\(message)")
        #expect(message.contains("at byte"))
    }

    @Test func nestingIsLimitedTo64Levels() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(error(ok) == nil)
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(error(tooDeep)?.hasPrefix("nested too deeply") == true)
        let objects = String(repeating: "{ a = ", count: 65) + "b" + String(repeating: " }", count: 65)
        #expect(error(objects)?.hasPrefix("nested too deeply") == true)
        #expect(error(String(repeating: "{ a = [", count: 100_000))?.hasPrefix("nested too deeply") == true)
    }

    @Test func propertyValuesAreOneStringUnlessTheyAreContainers() throws {
        #expect(try parseSPAJSONValue("  hello world \n").get() == .string("hello world"))
        #expect(try parseSPAJSONValue("\"quoted # text\"").get() == .string("quoted # text"))
        #expect(try parseSPAJSONValue(" [ a b ]").get() == .array([.string("a"), .string("b")]))
        #expect(try parseSPAJSONValue("{ a = b }").get()["a"]?.string == "b")
        #expect(try parseSPAJSONValue("").get() == .string(""))
        #expect((try? parseSPAJSONValue("[ a").get()) == nil)
    }

    @Test func wordsComeFromArraysOrSeparatedStrings() {
        #expect(SPAJSONValue.string("a, b  c").words == ["a", "b", "c"])
        #expect(SPAJSONValue.array([.string("a"), .string("b c")]).words == ["a", "b c"])
        #expect(SPAJSONValue.array([.string("a"), .array([])]).words == nil)
        #expect(SPAJSONValue.object([]).words == nil)
    }

    @Test func theLastOfDuplicateKeysWins() throws {
        #expect(try parse("{ a = 1 a = 2 }")["a"]?.string == "2")
    }

    @Test func numbersAndBooleansAreReadOnDemand() {
        #expect(SPAJSONValue.string("0.25").double == 0.25)
        #expect(SPAJSONValue.string("zero").double == nil)
        #expect(SPAJSONValue.string("true").bool == true)
        #expect(SPAJSONValue.string("false").bool == false)
        #expect(SPAJSONValue.string("True").bool == nil)
        #expect(SPAJSONValue.array([]).double == nil)
    }
}

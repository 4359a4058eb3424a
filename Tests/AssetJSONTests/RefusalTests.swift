import AssetJSON
import Testing

/// One document the parser must refuse, and exactly how.
struct Refusal: Sendable, CustomTestStringConvertible {
    var bytes: [UInt8]
    var options: JSONValue.ParseOptions
    var reason: JSONError.Reason
    var line: Int
    var column: Int
    var message: String?

    init(_ text: String, _ reason: JSONError.Reason, _ line: Int, _ column: Int, _ message: String? = nil) {
        self.init(bytes: Array(text.utf8), .strict, reason, line, column, message)
    }

    init(_ text: String, _ options: JSONValue.ParseOptions, _ reason: JSONError.Reason,
         _ line: Int, _ column: Int, _ message: String? = nil) {
        self.init(bytes: Array(text.utf8), options, reason, line, column, message)
    }

    init(bytes: [UInt8], _ reason: JSONError.Reason, _ line: Int, _ column: Int, _ message: String? = nil) {
        self.init(bytes: bytes, .strict, reason, line, column, message)
    }

    init(bytes: [UInt8], _ options: JSONValue.ParseOptions, _ reason: JSONError.Reason,
         _ line: Int, _ column: Int, _ message: String? = nil) {
        self.bytes = bytes
        self.options = options
        self.reason = reason
        self.line = line
        self.column = column
        self.message = message
    }

    var testDescription: String {
        String(decoding: bytes.prefix(40), as: UTF8.self).debugDescription
    }
}

private let commented = JSONValue.ParseOptions.jsonWithComments
private let q = UInt8(ascii: "\"")

@Suite struct RefusalTests {
    @Test(arguments: [
        // The two inputs that trapped JSONDecoder.
        Refusal("[2e-]", .invalidNumber, 1, 5, "invalid number: expected a digit in the exponent, found ']'"),
        Refusal(bytes: [0x7b, 0x61, 0xf8, 0x3a, 0x20, 0x31, 0x7d], commented, .unexpectedCharacter(UInt8(ascii: "a")), 1, 2,
                "expected a string key or '}', found 'a'"),

        // Truncation.
        Refusal("", .unexpectedEnd, 1, 1, "expected a value, found the end of the document"),
        Refusal("  \n ", .unexpectedEnd, 2, 2),
        Refusal("[1,", .unexpectedEnd, 1, 4),
        Refusal("{\"a\":", .unexpectedEnd, 1, 6),
        Refusal("\"abc", .unexpectedEnd, 1, 5, "expected '\"' to end the string that starts at line 1, column 1, found the end of the document"),
        Refusal("\"\\", .unexpectedEnd, 1, 3),
        Refusal("\"\\u12", .unexpectedEnd, 1, 6),
        Refusal("tru", .unexpectedEnd, 1, 4),
        Refusal("/* x", commented, .unexpectedEnd, 1, 5, "expected '*/' to end the comment that starts at line 1, column 1, found the end of the document"),
        Refusal("1 /", commented, .unexpectedEnd, 1, 4),

        // Structure.
        Refusal("{\"a\" 1}", .unexpectedCharacter(UInt8(ascii: "1")), 1, 6, "expected ':' after object key, found '1'"),
        Refusal("{\n  \"a\": 1\n  \"b\": 2\n}", .unexpectedCharacter(q), 3, 3, "expected ',' or '}' after object member, found '\"'"),
        Refusal("[1 2]", .unexpectedCharacter(UInt8(ascii: "2")), 1, 4, "expected ',' or ']' after array element, found '2'"),
        Refusal("{1:2}", .unexpectedCharacter(UInt8(ascii: "1")), 1, 2),
        Refusal("[}", .unexpectedCharacter(UInt8(ascii: "}")), 1, 2, "expected a value or ']', found '}'"),
        Refusal("True", .unexpectedCharacter(UInt8(ascii: "T")), 1, 1),
        Refusal("nul!", .unexpectedCharacter(UInt8(ascii: "!")), 1, 4, "expected 'null', found '!'"),
        Refusal("\u{0C}1", .unexpectedCharacter(0x0c), 1, 1, "expected a value, found control character 0x0C"),
        Refusal("[\u{A0}1]", .unexpectedCharacter(0xc2), 1, 2, "expected a value or ']', found U+00A0"),

        // Positions: columns count Unicode scalars, lines end at LF, CR LF, CR.
        Refusal("[\"é\", x]", .unexpectedCharacter(UInt8(ascii: "x")), 1, 7),
        Refusal("[\"日本\",\n \"😀\", x]", .unexpectedCharacter(UInt8(ascii: "x")), 2, 7),
        Refusal("[\r\n1,\r\n x]", .unexpectedCharacter(UInt8(ascii: "x")), 3, 2),
        Refusal("[\r x]", .unexpectedCharacter(UInt8(ascii: "x")), 2, 2),
        Refusal("[\t\tx]", .unexpectedCharacter(UInt8(ascii: "x")), 1, 4),

        // Not JSON5.
        Refusal("{a:1}", commented, .unexpectedCharacter(UInt8(ascii: "a")), 1, 2),
        Refusal("['a']", commented, .unexpectedCharacter(UInt8(ascii: "'")), 1, 2, "expected a value or ']', found \"'\""),
        Refusal("[0x10]", commented, .unexpectedCharacter(UInt8(ascii: "x")), 1, 3),
        Refusal("[NaN]", commented, .unexpectedCharacter(UInt8(ascii: "N")), 1, 2),
        Refusal("[Infinity]", commented, .unexpectedCharacter(UInt8(ascii: "I")), 1, 2),
        Refusal("[+1]", commented, .unexpectedCharacter(UInt8(ascii: "+")), 1, 2),
        Refusal("[.5]", commented, .unexpectedCharacter(UInt8(ascii: ".")), 1, 2),
        Refusal("\"a\\\nb\"", commented, .invalidEscape, 1, 3),

        // Trailing commas: refused when strict; only one, after an element, when allowed.
        Refusal("[1,]", .unexpectedCharacter(UInt8(ascii: "]")), 1, 4, "expected a value, found ']'"),
        Refusal("{\"a\":1,}", .unexpectedCharacter(UInt8(ascii: "}")), 1, 8, "expected a string key, found '}'"),
        Refusal("[,]", commented, .unexpectedCharacter(UInt8(ascii: ",")), 1, 2),
        Refusal("{,}", commented, .unexpectedCharacter(UInt8(ascii: ",")), 1, 2),
        Refusal("[1,,]", commented, .unexpectedCharacter(UInt8(ascii: ",")), 1, 4),

        // Comments: refused when strict; well-formed when allowed.
        Refusal("// c\n1", .unexpectedCharacter(UInt8(ascii: "/")), 1, 1),
        Refusal("1 /* c */", .trailingData, 1, 3),
        Refusal("/x", commented, .unexpectedCharacter(UInt8(ascii: "x")), 1, 2, "expected '/' or '*' after '/' (a comment), found 'x'"),

        // Numbers.
        Refusal("01", .invalidNumber, 1, 2, "invalid number: a leading zero is not allowed, found '1'"),
        Refusal("-01", .invalidNumber, 1, 3),
        Refusal("-", .invalidNumber, 1, 2, "invalid number: expected a digit after '-', found the end of the document"),
        Refusal("[-Infinity]", .invalidNumber, 1, 3),
        Refusal("1.", .invalidNumber, 1, 3),
        Refusal("1.e3", .invalidNumber, 1, 3),
        Refusal("1e", .invalidNumber, 1, 3),
        Refusal("[1e+]", .invalidNumber, 1, 5),

        // Strings: escapes, surrogates, control characters.
        Refusal(#""\x""#, .invalidEscape, 1, 2, "invalid escape '\\x' in string"),
        Refusal(#""\'""#, .invalidEscape, 1, 2),
        Refusal(#""\U0041""#, .invalidEscape, 1, 2),
        Refusal(#""ab\u12G4""#, .invalidEscape, 1, 4, "invalid escape '\\u' (expected four hex digits, found 'G') in string"),
        Refusal(#""\uD800""#, .loneSurrogate, 1, 2),
        Refusal(#""\uDC00""#, .loneSurrogate, 1, 2),
        Refusal(#""\uD800\u0041""#, .loneSurrogate, 1, 2),
        Refusal(#""\uD800\uD800""#, .loneSurrogate, 1, 2),
        Refusal(#""x\ud83d y""#, .loneSurrogate, 1, 3),
        Refusal(#""\uDE00\uD83D""#, .loneSurrogate, 1, 2),
        Refusal("\"a\nb\"", .controlCharacterInString, 1, 3, "control character 0x0A in string (write it as \\u000A)"),
        Refusal("\"\t\"", .controlCharacterInString, 1, 2),
        Refusal(bytes: [q, 0x00, q], .controlCharacterInString, 1, 2),
        Refusal(bytes: [q, 0x1f, q], .controlCharacterInString, 1, 2),

        // Invalid UTF-8, in strings, comments and between tokens.
        Refusal(bytes: [q, 0xff, q], .invalidUTF8, 1, 2, "invalid UTF-8 (byte 0xFF)"),
        Refusal(bytes: [q, 0x80, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0x61, 0xc0, 0xaf, q], .invalidUTF8, 1, 3),
        Refusal(bytes: [q, 0xc1, 0xbf, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xe0, 0x80, 0xaf, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xf0, 0x80, 0x80, 0xaf, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xed, 0xa0, 0x80, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xed, 0xbf, 0xbf, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xf4, 0x90, 0x80, 0x80, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xf5, 0x80, 0x80, 0x80, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xe2, 0x82, q], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xe2, 0x82], .invalidUTF8, 1, 2),
        Refusal(bytes: [q, 0xc3, 0xa9, 0xc3, q], .invalidUTF8, 1, 3),
        Refusal(bytes: [0x5b, 0xff, 0x5d], .invalidUTF8, 1, 2),
        Refusal(bytes: Array("// ".utf8) + [0xfe] + Array("\n1".utf8), commented, .invalidUTF8, 1, 4),
        Refusal(bytes: Array("1 /* ".utf8) + [0xed, 0xa0, 0x80] + Array(" */".utf8), commented, .invalidUTF8, 1, 6),
        Refusal(bytes: Array("{\"k\":".utf8) + [0xf8] + Array("1}".utf8), .invalidUTF8, 1, 6),

        // A byte order mark, whatever the options.
        Refusal(bytes: [0xef, 0xbb, 0xbf] + Array("{}".utf8), .byteOrderMark, 1, 1),
        Refusal(bytes: [0xef, 0xbb, 0xbf] + Array("{}".utf8), commented, .byteOrderMark, 1, 1),

        // Repeated keys, byte for byte or canonically equivalent.
        Refusal(#"{"a":1,"a":2}"#, .duplicateKey("a"), 1, 8, "duplicate key \"a\" in object"),
        Refusal("{\"x\":{\"b\":1,\n \"c\":2, \"b\":3}}", .duplicateKey("b"), 2, 9),
        Refusal("{\"\u{E9}\":1,\"e\u{301}\":2}", .duplicateKey("e\u{301}"), 1, 8),
        Refusal(#"{"\u0000":1,"\u0000":2}"#, .duplicateKey("\u{0}"), 1, 13, "duplicate key \"\\u0000\" in object"),

        // Data after the value.
        Refusal("1 2", .trailingData, 1, 3, "unexpected '2' after the document's value"),
        Refusal("{}x", .trailingData, 1, 3),
        Refusal("[]]", .trailingData, 1, 3),
        Refusal("truex", .trailingData, 1, 5),
        Refusal("0x10", .trailingData, 1, 2),
        Refusal("1 /* c */ 2", commented, .trailingData, 1, 11),
        Refusal(bytes: Array("{}".utf8) + [0x00], .trailingData, 1, 3),

        // Limits.
        Refusal("[[[1]]]", JSONValue.ParseOptions(maximumDepth: 2), .tooDeep, 1, 3, "arrays and objects nest deeper than 2 levels"),
        Refusal("[1,2]", JSONValue.ParseOptions(maximumLength: 4), .tooLarge, 1, 5, "the document is larger than 4 bytes"),
    ])
    func refusesWithTheSpecificReasonAndPosition(_ r: Refusal) {
        guard let error = refusal(r.bytes, r.options) else {
            Issue.record("accepted")
            return
        }
        #expect(error.reason == r.reason)
        #expect(error.line == r.line)
        #expect(error.column == r.column)
        if let message = r.message { #expect(error.message == message) }
        #expect(error.description == "line \(r.line), column \(r.column): \(error.message)")
        #expect(error.offset >= 0 && error.offset <= r.bytes.count)
    }

    @Test func offsetCountsBytes() throws {
        let error = try #require(refusal(Array("[\"é\", x]".utf8)))
        #expect(error.offset == 7)
        #expect(error.column == 7)
        let end = try #require(refusal(Array("[\"é\"".utf8)))
        #expect(end.reason == .unexpectedEnd)
        #expect(end.offset == 5)
        #expect(end.column == 5)
    }

    @Test func nestingBeyondTheLimitIsRefusedAtTheBracketThatExceedsIt() throws {
        let deepest = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(throws: Never.self) { try parse(deepest) }
        let tooDeep = try #require(refusal(Array((String(repeating: "[", count: 257) + String(repeating: "]", count: 257)).utf8)))
        #expect(tooDeep.reason == .tooDeep)
        #expect(tooDeep.column == 257)
        #expect(tooDeep.offset == 256)
        let objects = String(repeating: #"{"a":"#, count: 300) + "1" + String(repeating: "}", count: 300)
        #expect(refusal(Array(objects.utf8))?.reason == .tooDeep)
    }

    /// The call stack stays flat: a megabyte of open brackets is refused at
    /// the limit and, with the limit lifted, read to its end without
    /// recursing.
    @Test func noInputOverflowsTheStack() throws {
        let brackets = [UInt8](repeating: UInt8(ascii: "["), count: 1 << 20)
        #expect(refusal(brackets)?.reason == .tooDeep)
        let unlimited = JSONValue.ParseOptions(maximumDepth: .max)
        let end = try #require(refusal(brackets, unlimited))
        #expect(end.reason == .unexpectedEnd)
        #expect(end.offset == 1 << 20)
    }

    @Test func theLengthLimitIsCheckedFirst() {
        let options = JSONValue.ParseOptions(maximumLength: 3)
        #expect(refusal(Array("[1]".utf8), options) == nil)
        #expect(refusal(Array("[1] ".utf8), options)?.reason == .tooLarge)
        #expect(refusal([0xff, 0xff, 0xff, 0xff], options)?.reason == .tooLarge)
    }
}

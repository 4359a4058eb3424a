import AssetJSON
import Foundation
import Testing

@Suite struct ParseTests {
    @Test func nestedDocumentKeepsKeyOrder() throws {
        let v = try parse(#" {"z":[1,{"b":[[],{}],"a":true}],"y":{"d":null,"c":"s"},"":-0} "#)
        let object = try #require(v.objectValue)
        #expect(object.keys == ["z", "y", ""])
        #expect(v["y"]?.objectValue?.keys == ["d", "c"])
        #expect(v["y"]?["c"]?.stringValue == "s")
        #expect(v["y"]?["d"]?.isNull == true)
        #expect(v["z"]?.arrayValue?[1]["a"]?.boolValue == true)
        #expect(v["z"]?.arrayValue?[1]["b"] == [[], [:]])
        #expect(v[""]?.numberValue?.text == "-0")
        #expect(v["missing"] == nil)
        #expect(v["z"]?["a"] == nil)
        #expect(v == ["z": [1, ["b": [[], [:]], "a": true]], "y": ["d": nil, "c": "s"], "": .number(JSONNumber(text: "-0")!)])
    }

    @Test(arguments: ["1", "-2.5e-3", "\"s\"", "true", "false", "null", "[]", "{}", " \t\r\n[ ]\n"])
    func anyValueMayBeTheDocument(_ text: String) {
        #expect(throws: Never.self) { try parse(text) }
    }

    @Test func escapesDecode() throws {
        let v = try parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\uD83D\uDE00\udbff\udfff\u0000end""#)
        #expect(v == .string("\"\\/\u{8}\u{C}\n\r\tAé€😀\u{10FFFF}\u{0}end"))
    }

    @Test func rawUTF8IsKeptAsIs() throws {
        let text = "\u{7F}\u{80}\u{7FF}\u{800}\u{D7FF}\u{E000}\u{FFFF}\u{10000}\u{10FFFF}e\u{301}"
        let v = try parse("[\"\(text)\"]")
        #expect(v == [.string(text)])
        #expect(Array(try #require(v.arrayValue?.first?.stringValue).utf8) == Array(text.utf8))
    }

    @Test func commentsAndTrailingCommasWhenAllowed() throws {
        let text = """
            // leading
            {/* a */"a"/**/:/* b ** c */1, // after
             "b": [1, 2,], "c": {"d": [],},
            } /* trailing */ // no newline at the end
            """
        let v = try parse(text, .jsonWithComments)
        #expect(v == ["a": 1, "b": [1, 2], "c": ["d": []]])
        #expect(try parse("/***/1//", .jsonWithComments) == 1)
        #expect(refusal(Array("1//x\r2".utf8), .jsonWithComments)?.reason == .trailingData, "a CR ends a line comment")
    }

    @Test func optionsAreIndependent() throws {
        let commentsOnly = JSONValue.ParseOptions(allowsComments: true)
        #expect(try parse("[1 /* c */]", commentsOnly) == [1])
        #expect(refusal(Array("[1,]".utf8), commentsOnly)?.reason == .unexpectedCharacter(UInt8(ascii: "]")))
        let commasOnly = JSONValue.ParseOptions(allowsTrailingCommas: true)
        #expect(try parse("[1,]", commasOnly) == [1])
        #expect(refusal(Array("[1 /* c */]".utf8), commasOnly)?.reason == .unexpectedCharacter(UInt8(ascii: "/")))
    }

    @Test func everyContiguousAndNonContiguousInputParses() throws {
        let text = #"{"k":["v",1]}"#
        let expected: JSONValue = ["k": ["v", 1]]
        #expect(try JSONValue.parse(Array(text.utf8)) == expected)
        #expect(try JSONValue.parse(("  " + text).utf8.dropFirst(2)) == expected)
        #expect(try JSONValue.parse(Data(text.utf8)) == expected)
        #expect(try JSONValue.parse(Array(("xx" + text).utf8)[2...]) == expected)
        #expect(try JSONValue.parse(Array(text.utf8).lazy.map { $0 }) == expected)
        let fromBuffer = try Array(text.utf8).withUnsafeBytes { buffer throws(JSONError) in try JSONValue.parse(buffer) }
        #expect(fromBuffer == expected)
    }

    @Test func depthLimitAndLengthLimitAreInclusive() {
        let options = JSONValue.ParseOptions(maximumDepth: 3, maximumLength: 7)
        #expect(refusal(Array("[[[1]]]".utf8), options) == nil)
        #expect(refusal(Array("[[[]]]".utf8), options) == nil)
        #expect(refusal(Array("1".utf8), JSONValue.ParseOptions(maximumDepth: 0)) == nil)
        #expect(refusal(Array("[]".utf8), JSONValue.ParseOptions(maximumDepth: 0))?.reason == .tooDeep)
    }

    @Test func objectsCompareWithoutOrderAndLookUpByKey() throws {
        let a = try parse(#"{"x":1,"y":[true]}"#)
        let b = try parse(#"{"y":[true],"x":1}"#)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != (try parse(#"{"x":1,"y":[false]}"#)))
        #expect(a != (try parse(#"{"x":1}"#)))
        #expect(a.objectValue?.keys != b.objectValue?.keys)
        let o: JSONObject = ["é": 1]
        #expect(o["e\u{301}"] == 1, "lookup uses String equality")
        #expect(Set([a, b]).count == 1)
    }
}

@Suite struct NumberTests {
    @Test(arguments: [
        ("0", Int64(0)), ("-0", 0), ("9223372036854775807", .max), ("-9223372036854775808", .min),
        ("1e3", 1000), ("1.0", 1), ("100e-2", 1), ("-2.50e1", -25), ("0e99999999999999999999", 0),
        ("0.000e-5", 0), ("92233720368547758.07e2", .max),
    ])
    func integralValuesReadAsInt64(_ text: String, _ value: Int64) throws {
        let n = try #require(parse(text).numberValue)
        #expect(n.int64Value == value)
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "1.5", "1e-1", "1e19", "1e99999999999999999999",
                      "123456789012345678901234567890", "0.1e1000000000000000000000"])
    func otherValuesAreNotInt64(_ text: String) throws {
        #expect(try #require(parse(text).numberValue).int64Value == nil)
    }

    @Test func uint64CoversItsWholeRangeAndNoMore() throws {
        #expect(try parse("18446744073709551615").numberValue?.uint64Value == .max)
        #expect(try parse("1.8446744073709551615e19").numberValue?.uint64Value == .max)
        #expect(try parse("18446744073709551616").numberValue?.uint64Value == nil)
        #expect(try parse("-1").numberValue?.uint64Value == nil)
        #expect(try parse("-0.0").numberValue?.uint64Value == 0)
        #expect(try parse("0.5").numberValue?.uint64Value == nil)
        #expect(try parse("9223372036854775808").numberValue?.uint64Value == 9_223_372_036_854_775_808)
    }

    @Test func doubleRefusesOnlyWhatOverflows() throws {
        #expect(try parse("1.7976931348623157e308").numberValue?.doubleValue == .greatestFiniteMagnitude)
        #expect(try parse("-1.7976931348623157e308").numberValue?.doubleValue == -.greatestFiniteMagnitude)
        #expect(try parse("5e-324").numberValue?.doubleValue == .leastNonzeroMagnitude)
        #expect(try parse("1e-400").numberValue?.doubleValue == 0)
        #expect(try parse("0.1").numberValue?.doubleValue == 0.1)
        #expect(try parse("1E2").numberValue?.doubleValue == 100)
        #expect(try parse("1e400").numberValue?.doubleValue == nil)
        #expect(try parse("-1e400").numberValue?.doubleValue == nil)
        #expect(try parse("1.5").numberValue?.text == "1.5")
    }

    @Test func literalsAreCheckedWhenBuiltFromText() {
        for good in ["0", "-0", "1.5", "1e5", "1E+5", "-1.25e-7"] { #expect(JSONNumber(text: good)?.text == good) }
        for bad in ["", "-", "+1", ".5", "01", "1.", "1e", "1e+", "NaN", "Infinity", "0x10", " 1", "1 "] {
            #expect(JSONNumber(text: bad) == nil, "\(bad)")
        }
    }

    @Test func numbersFromSwiftValues() {
        #expect(JSONNumber(Int64.min).text == "-9223372036854775808")
        #expect(JSONNumber(UInt64.max).text == "18446744073709551615")
        #expect(JSONNumber(0.1)?.text == "0.1")
        #expect(JSONNumber(1e100)?.doubleValue == 1e100)
        #expect(JSONNumber(-0.0)?.text == "-0.0")
        #expect(JSONNumber(Double.infinity) == nil)
        #expect(JSONNumber(Double.nan) == nil)
        for d in [0.1, 1e100, .leastNonzeroMagnitude, -1.5, 123456.789] {
            #expect(JSONNumber(text: JSONNumber(d)!.text) != nil, "\(d) is written as a JSON literal")
        }
    }
}

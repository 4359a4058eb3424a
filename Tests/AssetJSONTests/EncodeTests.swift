import AssetJSON
import Foundation
import Testing

@Suite struct EncodeTests {
    private func text(_ v: JSONValue, sortedKeys: Bool = false) -> String {
        String(decoding: v.encoded(sortedKeys: sortedKeys), as: UTF8.self)
    }

    @Test func compactAndInOrder() {
        let v: JSONValue = ["b": [1, "x", true, false, nil, [:], []], "a": ["d": 2, "c": .number(JSONNumber(text: "-1.5e+3")!)]]
        #expect(text(v) == #"{"b":[1,"x",true,false,null,{},[]],"a":{"d":2,"c":-1.5e+3}}"#)
        #expect(text(v, sortedKeys: true) == #"{"a":{"c":-1.5e+3,"d":2},"b":[1,"x",true,false,null,{},[]]}"#)
    }

    @Test func sortedKeysUseUTF8ByteOrder() {
        let v: JSONValue = ["b": 1, "B": 2, "a10": 3, "a9": 4, "_": 5, "Z": 6, "é": 7, "e": 8, "": 9]
        #expect(text(v, sortedKeys: true) == #"{"":9,"B":2,"Z":6,"_":5,"a10":3,"a9":4,"b":1,"e":8,"é":7}"#)
    }

    @Test func stringsEscapeQuotesBackslashesAndControlCharacters() {
        var all = ""
        for u in 0 ..< 0x80 { all.unicodeScalars.append(Unicode.Scalar(UInt8(u))) }
        let expected = #""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f"#
            + #"\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"#
            + ##" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"##
            + "\u{7F}\""
        #expect(text(.string(all)) == expected)
        #expect(text(.string("é\u{2028}😀/")) == "\"é\u{2028}😀/\"")
    }

    /// The archive comment used to be written by `JSONSerialization`; for
    /// strings, integers, booleans, arrays and objects whose keys sort the
    /// same both ways, the bytes are the same.
    @Test func matchesJSONSerializationWithoutEscapingSlashes() throws {
        var all = ""
        for u in 0 ..< 0x80 { all.unicodeScalars.append(Unicode.Scalar(UInt8(u))) }
        all += "é\u{2028}\u{10FFFF}"
        let cases: [(Any, JSONValue)] = [
            (["assetPackID": "x.y-z_1", "downloadPolicy": ["essential": ["installationEventTypes": ["subsequentUpdate"]]],
              "platforms": ["linux", "visionOS"]] as [String: Any],
             ["platforms": ["linux", "visionOS"], "downloadPolicy": ["essential": ["installationEventTypes": ["subsequentUpdate"]]],
              "assetPackID": "x.y-z_1"]),
            (["downloadPolicy": ["onDemand": [String: Any]()], "assetPackID": "a", "platforms": [String]()] as [String: Any],
             ["assetPackID": "a", "downloadPolicy": ["onDemand": [:]], "platforms": []]),
            ([all, ["k\n": [1, -2, true, false]]] as [Any], [.string(all), ["k\n": [1, -2, true, false]]]),
        ]
        for (plain, value) in cases {
            let foundation = try JSONSerialization.data(withJSONObject: plain, options: [.sortedKeys, .withoutEscapingSlashes])
            #expect(value.encoded(sortedKeys: true) == Array(foundation))
        }
    }

    @Test(arguments: seedDocuments + commentedSeedDocuments)
    func encodingRoundTrips(_ document: String) throws {
        let v = try parse(document, .jsonWithComments)
        let bytes = v.encoded()
        let again = try JSONValue.parse(bytes)
        #expect(again == v)
        #expect(again.encoded() == bytes, "document order is kept")
        let sorted = v.encoded(sortedKeys: true)
        #expect(try JSONValue.parse(sorted) == v)
        #expect(try JSONValue.parse(sorted).encoded(sortedKeys: true) == sorted)
    }

    @Test func builtValuesRoundTrip() throws {
        let v: JSONValue = [
            "control": .string("\u{0}\u{1F}\u{7F}\"\\"), "surrogates": "😀\u{10FFFF}", "numbers": [
                .number(JSONNumber(Int64.min)), .number(JSONNumber(UInt64.max)), .number(JSONNumber(0.1)!),
                .number(JSONNumber(Double.leastNonzeroMagnitude)!), .number(JSONNumber(-0.0)!),
            ],
            "nested": [[[["deep": [nil]]]]],
        ]
        #expect(try JSONValue.parse(v.encoded()) == v)
    }
}

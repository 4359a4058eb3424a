import Testing
import AssetJSON

/// `parse(_:options:elementsOf:_:)`: the top-level member's array elements
/// go to the handler one by one, and the rest of the document is the same.
@Suite struct StreamedArrayTests {
    func parse(_ text: String, key: String = "items", stopAfter: Int = .max) throws -> (JSONValue, [JSONValue]) {
        var seen: [JSONValue] = []
        let value = try Array(text.utf8).withUnsafeBytes { raw in
            try JSONValue.parse(raw, elementsOf: key) { element in
                seen.append(element)
                return seen.count < stopAfter
            }
        }
        return (value, seen)
    }

    @Test func elementsAreHandedOverAndTheArrayIsEmpty() throws {
        let (value, seen) = try parse(#"{"a":1,"items":[{"x":[1,2]},"s",3,[4]],"z":{"items":[5]}}"#)
        #expect(seen == [["x": [1, 2]], "s", 3, [4]])
        #expect(value == ["a": 1, "items": [], "z": ["items": [5]]])
    }

    @Test func otherMembersAndNonArraysAreNotStreamed() throws {
        #expect(try parse(#"{"items":{"k":[1]}}"#) == (["items": ["k": [1]]], []))
        #expect(try parse(#"[[1,2]]"#, key: "") == ([[1, 2]], []))
        #expect(try parse(#"{"other":[1,2]}"#) == (["other": [1, 2]], []))
    }

    @Test func anErrorAfterSomeElementsStillThrows() throws {
        #expect {
            try parse(#"{"items":[1,2,}"#)
        } throws: { error in
            guard case .unexpectedCharacter? = (error as? JSONError)?.reason else { return false }
            return true
        }
    }

    @Test func theHandlerStopsTheParse() throws {
        #expect {
            try parse(#"{"items":[1,2,3]}"#, stopAfter: 2)
        } throws: { error in
            (error as? JSONError)?.reason == .stopped
        }
    }
}

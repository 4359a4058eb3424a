/// The bytes of the grammar.
enum ASCII {
    static let tab: UInt8 = 0x09, lineFeed: UInt8 = 0x0a, carriageReturn: UInt8 = 0x0d, space: UInt8 = 0x20
    static let quote: UInt8 = 0x22, plus: UInt8 = 0x2b, comma: UInt8 = 0x2c, minus: UInt8 = 0x2d
    static let dot: UInt8 = 0x2e, slash: UInt8 = 0x2f, zero: UInt8 = 0x30, nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3a, star: UInt8 = 0x2a, backslash: UInt8 = 0x5c
    static let openBracket: UInt8 = 0x5b, closeBracket: UInt8 = 0x5d, openBrace: UInt8 = 0x7b, closeBrace: UInt8 = 0x7d
}

/// A one-pass parser over bytes in memory.
///
/// It does not recurse: the arrays and objects still open are kept on
/// explicit stacks (`open`, `arrays`, `objects`), bounded by
/// `maximumDepth`, so the call stack is the same for `1` and for 10,000
/// nested brackets. Every read is checked against `bytes.count`.
struct Parser {
    let bytes: UnsafeRawBufferPointer
    let options: JSONValue.ParseOptions
    /// The next byte to read.
    var i = 0
    /// The containers still open, innermost last: `true` for an object.
    private var open: [Bool] = []
    private var arrays: [[JSONValue]] = []
    private var objects: [ObjectBuilder] = []
    /// A string's bytes once it has an escape (reused between strings).
    var scratch: [UInt8] = []
    /// The top-level member whose array's elements go to the handler
    /// instead of into the array (``JSONValue/parse(_:options:elementsOf:_:)``).
    var streamed: (key: String, handle: (JSONValue) -> Bool)?

    private struct ObjectBuilder {
        var members: [JSONObject.Element] = []
        var positions: [String: Int] = [:]
        /// The key whose value comes next.
        var key = ""
    }

    init(bytes: UnsafeRawBufferPointer, options: JSONValue.ParseOptions) {
        self.bytes = bytes
        self.options = options
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        guard bytes.count <= options.maximumLength else {
            throw failure(.tooLarge, at: max(options.maximumLength, 0), "the document is larger than \(options.maximumLength) bytes")
        }
        if bytes.count >= 3, bytes[0] == 0xef, bytes[1] == 0xbb, bytes[2] == 0xbf {
            throw failure(.byteOrderMark, at: 0, "the document starts with a byte order mark (save it as UTF-8 without one)")
        }
        var expected = "a value"
        parsing: while true {
            try skipTrivia()
            guard i < bytes.count else { throw unexpected(expected, at: i) }
            var value: JSONValue
            switch bytes[i] {
            case ASCII.openBrace:
                try push(object: true)
                try skipTrivia()
                if i < bytes.count, bytes[i] == ASCII.closeBrace {
                    i += 1
                    value = pop()
                } else {
                    try parseKey(expected: "a string key or '}'")
                    expected = "a value"
                    continue parsing
                }
            case ASCII.openBracket:
                try push(object: false)
                try skipTrivia()
                if i < bytes.count, bytes[i] == ASCII.closeBracket {
                    i += 1
                    value = pop()
                } else {
                    expected = "a value or ']'"
                    continue parsing
                }
            case ASCII.quote:
                value = .string(try parseString())
            case ASCII.minus, ASCII.zero...ASCII.nine:
                value = .number(try parseNumber())
            case UInt8(ascii: "t"):
                try parseLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try parseLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try parseLiteral("null")
                value = .null
            default:
                throw unexpected(expected, at: i)
            }

            // A value is complete: add it to the container it is in, and
            // close every container that ends right after it.
            while let isObject = open.last {
                if isObject {
                    let key = objects[objects.count - 1].key
                    objects[objects.count - 1].members.append((key, value))
                } else if let streamed, open.count == 2, open[0], objects[0].key == streamed.key {
                    // An element of the streamed array: handed over, not kept.
                    guard streamed.handle(value) else { throw failure(.stopped, at: i, "the element handler stopped the parse") }
                } else {
                    arrays[arrays.count - 1].append(value)
                }
                try skipTrivia()
                let close = isObject ? ASCII.closeBrace : ASCII.closeBracket
                if i < bytes.count, bytes[i] == ASCII.comma {
                    i += 1
                    try skipTrivia()
                    if options.allowsTrailingCommas, i < bytes.count, bytes[i] == close {
                        i += 1
                    } else {
                        if isObject { try parseKey(expected: "a string key") }
                        expected = "a value"
                        continue parsing
                    }
                } else if i < bytes.count, bytes[i] == close {
                    i += 1
                } else {
                    throw unexpected(isObject ? "',' or '}' after object member" : "',' or ']' after array element", at: i)
                }
                value = pop()
            }
            try skipTrivia()
            guard i == bytes.count else {
                throw failure(.trailingData, at: i, "unexpected \(shown(at: i)) after the document's value")
            }
            return value
        }
    }

    private mutating func push(object: Bool) throws(JSONError) {
        guard open.count < options.maximumDepth else {
            throw failure(.tooDeep, at: i, "arrays and objects nest deeper than \(options.maximumDepth) levels")
        }
        open.append(object)
        if object { objects.append(ObjectBuilder()) } else { arrays.append([]) }
        i += 1
    }

    /// Closes the innermost container and returns it as a value.
    private mutating func pop() -> JSONValue {
        if open.removeLast() {
            let o = objects.removeLast()
            return .object(JSONObject(checkedMembers: o.members, positions: o.positions))
        }
        return .array(arrays.removeLast())
    }

    /// Reads `"key" :` in the innermost object, which must not have the key yet.
    private mutating func parseKey(expected: String) throws(JSONError) {
        try skipTrivia()
        guard i < bytes.count, bytes[i] == ASCII.quote else { throw unexpected(expected, at: i) }
        let start = i
        let key = try parseString()
        let last = objects.count - 1
        guard objects[last].positions.updateValue(objects[last].members.count, forKey: key) == nil else {
            throw failure(.duplicateKey(key), at: start, "duplicate key \(Self.quoted(key)) in object")
        }
        objects[last].key = key
        try skipTrivia()
        guard i < bytes.count, bytes[i] == ASCII.colon else { throw unexpected("':' after object key", at: i) }
        i += 1
    }

    /// Skips whitespace (space, tab, LF, CR) and, when allowed, comments.
    private mutating func skipTrivia() throws(JSONError) {
        while i < bytes.count {
            switch bytes[i] {
            case ASCII.space, ASCII.tab, ASCII.lineFeed, ASCII.carriageReturn:
                i += 1
            case ASCII.slash where options.allowsComments:
                try skipComment()
            default:
                return
            }
        }
    }

    private mutating func skipComment() throws(JSONError) {
        let start = i
        i += 1
        guard i < bytes.count, bytes[i] == ASCII.slash || bytes[i] == ASCII.star else {
            throw unexpected("'/' or '*' after '/' (a comment)", at: i)
        }
        if bytes[i] == ASCII.slash {
            i += 1
            while i < bytes.count, bytes[i] != ASCII.lineFeed, bytes[i] != ASCII.carriageReturn {
                try skipCharacter()
            }
            return
        }
        i += 1
        while i < bytes.count {
            if bytes[i] == ASCII.star, i + 1 < bytes.count, bytes[i + 1] == ASCII.slash {
                i += 2
                return
            }
            try skipCharacter()
        }
        let (line, column) = position(of: start)
        throw unexpected("'*/' to end the comment that starts at line \(line), column \(column)", at: i)
    }

    /// Steps over one character of comment text, which must be valid UTF-8.
    private mutating func skipCharacter() throws(JSONError) {
        guard bytes[i] >= 0x80 else { i += 1; return }
        guard let length = utf8Length(at: i) else { throw invalidUTF8(at: i) }
        i += length
    }

    private mutating func parseLiteral(_ word: StaticString) throws(JSONError) {
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for (k, b) in text.enumerated() where i + k >= bytes.count || bytes[i + k] != b {
            throw unexpected("'\(word)'", at: i + k)
        }
        i += text.count
    }

    private mutating func parseNumber() throws(JSONError) -> JSONNumber {
        func isDigit(_ k: Int) -> Bool { k < bytes.count && bytes[k] >= ASCII.zero && bytes[k] <= ASCII.nine }
        let start = i
        if bytes[i] == ASCII.minus { i += 1 }
        guard isDigit(i) else { throw invalidNumber(at: i, "expected a digit after '-'") }
        if bytes[i] == ASCII.zero {
            i += 1
            guard !isDigit(i) else { throw invalidNumber(at: i, "a leading zero is not allowed") }
        } else {
            while isDigit(i) { i += 1 }
        }
        if i < bytes.count, bytes[i] == ASCII.dot {
            i += 1
            guard isDigit(i) else { throw invalidNumber(at: i, "expected a digit after '.'") }
            while isDigit(i) { i += 1 }
        }
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < bytes.count, bytes[i] == ASCII.plus || bytes[i] == ASCII.minus { i += 1 }
            guard isDigit(i) else { throw invalidNumber(at: i, "expected a digit in the exponent") }
            while isDigit(i) { i += 1 }
        }
        return JSONNumber(validatedText: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self))
    }

    // MARK: Errors

    /// The error for finding something other than `expected` at `offset`:
    /// the end of the document, invalid UTF-8, or an unexpected character.
    func unexpected(_ expected: String, at offset: Int) -> JSONError {
        guard offset < bytes.count else {
            return failure(.unexpectedEnd, at: bytes.count, "expected \(expected), found the end of the document")
        }
        if bytes[offset] >= 0x80, utf8Length(at: offset) == nil { return invalidUTF8(at: offset) }
        return failure(.unexpectedCharacter(bytes[offset]), at: offset, "expected \(expected), found \(shown(at: offset))")
    }

    func invalidUTF8(at offset: Int) -> JSONError {
        failure(.invalidUTF8, at: offset, "invalid UTF-8 (byte \(Self.hex(bytes[offset])))")
    }

    private func invalidNumber(at offset: Int, _ what: String) -> JSONError {
        failure(.invalidNumber, at: offset, "invalid number: \(what), found \(shown(at: offset))")
    }

    func failure(_ reason: JSONError.Reason, at offset: Int, _ message: String) -> JSONError {
        let (line, column) = position(of: offset)
        return JSONError(reason, line: line, column: column, offset: offset, message: message)
    }

    /// Line and column (from 1) of a byte offset: lines end at LF, CR LF or
    /// a lone CR; columns count the bytes that start a UTF-8 sequence, so
    /// one per Unicode scalar (and one per invalid byte that is not a
    /// continuation byte).
    func position(of offset: Int) -> (line: Int, column: Int) {
        var line = 1, column = 1
        var k = 0
        let end = min(offset, bytes.count)
        while k < end {
            let b = bytes[k]
            if b == ASCII.lineFeed || (b == ASCII.carriageReturn && (k + 1 >= bytes.count || bytes[k + 1] != ASCII.lineFeed)) {
                line += 1
                column = 1
            } else if b != ASCII.carriageReturn, b & 0xc0 != 0x80 {
                column += 1
            }
            k += 1
        }
        return (line, column)
    }

    /// The character at `offset` as a message shows it: `'x'`, `U+00A0`,
    /// `control character 0x0A`, `byte 0xF8`, `the end of the document`.
    func shown(at offset: Int) -> String {
        guard offset < bytes.count else { return "the end of the document" }
        let b = bytes[offset]
        switch b {
        case UInt8(ascii: "'"):
            return "\"'\""
        case 0x20...0x7e:
            return "'\(Character(Unicode.Scalar(b)))'"
        case 0..<0x20, 0x7f:
            return "control character \(Self.hex(b))"
        default:
            guard let length = utf8Length(at: offset) else { return "byte \(Self.hex(b)) (invalid UTF-8)" }
            let scalar = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]), as: UTF8.self)
                .unicodeScalars.first?.value ?? 0xfffd
            return "U+\(Self.hex(scalar, digits: 4))"
        }
    }

    static func hex(_ b: UInt8) -> String { "0x" + hex(UInt32(b), digits: 2) }

    static func hex(_ v: UInt32, digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(digits - s.count, 0)) + s
    }

    /// `key` in double quotes, control characters shown as `\u00XX`.
    static func quoted(_ key: String) -> String {
        var s = "\""
        for scalar in key.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7f { s += "\\u" + hex(scalar.value, digits: 4) } else { s.unicodeScalars.append(scalar) }
        }
        return s + "\""
    }
}

extension Parser {
    /// Reads a string starting at its opening quote and steps past the
    /// closing one. Without escapes the text is decoded straight from the
    /// document; with them it is assembled in `scratch`.
    mutating func parseString() throws(JSONError) -> String {
        let open = i
        i += 1
        let start = i
        var escaped = false
        var run = start
        while true {
            guard i < bytes.count else {
                let (line, column) = position(of: open)
                throw unexpected("'\"' to end the string that starts at line \(line), column \(column)", at: i)
            }
            let b = bytes[i]
            if b == ASCII.quote { break }
            if b == ASCII.backslash {
                if !escaped {
                    scratch.removeAll(keepingCapacity: true)
                    escaped = true
                }
                scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[run..<i]))
                try parseEscape()
                run = i
            } else if b < 0x20 {
                throw failure(.controlCharacterInString, at: i,
                              "control character \(Self.hex(b)) in string (write it as \\u\(Self.hex(UInt32(b), digits: 4)))")
            } else if b < 0x80 {
                i += 1
            } else {
                guard let length = utf8Length(at: i) else { throw invalidUTF8(at: i) }
                i += length
            }
        }
        let text: String
        if escaped {
            scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[run..<i]))
            text = String(decoding: scratch, as: UTF8.self)
        } else {
            text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        }
        i += 1
        return text
    }

    /// Decodes the escape at `i` (a backslash) into `scratch`.
    private mutating func parseEscape() throws(JSONError) {
        let start = i
        guard i + 1 < bytes.count else { throw unexpected("an escape after '\\'", at: i + 1) }
        let decoded: UInt8
        switch bytes[i + 1] {
        case ASCII.quote: decoded = ASCII.quote
        case ASCII.backslash: decoded = ASCII.backslash
        case ASCII.slash: decoded = ASCII.slash
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0c
        case UInt8(ascii: "n"): decoded = ASCII.lineFeed
        case UInt8(ascii: "r"): decoded = ASCII.carriageReturn
        case UInt8(ascii: "t"): decoded = ASCII.tab
        case UInt8(ascii: "u"):
            let unit = try hexEscape(at: start)
            i += 6
            var scalar = unit
            if (0xd800...0xdbff).contains(unit) {
                guard i + 1 < bytes.count, bytes[i] == ASCII.backslash, bytes[i + 1] == UInt8(ascii: "u") else {
                    throw loneSurrogate(unit, at: start)
                }
                let low = try hexEscape(at: i)
                guard (0xdc00...0xdfff).contains(low) else { throw loneSurrogate(unit, at: start) }
                i += 6
                scalar = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
            } else if (0xdc00...0xdfff).contains(unit) {
                throw loneSurrogate(unit, at: start)
            }
            appendUTF8(scalar)
            return
        default:
            let shown = (0x21...0x7e).contains(bytes[i + 1])
                ? "'\\\(Character(Unicode.Scalar(bytes[i + 1])))'" : "'\\' followed by \(shown(at: i + 1))"
            throw failure(.invalidEscape, at: start, "invalid escape \(shown) in string")
        }
        scratch.append(decoded)
        i += 2
    }

    /// The code unit of the `\uXXXX` escape whose backslash is at `start`.
    private func hexEscape(at start: Int) throws(JSONError) -> UInt32 {
        var unit: UInt32 = 0
        for k in start + 2..<start + 6 {
            guard k < bytes.count else { throw unexpected("four hex digits after '\\u'", at: k) }
            let b = bytes[k]
            let digit: UInt8
            switch b {
            case ASCII.zero...ASCII.nine: digit = b - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default:
                throw failure(.invalidEscape, at: start, "invalid escape '\\u' (expected four hex digits, found \(shown(at: k))) in string")
            }
            unit = unit << 4 | UInt32(digit)
        }
        return unit
    }

    private func loneSurrogate(_ unit: UInt32, at offset: Int) -> JSONError {
        failure(.loneSurrogate, at: offset,
                "lone surrogate \\u\(Self.hex(unit, digits: 4)) in string (a high surrogate \\uD800-\\uDBFF must be followed by a low one \\uDC00-\\uDFFF)")
    }

    /// Appends a scalar (never a surrogate) to `scratch` as UTF-8.
    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(0xc0 | UInt8(scalar >> 6))
            scratch.append(0x80 | UInt8(scalar & 0x3f))
        case 0x800..<0x10000:
            scratch.append(0xe0 | UInt8(scalar >> 12))
            scratch.append(0x80 | UInt8(scalar >> 6 & 0x3f))
            scratch.append(0x80 | UInt8(scalar & 0x3f))
        default:
            scratch.append(0xf0 | UInt8(scalar >> 18))
            scratch.append(0x80 | UInt8(scalar >> 12 & 0x3f))
            scratch.append(0x80 | UInt8(scalar >> 6 & 0x3f))
            scratch.append(0x80 | UInt8(scalar & 0x3f))
        }
    }

    /// The length of the well-formed UTF-8 sequence at `offset` (a byte of
    /// 0x80 or more), or `nil` when it is not one (Unicode's table 3-7): no
    /// stray continuation bytes, no overlong forms, no surrogates, nothing
    /// above U+10FFFF, nothing cut short by the end of the document.
    func utf8Length(at offset: Int) -> Int? {
        let lead = bytes[offset]
        let length: Int
        var second: ClosedRange<UInt8> = 0x80...0xbf
        switch lead {
        case 0xc2...0xdf: length = 2
        case 0xe0: length = 3; second = 0xa0...0xbf
        case 0xe1...0xec, 0xee...0xef: length = 3
        case 0xed: length = 3; second = 0x80...0x9f
        case 0xf0: length = 4; second = 0x90...0xbf
        case 0xf1...0xf3: length = 4
        case 0xf4: length = 4; second = 0x80...0x8f
        default: return nil
        }
        guard offset + length <= bytes.count, second.contains(bytes[offset + 1]) else { return nil }
        for k in offset + 2..<offset + length where bytes[k] & 0xc0 != 0x80 { return nil }
        return length
    }
}

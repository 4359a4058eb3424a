extension JSONValue {
    /// The value as compact JSON (UTF-8, no whitespace), the same bytes for
    /// the same value every time.
    ///
    /// Strings escape `"` and `\` with a backslash, the control characters
    /// backspace, form feed, LF, CR and tab as `\b \f \n \r \t`, and the
    /// other characters below U+0020 as `\u00xx` (lowercase hex); everything
    /// else, `/` and non-ASCII included, is written as itself. Numbers are
    /// written as their literal text. Strings, integers and structure come
    /// out as Foundation's `JSONSerialization` writes them with
    /// `.withoutEscapingSlashes`.
    ///
    /// - Parameter sortedKeys: Write each object's members in the byte order
    ///   of their keys' UTF-8 rather than in their own order. (This is not
    ///   `JSONSerialization`'s `.sortedKeys` order, which ignores case and
    ///   compares digits as numbers; the two agree when the keys start with
    ///   different lowercase ASCII letters.)
    /// - Returns: The document; ``parse(_:options:)`` reads it back as an
    ///   equal value.
    public func encoded(sortedKeys: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out, sortedKeys: sortedKeys)
        return out
    }

    private func write(to out: inout [UInt8], sortedKeys: Bool) {
        switch self {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let b):
            out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n):
            out.append(contentsOf: n.text.utf8)
        case .string(let s):
            Self.write(string: s, to: &out)
        case .array(let elements):
            out.append(ASCII.openBracket)
            for (k, element) in elements.enumerated() {
                if k > 0 { out.append(ASCII.comma) }
                element.write(to: &out, sortedKeys: sortedKeys)
            }
            out.append(ASCII.closeBracket)
        case .object(let object):
            let members = sortedKeys
                ? object.members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                : object.members
            out.append(ASCII.openBrace)
            for (k, member) in members.enumerated() {
                if k > 0 { out.append(ASCII.comma) }
                Self.write(string: member.key, to: &out)
                out.append(ASCII.colon)
                member.value.write(to: &out, sortedKeys: sortedKeys)
            }
            out.append(ASCII.closeBrace)
        }
    }

    private static func write(string: String, to out: inout [UInt8]) {
        out.append(ASCII.quote)
        for b in string.utf8 {
            switch b {
            case ASCII.quote, ASCII.backslash:
                out.append(ASCII.backslash)
                out.append(b)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x0c: out.append(contentsOf: #"\f"#.utf8)
            case ASCII.lineFeed: out.append(contentsOf: #"\n"#.utf8)
            case ASCII.carriageReturn: out.append(contentsOf: #"\r"#.utf8)
            case ASCII.tab: out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(digits[Int(b >> 4)])
                out.append(digits[Int(b & 0xf)])
            default:
                out.append(b)
            }
        }
        out.append(ASCII.quote)
    }
}

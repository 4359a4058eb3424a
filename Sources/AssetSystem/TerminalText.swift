/// Text from outside (member paths, file names, server words) made safe to
/// show on a terminal, in a log or in a listing: the characters that steer
/// a terminal or reorder what is shown are escaped, so a name cannot move
/// the cursor, retitle the window or make `gpj.exe` read as `exe.jpg`.
///
/// Escaped, each as its own code point:
///
/// - C0 controls (U+0000–U+001F) and DEL as `\xNN` (ESC is `\x1b`);
/// - C1 controls (U+0080–U+009F) as `\u{NN}` (`\u{9b}`, the one-byte CSI);
/// - the bidirectional formatting characters — U+061C, U+200E, U+200F,
///   U+202A–U+202E, U+2066–U+2069 — and the line and paragraph separators
///   U+2028 and U+2029, as `\u{NNNN}` (`\u{202e}`, RIGHT-TO-LEFT OVERRIDE).
///
/// Hex digits are lowercase. Everything else, other letters and marks of
/// every script included, is kept. Where the text itself may hold a
/// backslash (a file name, unlike a member path), an escape and the same
/// characters typed by hand look alike: the escaping is for people to read,
/// never to be parsed back.
public enum TerminalText {
    /// Whether `scalar` is one ``escaped(_:)`` escapes.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00 ..< 0x20, 0x7f ..< 0xa0: return true
        case 0x061c, 0x200e, 0x200f, 0x202a ... 0x202e, 0x2066 ... 0x2069, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// `text` with every unsafe scalar escaped; `text` itself when it has none.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) { result += escape(scalar) } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }

    /// The escape of one unsafe scalar: `\x1b`, `\u{9b}`, `\u{202e}`.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16)
        return scalar.value < 0x80 ? "\\x" + (digits.count == 1 ? "0" : "") + digits : "\\u{" + digits + "}"
    }
}

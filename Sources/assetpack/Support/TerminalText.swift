/// Text from a pack (member paths) made safe to print on a terminal.
enum TerminalText {
    /// `text` with control characters escaped, so a name cannot move the
    /// cursor, change colours or retitle the window: C0 and DEL as `\xNN`
    /// (`\x1b` for ESC), C1 (U+0080–U+009F, which some terminals obey too)
    /// as `\u{NN}`. Member paths cannot contain a backslash, so an escape
    /// is never confused with the name's own characters. `--json` output
    /// is not passed through this; JSON escapes these itself.
    static func escaped(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (scalar.value >= 0x7f && scalar.value < 0xa0)
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            let digits = String(scalar.value, radix: 16)
            result += scalar.value < 0x80 ? "\\x" + (digits.count == 1 ? "0" : "") + digits : "\\u{" + digits + "}"
        }
        return result
    }
}

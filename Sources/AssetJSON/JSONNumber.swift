/// A JSON number, kept as its literal text (`-12`, `0.5`, `6.02e23`), so
/// nothing is lost or rounded until a caller asks for a Swift number.
///
/// The accessors refuse what the asked-for type cannot hold exactly:
/// ``int64Value`` and ``uint64Value`` are `nil` for a value that is not an
/// integer (`1.5`) or is out of range; ``doubleValue`` is `nil` for a value
/// beyond `Double`'s range. Two numbers are equal when their texts are
/// (`1` and `1.0` are different numbers here).
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The literal, exactly as it appeared in the document (RFC 8259 grammar:
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`).
    public let text: String

    /// Wraps a literal the parser has already checked.
    init(validatedText: String) {
        text = validatedText
    }

    /// A number from literal text; `nil` when `text` is not a JSON number
    /// (`+1`, `.5`, `01`, `1.`, `NaN`, `0x10` are not).
    public init?(text: String) {
        guard Self.isValidLiteral(Array(text.utf8)) else { return nil }
        self.text = text
    }

    /// The integer `value` (`-42`).
    public init(_ value: Int64) {
        text = String(value)
    }

    /// The integer `value` (`18446744073709551615`).
    public init(_ value: UInt64) {
        text = String(value)
    }

    /// `value` in the shortest text that reads back as the same `Double`
    /// (`0.1`, `1e+100`, `-0.0`); `nil` for infinities and NaN, which JSON
    /// cannot express.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        text = value.description
    }

    /// The literal text.
    public var description: String { text }

    /// The nearest `Double`; `nil` when the value is too large in magnitude
    /// to be finite. A value too small to be represented reads as zero.
    public var doubleValue: Double? {
        guard let d = Double(text), d.isFinite else { return nil }
        return d
    }

    /// The value as an `Int64` when it is an integer in range (`3`, `-0`,
    /// `2.0`, `1e3` are integers; `2.5` is not); `nil` otherwise.
    public var int64Value: Int64? {
        guard let (negative, magnitude) = integerParts() else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// The value as a `UInt64` when it is a non-negative integer in range
    /// (`-0` counts as zero); `nil` otherwise.
    public var uint64Value: UInt64? {
        guard let (negative, magnitude) = integerParts() else { return nil }
        guard !negative || magnitude == 0 else { return nil }
        return magnitude
    }

    /// Sign and magnitude when the literal is an integer whose magnitude fits
    /// in 64 bits, computed exactly from the digits (no floating point).
    private func integerParts() -> (negative: Bool, magnitude: UInt64)? {
        let bytes = Array(text.utf8)
        var i = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { i += 1 }
        var digits: [UInt8] = []
        var fractionDigits = 0
        while i < bytes.count, Self.isDigit(bytes[i]) { digits.append(bytes[i] &- 0x30); i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            while i < bytes.count, Self.isDigit(bytes[i]) { digits.append(bytes[i] &- 0x30); fractionDigits += 1; i += 1 }
        }
        // The exponent saturates far beyond any meaningful value, so a long
        // run of exponent digits cannot overflow.
        var exponent = 0
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            var exponentNegative = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
                exponentNegative = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            while i < bytes.count, Self.isDigit(bytes[i]) {
                exponent = min(exponent * 10 + Int(bytes[i] &- 0x30), 1 << 40)
                i += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        guard let first = digits.firstIndex(where: { $0 != 0 }) else { return (negative, 0) }
        var last = digits.count - 1
        var scale = exponent - fractionDigits
        while digits[last] == 0 { last -= 1; scale += 1 }
        guard scale >= 0, last - first + 1 + scale <= 20 else { return nil }
        var magnitude: UInt64 = 0
        for d in digits[first...last] {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(d))
            guard !o1, !o2 else { return nil }
            magnitude = sum
        }
        for _ in 0..<scale {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            magnitude = times10
        }
        return (negative, magnitude)
    }

    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// Whether `bytes` is exactly one number literal of RFC 8259.
    static func isValidLiteral(_ bytes: [UInt8]) -> Bool {
        var i = 0
        func digits() -> Int {
            let start = i
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            return i - start
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count else { return false }
        if bytes[i] == UInt8(ascii: "0") { i += 1 } else if digits() == 0 { return false }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return false }
        }
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == bytes.count
    }
}

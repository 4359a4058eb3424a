/// What a `Range` field asks of a representation of a given length
/// (RFC 9110 §14), as the server answers it.
package enum RangeOutcome: Sendable, Equatable {
    /// No usable range: send the whole representation (200). A syntactically
    /// invalid field, another unit, or several ranges end here.
    case whole
    /// The bytes `first...last` (206), both within the representation.
    case partial(first: Int64, last: Int64)
    /// A valid range that selects nothing (416, `Content-Range: bytes */length`).
    case unsatisfiable
}

/// `Range: bytes=…` parsing.
package enum ByteRange {
    /// Evaluates the field value `value` against a representation of
    /// `length` bytes.
    ///
    /// - `bytes=a-b`, `bytes=a-`: from `a` to `b` (clamped to the end) or to
    ///   the end; unsatisfiable when `a` is at or past the end.
    /// - `bytes=-n`: the last `n` bytes (all of them if `n` is larger);
    ///   unsatisfiable when `n` is 0 or the representation is empty.
    /// - `b < a`, a non-digit, an empty spec, another unit: `.whole` (an
    ///   invalid Range is ignored, RFC 9110 §14.2).
    /// - Several ranges: `.whole`; the server does not send multipart/byteranges.
    /// - Numbers too large for 64 bits saturate, so `bytes=99999999999999999999-`
    ///   is unsatisfiable and `bytes=0-99999999999999999999` the whole file.
    package static func evaluate(_ value: String, length: Int64) -> RangeOutcome {
        let trimmed = value.trimmingWhitespace()
        guard let equals = trimmed.firstIndex(of: "="),
              trimmed[..<equals].lowercased() == "bytes" else { return .whole }
        let specs = HTTPList.elements(String(trimmed[trimmed.index(after: equals)...]))
        guard specs.count == 1, let spec = specs.first, let dash = spec.firstIndex(of: "-") else { return .whole }
        let firstText = spec[..<dash], lastText = spec[spec.index(after: dash)...]
        if firstText.isEmpty {
            guard let suffix = number(lastText) else { return .whole }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .partial(first: length - min(suffix, length), last: length - 1)
        }
        guard let first = number(firstText) else { return .whole }
        var last = Int64.max
        if !lastText.isEmpty {
            guard let l = number(lastText), l >= first else { return .whole }
            last = l
        }
        guard first < length else { return .unsatisfiable }
        return .partial(first: first, last: min(last, length - 1))
    }

    /// `1*DIGIT` as a number, saturating at `Int64.max`; `nil` if not digits.
    static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(Int64(byte - 0x30))
            value = o1 || o2 ? Int64.max : plus
        }
        return value
    }
}

extension String {
    /// The string `bytes` spell if they are valid UTF-8, else `nil` — what
    /// `String(validating: bytes, as: UTF8.self)` gives, for a tenth of its
    /// instructions on the short strings of a request.
    ///
    /// The standard library's generic validating initializer goes through
    /// an unspecialized path that looks up `Unicode.ParseResult`'s generic
    /// metadata at run time: about a thousand instructions for a 30-byte
    /// path, a sixth of what the descriptor daemon spent answering a
    /// request. Here bytes that are all ASCII (checked eight at a time) are
    /// valid as they are and only decoded. Others are decoded with
    /// `String(decoding:as:)`, which repairs: it replaces each ill-formed
    /// subsequence with U+FFFD. The bytes before the first ill-formed one
    /// are kept as they are, and the `EF BF BD` written in its place cannot
    /// equal the input there (those three bytes would have decoded as a
    /// valid U+FFFD), so the result spells exactly `bytes` if and only if
    /// they were valid.
    public init?(strictUTF8 bytes: UnsafeRawBufferPointer) {
        guard !Self.isASCII(bytes) else {
            self = String(decoding: bytes, as: UTF8.self)
            return
        }
        var decoded = String(decoding: bytes, as: UTF8.self)
        let same = decoded.withUTF8 { $0.count == bytes.count && UnsafeRawBufferPointer($0).elementsEqual(bytes) }
        guard same else { return nil }
        self = decoded
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let high: UInt64 = 0x8080_8080_8080_8080
        var at = 0
        while bytes.count - at >= 8 {
            guard bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self) & high == 0 else { return false }
            at += 8
        }
        while at < bytes.count {
            guard bytes[at] < 0x80 else { return false }
            at += 1
        }
        return true
    }
}

import AssetSystem

/// The rules a member path must follow, shared by the reader and the writer.
///
/// A member path is a relative path of valid UTF-8 whose components are
/// separated by `/`: not empty, not absolute (no leading `/`, no drive letter
/// such as `C:`), no backslash, no NUL byte, and no empty, `.` or `..`
/// component. Directory entries end in one `/`, which is not part of these
/// rules. Other control characters are allowed, as file systems allow them;
/// whatever shows a name to a person escapes them.
///
/// A name flagged as UTF-8 (general-purpose bit 11) must be valid UTF-8; an
/// unflagged one is UTF-8 when it is valid UTF-8 and CP437 otherwise, unless
/// an Info-ZIP Unicode Path field with a matching CRC-32 gives it.
///
/// Names are compared in Unicode Normalization Form C: the reader gives each
/// member its name in NFC (the archive's bytes are left as they are), and a
/// lookup normalizes the path it is asked for with ``normalized(_:)``, so
/// `café` precomposed and decomposed name the same member.
public enum MemberPath {
    /// `path` in Unicode Normalization Form C. An ASCII path is returned as
    /// it is, after one pass over its bytes eight at a time (a few
    /// nanoseconds for a typical path) and without allocating.
    @inline(__always)
    public static func normalized(_ path: String) -> String {
        let ascii = path.utf8.withContiguousStorageIfAvailable { bytes in
            isASCII(UnsafeRawBufferPointer(bytes))
        }
        if ascii ?? path.utf8.allSatisfy({ $0 < 0x80 }) { return path }
        return nfc(path)
    }

    /// Whether no byte of `bytes` has its high bit set.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var bits: UInt64 = 0
        var index = 0
        while bytes.count - index >= 8 {
            bits |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            bits |= UInt64(bytes[index])
            index += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// The standard library's NFC, the form it hashes and compares strings in.
    @inline(never)
    static func nfc(_ path: String) -> String {
        String(decoding: path._nfcCodeUnits, as: UTF8.self)
    }

    /// `text` made safe to show on a terminal or in a log
    /// (``TerminalText/escaped(_:)``): C0 and DEL as `\xNN`, C1 (U+0080–U+009F)
    /// as `\u{NN}`, the bidirectional formatting characters and the line and
    /// paragraph separators as `\u{NNNN}`. Member paths cannot hold a
    /// backslash, so the escapes are unambiguous in them.
    public static func escapingControlCharacters(_ text: String) -> String {
        TerminalText.escaped(text)
    }

    /// Why the name bytes `name` are not a valid member path, or `nil` when
    /// they are one. Checks the bytes in one pass, without allocating.
    public static func problem(in name: UnsafeRawBufferPointer) -> ArchiveError.PathProblem? {
        let count = name.count
        guard count > 0 else { return .empty }
        var asciiOnly = true
        var componentStart = 0
        var index = 0
        while index <= count {
            let byte: UInt8 = index < count ? name[index] : UInt8(ascii: "/")
            switch byte {
            case 0:
                return .nulByte
            case UInt8(ascii: "\\"):
                return .backslash
            case UInt8(ascii: "/"):
                let length = index - componentStart
                if length == 0 {
                    return componentStart == 0 ? .absolute : .emptyComponent
                }
                if name[componentStart] == UInt8(ascii: ".") {
                    if length == 1 { return .currentDirectoryComponent }
                    if length == 2 && name[componentStart + 1] == UInt8(ascii: ".") { return .parentTraversal }
                }
                if componentStart == 0 && length == 2 && name[1] == UInt8(ascii: ":") && isLetter(name[0]) {
                    return .absolute
                }
                componentStart = index + 1
            default:
                if byte >= 0x80 { asciiOnly = false }
            }
            index += 1
        }
        if !asciiOnly && !isValidUTF8(name) { return .invalidUTF8 }
        return nil
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    /// Whether `bytes` are well-formed UTF-8 (no overlong forms, no
    /// surrogates, nothing above U+10FFFF).
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// The name as a `String`, for an error message: invalid UTF-8 is
    /// replaced by U+FFFD.
    static func display(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

/// Why and where a document is not acceptable JSON.
///
/// Match ``reason`` to tell failures apart
/// (`catch let e where e.reason == .tooDeep`); ``description`` is one line a
/// person can act on: `line 3, column 14: expected ',' or '}' after object
/// member, found '"'`.
///
/// Positions point at the first byte that is wrong (for ``Reason/unexpectedEnd``,
/// just past the last byte). ``line`` and ``column`` count from 1. A line
/// ends at LF, CR LF or a lone CR. The column counts Unicode scalars (code
/// points) from the start of the line — what most editors show — so `é` is
/// one column, and a tab is one column; ``offset`` counts bytes from the
/// start of the document.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Sendable, Hashable {
        /// The document ends inside a value, or is empty.
        case unexpectedEnd
        /// A byte that cannot start or continue what the grammar expects
        /// there (for a valid multi-byte character, its first byte).
        case unexpectedCharacter(UInt8)
        /// Bytes that are not well-formed UTF-8: a stray continuation byte,
        /// a truncated sequence, an overlong form, an encoded surrogate
        /// (U+D800–U+DFFF) or a value above U+10FFFF. Refused everywhere,
        /// comments included.
        case invalidUTF8
        /// The document starts with a UTF-8 byte order mark (EF BB BF).
        case byteOrderMark
        /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`,
        /// or `\u` without four hex digits.
        case invalidEscape
        /// A `\u` escape of a high surrogate not followed by a `\u` escape of
        /// a low one, or of a low surrogate on its own.
        case loneSurrogate
        /// A raw byte 0x00–0x1F inside a string (it must be escaped).
        case controlCharacterInString
        /// An object repeats this key.
        case duplicateKey(String)
        /// Arrays and objects nest deeper than ``JSONValue/ParseOptions/maximumDepth``.
        case tooDeep
        /// The document is longer than ``JSONValue/ParseOptions/maximumLength``.
        case tooLarge
        /// A number that breaks the grammar: a leading zero, a sign or `.`
        /// or exponent marker without digits after it.
        case invalidNumber
        /// Something other than whitespace (or comments) after the document's value.
        case trailingData
        /// The element handler of ``JSONValue/parse(_:options:elementsOf:_:)``
        /// returned `false`.
        case stopped
    }

    /// What is wrong.
    public let reason: Reason
    /// The line, from 1.
    public let line: Int
    /// The column in Unicode scalars, from 1.
    public let column: Int
    /// The byte offset from the start of the document, from 0.
    public let offset: Int
    /// What is wrong, without the position: `expected ',' or '}' after
    /// object member, found '"'`.
    public let message: String

    init(_ reason: Reason, line: Int, column: Int, offset: Int, message: String) {
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset
        self.message = message
    }

    /// `line L, column C: ` and what is wrong.
    public var description: String {
        "line \(line), column \(column): \(message)"
    }
}

extension JSONValue {
    /// What ``JSONValue/parse(_:options:)`` accepts beyond strict RFC 8259
    /// JSON, and how much.
    public struct ParseOptions: Sendable, Hashable {
        /// Accept `// line` and `/* block */` comments wherever whitespace
        /// may appear. A block comment ends at the first `*/` (they do not
        /// nest). Comment text must be valid UTF-8.
        public var allowsComments: Bool
        /// Accept one comma after the last element of an array or the last
        /// member of an object (`[1, 2,]`, `{"a": 1,}`). An empty container
        /// with a comma (`[,]`) and two commas in a row (`[1,,]`) are still
        /// refused.
        public var allowsTrailingCommas: Bool
        /// How deeply arrays and objects may nest: the document `[[1]]` has
        /// depth 2. One more is ``JSONError/Reason/tooDeep``. The parser
        /// itself does not recurse, but comparing, encoding and freeing a
        /// value do, so keep this in the hundreds.
        public var maximumDepth: Int
        /// The longest document accepted, in bytes; a longer one is
        /// ``JSONError/Reason/tooLarge`` before any of it is parsed.
        public var maximumLength: Int

        /// The limits that apply unless a caller changes them: 256 levels of
        /// nesting, 16 MiB.
        public init(allowsComments: Bool = false, allowsTrailingCommas: Bool = false,
                    maximumDepth: Int = 256, maximumLength: Int = 16 << 20) {
            self.allowsComments = allowsComments
            self.allowsTrailingCommas = allowsTrailingCommas
            self.maximumDepth = maximumDepth
            self.maximumLength = maximumLength
        }

        /// RFC 8259 JSON and nothing else, with the default limits.
        public static let strict = ParseOptions()

        /// JSON with comments and trailing commas (what editors call JSONC),
        /// the syntax of Apple's asset-pack manifests, with the default limits.
        /// Nothing else from JSON5: keys are quoted, strings use double
        /// quotes, numbers are decimal and finite.
        public static let jsonWithComments = ParseOptions(allowsComments: true, allowsTrailingCommas: true)
    }

    /// Parses one JSON document from UTF-8 bytes.
    ///
    /// Every input either parses or throws; none traps, and the parser's
    /// own stack stays flat however deeply the document nests. Beyond the
    /// grammar it refuses invalid UTF-8 anywhere (overlong forms, encoded
    /// surrogates, comments included), a leading byte order mark, `\u`
    /// escapes of lone surrogates, raw control characters in strings,
    /// repeated keys in an object, and anything after the value but
    /// whitespace (and comments, when allowed).
    ///
    /// - Parameters:
    ///   - bytes: The document. A contiguous collection (`[UInt8]`,
    ///     `ArraySlice`, `Data`, `String.UTF8View`) is read in place; any
    ///     other is copied first.
    ///   - options: Extensions to accept and limits; ``ParseOptions/strict``
    ///     unless given.
    /// - Returns: The document's value.
    /// - Throws: ``JSONError`` naming what is wrong and where.
    public static func parse(_ bytes: some Collection<UInt8>, options: ParseOptions = .strict) throws(JSONError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONError) in try parse(UnsafeRawBufferPointer(buffer), options: options) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes), options: options)
    }

    /// Parses one JSON document from UTF-8 bytes in memory, with the same
    /// rules as the collection overload.
    ///
    /// - Parameters:
    ///   - bytes: The document, read only during the call.
    ///   - options: Extensions to accept and limits; ``ParseOptions/strict``
    ///     unless given.
    /// - Returns: The document's value.
    /// - Throws: ``JSONError`` naming what is wrong and where.
    public static func parse(_ bytes: UnsafeRawBufferPointer, options: ParseOptions = .strict) throws(JSONError) -> JSONValue {
        var parser = Parser(bytes: bytes, options: options)
        return try parser.parseDocument()
    }

    /// Parses a document whose top-level object holds one long array,
    /// handing that array's elements to `handle` one by one as each is
    /// complete instead of keeping them: the array (the top-level member
    /// `key`) is empty in the value returned. Memory then holds one
    /// element's value at a time, not the whole array's — a 60 MB piece
    /// map's members are a few hundred thousand objects, each several
    /// times its bytes as values.
    ///
    /// The document must still be valid JSON throughout, with the same
    /// rules and limits as ``parse(_:options:)``; an error after some
    /// elements were handled still throws. `handle` returns `false` to stop:
    /// the parse then throws ``JSONError/Reason/stopped``.
    ///
    /// - Parameters:
    ///   - bytes: The document, read only during the call.
    ///   - options: Extensions to accept and limits.
    ///   - key: The top-level member whose array is streamed. Elsewhere
    ///     (nested, or when the member is not an array) nothing is streamed.
    ///   - handle: Called with each element of that array, in order.
    /// - Returns: The document's value, the streamed array empty.
    /// - Throws: ``JSONError``.
    public static func parse(_ bytes: UnsafeRawBufferPointer, options: ParseOptions = .strict, elementsOf key: String,
                             _ handle: (JSONValue) -> Bool) throws(JSONError) -> JSONValue {
        try withoutActuallyEscaping(handle) { (handle) throws(JSONError) -> JSONValue in
            var parser = Parser(bytes: bytes, options: options)
            parser.streamed = (key, handle)
            return try parser.parseDocument()
        }
    }
}

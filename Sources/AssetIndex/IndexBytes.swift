/// A value that lends its bytes, for a moment, as a key or a value: a
/// `String` (its UTF-8), `[UInt8]`, `ArraySlice<UInt8>`,
/// `UnsafeRawBufferPointer`, or a ``ByteWriter``'s output.
///
/// Lending never copies for native strings and arrays, so lookups through
/// these conveniences do not allocate.
public protocol IndexBytes {
    /// Calls `body` with the bytes, valid only during the call.
    func withIndexBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
}

extension String: IndexBytes {
    /// Lends the string's UTF-8 code units, without a terminating NUL.
    @inlinable
    public func withIndexBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var utf8 = self
        return try utf8.withUTF8 { bytes in
            Result { () throws(E) in try body(UnsafeRawBufferPointer(bytes)) }
        }.get()
    }
}

extension Array: IndexBytes where Element == UInt8 {
    /// Lends the array's storage.
    @inlinable
    public func withIndexBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytes { bytes in Result { () throws(E) in try body(bytes) } }.get()
    }
}

extension ArraySlice: IndexBytes where Element == UInt8 {
    /// Lends the slice's storage.
    @inlinable
    public func withIndexBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytes { bytes in Result { () throws(E) in try body(bytes) } }.get()
    }
}

extension UnsafeRawBufferPointer: IndexBytes {
    /// Lends the buffer itself.
    @inlinable
    public func withIndexBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(self)
    }
}

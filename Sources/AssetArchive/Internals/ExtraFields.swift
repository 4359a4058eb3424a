/// Reading the extra-field block of a local header or central record: a
/// chain of (2-byte ID, 2-byte length, data) fields.
enum ExtraFields {
    /// The data of the field `id` in the block `block` of `bytes`, `nil`
    /// when there is none. Throws when a field runs past the block or `id`
    /// appears twice. Fewer than four trailing bytes (padding some tools
    /// leave) are ignored.
    static func find(
        _ id: UInt16, in bytes: UnsafeRawBufferPointer, block: Range<Int>
    ) throws(ExtraFieldError) -> Range<Int>? {
        var found: Range<Int>?
        var position = block.lowerBound
        while block.upperBound - position >= 4 {
            let fieldID = bytes.u16(position)
            let length = Int(bytes.u16(position + 2))
            let dataStart = position + 4
            guard block.upperBound - dataStart >= length else { throw ExtraFieldError() }
            if fieldID == id {
                guard found == nil else { throw ExtraFieldError() }
                found = dataStart ..< dataStart + length
            }
            position = dataStart + length
        }
        return found
    }

    /// Reads, in APPNOTE order, the ZIP64 values that `values` defers to the
    /// ZIP64 extra field (those whose classic field is all ones) from the
    /// field's data `data`. Throws when the data is too short.
    static func resolveZip64(
        _ values: inout Zip64Values, in bytes: UnsafeRawBufferPointer, data: Range<Int>?
    ) throws(ExtraFieldError) {
        guard values.needsExtraField else { return }
        guard let data else { throw ExtraFieldError() }
        var position = data.lowerBound
        func next(_ size: Int) throws(ExtraFieldError) -> Int {
            guard data.upperBound - position >= size else { throw ExtraFieldError() }
            defer { position += size }
            return position
        }
        if values.uncompressedSize == UInt64(ZipFormat.max32) { values.uncompressedSize = bytes.u64(try next(8)) }
        if values.compressedSize == UInt64(ZipFormat.max32) { values.compressedSize = bytes.u64(try next(8)) }
        if values.localHeaderOffset == UInt64(ZipFormat.max32) { values.localHeaderOffset = bytes.u64(try next(8)) }
        if values.diskStart == UInt32(ZipFormat.max16) { values.diskStart = bytes.u32(try next(4)) }
    }
}

/// A malformed extra-field block, or a ZIP64 value missing from it.
struct ExtraFieldError: Error {}

/// The sizes and offset of a record, widened to 64 bits; a classic field
/// that is all ones is replaced by its ZIP64 value.
struct Zip64Values {
    var uncompressedSize: UInt64
    var compressedSize: UInt64
    /// Unused (all zero) for local headers, which have no offset field.
    var localHeaderOffset: UInt64
    var diskStart: UInt32

    /// Whether any field still holds its all-ones placeholder.
    var needsExtraField: Bool {
        uncompressedSize == UInt64(ZipFormat.max32) || compressedSize == UInt64(ZipFormat.max32)
            || localHeaderOffset == UInt64(ZipFormat.max32) || diskStart == UInt32(ZipFormat.max16)
    }
}

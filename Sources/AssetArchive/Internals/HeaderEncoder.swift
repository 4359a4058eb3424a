/// A member as the writer laid it out: what its central record says.
struct WrittenMember {
    var name: [UInt8]
    var method: CompressionMethod
    var crc32: UInt32
    var compressedSize: UInt64
    var uncompressedSize: UInt64
    var localHeaderOffset: UInt64
    /// Whether the local header carries a ZIP64 field with both sizes.
    var zip64Local: Bool
}

/// The bytes of the headers the writer emits, with the fixed values that
/// make its output deterministic: DOS time 1980-01-01 00:00, "version made
/// by" Unix / 6.3, mode 0o100644, no timestamps or other extra fields.
enum HeaderEncoder {
    static let versionMadeBy: UInt16 = 3 << 8 | 63
    static let dosTime: UInt16 = 0
    static let dosDate: UInt16 = 1 << 5 | 1
    static let externalAttributes: UInt32 = 0o100644 << 16
    private static let max32 = UInt64(ZipFormat.max32)

    static func flags(for member: WrittenMember) -> UInt16 {
        var flags: UInt16 = member.name.contains(where: { $0 >= 0x80 }) ? ZipFormat.flagUTF8 : 0
        if member.method == .deflated { flags |= ZipFormat.flagMaximumCompression }
        return flags
    }

    static func versionNeeded(for member: WrittenMember) -> UInt16 {
        member.zip64Local || !centralZip64Fields(member).isEmpty ? 45 : 20
    }

    /// The local header's length with the extra fields it will carry.
    /// A `padding` count, for stored members, adds a zipalign field with
    /// that many zero bytes.
    static func localHeaderLength(nameCount: Int, zip64: Bool, padding: Int?) -> Int {
        ZipFormat.localHeaderSize + nameCount + (zip64 ? 20 : 0) + (padding.map { 6 + $0 } ?? 0)
    }

    /// How many padding bytes put the data of a stored member whose local
    /// header starts at `offset` on a multiple of `alignment`.
    static func padding(offset: UInt64, nameCount: Int, zip64: Bool, alignment: Int) -> Int {
        let unpadded = offset + UInt64(localHeaderLength(nameCount: nameCount, zip64: zip64, padding: 0))
        let misalignment = Int(unpadded % UInt64(alignment))
        return misalignment == 0 ? 0 : alignment - misalignment
    }

    /// The local header of `member`; `alignment` and `padding` describe its
    /// zipalign field (stored members only).
    static func localHeader(_ member: WrittenMember, alignment: Int?, padding: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        let extraCount = (member.zip64Local ? 20 : 0) + (alignment == nil ? 0 : 6 + padding)
        bytes.reserveCapacity(ZipFormat.localHeaderSize + member.name.count + extraCount)
        bytes.append32(ZipFormat.localHeaderSignature)
        bytes.append16(versionNeeded(for: member))
        bytes.append16(flags(for: member))
        bytes.append16(member.method.rawValue)
        bytes.append16(dosTime)
        bytes.append16(dosDate)
        bytes.append32(member.crc32)
        bytes.append32(member.zip64Local ? ZipFormat.max32 : UInt32(member.compressedSize))
        bytes.append32(member.zip64Local ? ZipFormat.max32 : UInt32(member.uncompressedSize))
        bytes.append16(UInt16(member.name.count))
        bytes.append16(UInt16(extraCount))
        bytes.append(contentsOf: member.name)
        if member.zip64Local {
            bytes.append16(ZipFormat.zip64ExtraID)
            bytes.append16(16)
            bytes.append64(member.uncompressedSize)
            bytes.append64(member.compressedSize)
        }
        if let alignment {
            bytes.append16(ZipFormat.alignmentExtraID)
            bytes.append16(UInt16(2 + padding))
            bytes.append16(UInt16(alignment))
            bytes.append(contentsOf: repeatElement(0, count: padding))
        }
        return bytes
    }

    /// The values of `member` that need the central ZIP64 field, in
    /// APPNOTE order: uncompressed size, compressed size, local header offset.
    static func centralZip64Fields(_ member: WrittenMember) -> [UInt64] {
        [member.uncompressedSize, member.compressedSize, member.localHeaderOffset].filter { $0 >= max32 }
    }

    /// Appends the central-directory record of `member` to `bytes`.
    static func appendCentralRecord(_ member: WrittenMember, to bytes: inout [UInt8]) {
        let wide = centralZip64Fields(member)
        bytes.append32(ZipFormat.centralHeaderSignature)
        bytes.append16(versionMadeBy)
        bytes.append16(versionNeeded(for: member))
        bytes.append16(flags(for: member))
        bytes.append16(member.method.rawValue)
        bytes.append16(dosTime)
        bytes.append16(dosDate)
        bytes.append32(member.crc32)
        bytes.append32(UInt32(min(member.compressedSize, max32)))
        bytes.append32(UInt32(min(member.uncompressedSize, max32)))
        bytes.append16(UInt16(member.name.count))
        bytes.append16(wide.isEmpty ? 0 : UInt16(4 + 8 * wide.count))
        bytes.append16(0)  // comment length
        bytes.append16(0)  // disk number start
        bytes.append16(0)  // internal attributes
        bytes.append32(externalAttributes)
        bytes.append32(UInt32(min(member.localHeaderOffset, max32)))
        bytes.append(contentsOf: member.name)
        if !wide.isEmpty {
            bytes.append16(ZipFormat.zip64ExtraID)
            bytes.append16(UInt16(8 * wide.count))
            for value in wide { bytes.append64(value) }
        }
    }

    /// The end records for `count` members whose central directory of
    /// `size` bytes starts at `offset`: ZIP64 ones first when a count, size
    /// or offset does not fit the classic record.
    static func endRecords(count: UInt64, offset: UInt64, size: UInt64, comment: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        let zip64 = count >= UInt64(ZipFormat.max16) || size >= max32 || offset >= max32
        if zip64 {
            let recordOffset = offset + size
            bytes.append32(ZipFormat.zip64EndRecordSignature)
            bytes.append64(UInt64(ZipFormat.zip64EndRecordSize - 12))
            bytes.append16(versionMadeBy)
            bytes.append16(45)
            bytes.append32(0)  // this disk
            bytes.append32(0)  // disk with the central directory
            bytes.append64(count)
            bytes.append64(count)
            bytes.append64(size)
            bytes.append64(offset)
            bytes.append32(ZipFormat.zip64LocatorSignature)
            bytes.append32(0)
            bytes.append64(recordOffset)
            bytes.append32(1)  // total disks
        }
        let count16 = UInt16(min(count, UInt64(ZipFormat.max16)))
        bytes.append32(ZipFormat.endRecordSignature)
        bytes.append16(0)
        bytes.append16(0)
        bytes.append16(count16)
        bytes.append16(count16)
        bytes.append32(UInt32(min(size, max32)))
        bytes.append32(UInt32(min(offset, max32)))
        bytes.append16(UInt16(comment.count))
        bytes.append(contentsOf: comment)
        return bytes
    }
}

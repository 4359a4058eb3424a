/// What a central-directory record declares about a member, widened and
/// resolved, for checking its local header.
struct DeclaredMember {
    var path: String
    var flags: UInt16
    var method: CompressionMethod
    var crc32: UInt32
    var compressedSize: UInt64
    var uncompressedSize: UInt64
    var localHeaderOffset: UInt64
    /// Where the name bytes are, in the central record.
    var nameStart: Int
    var nameCount: Int
}

/// Where a member's pieces lie, once its local header has been checked.
struct MemberLayout {
    /// The offset of the data.
    var dataOffset: Int
    /// The offset just past the member's last byte (data or descriptor).
    var end: Int
    /// Whether the local header took its sizes from a ZIP64 extra field.
    var usedZip64: Bool
}

/// Checks one member's local header, and its data descriptor when it has
/// one, against what the central directory declares.
struct LocalHeaderCheck {
    let bytes: UnsafeRawBufferPointer
    let name: String
    /// Where the central directory starts: members must end before it.
    let directoryStart: Int

    /// Checks `member` and returns where its data and its end lie.
    func check(_ member: DeclaredMember) throws(ArchiveError) -> MemberLayout {
        let header = try span(from: member.localHeaderOffset, length: UInt64(ZipFormat.localHeaderSize),
                              member, .localHeader).lowerBound
        guard bytes.u32(header) == ZipFormat.localHeaderSignature else { throw mismatch(member, .signature) }
        let flags = bytes.u16(header + 6)
        guard (flags ^ member.flags) & ZipFormat.flagsThatMustAgree == 0 else { throw mismatch(member, .flags) }
        guard bytes.u16(header + 8) == member.method.rawValue else { throw mismatch(member, .method) }
        let nameCount = Int(bytes.u16(header + 26))
        let extraCount = Int(bytes.u16(header + 28))
        let variable = try span(from: UInt64(header + ZipFormat.localHeaderSize),
                                length: UInt64(nameCount + extraCount), member, .localHeader)
        guard nameCount == member.nameCount,
              bytes.bytesEqual(variable.lowerBound, bytes, member.nameStart, count: nameCount)
        else { throw mismatch(member, .name) }

        let extra = variable.lowerBound + nameCount ..< variable.upperBound
        var sizes = Zip64Values(
            uncompressedSize: UInt64(bytes.u32(header + 22)), compressedSize: UInt64(bytes.u32(header + 18)),
            localHeaderOffset: 0, diskStart: 0)
        let zip64: Range<Int>?
        do { zip64 = try ExtraFields.find(ZipFormat.zip64ExtraID, in: bytes, block: extra) } catch {
            throw mismatch(member, .compressedSize)
        }
        let usedZip64 = sizes.needsExtraField
        try resolveLocalSizes(&sizes, zip64: zip64, member)

        let crc = bytes.u32(header + 14)
        let streamed = member.flags & ZipFormat.flagDataDescriptor != 0
        // With a data descriptor the local fields may be zero; if they are
        // filled in they must still be right.
        func agrees<T: Equatable & ExpressibleByIntegerLiteral>(_ local: T, _ central: T) -> Bool {
            local == central || (streamed && local == 0)
        }
        guard agrees(crc, member.crc32) else { throw mismatch(member, .crc32) }
        guard agrees(sizes.compressedSize, member.compressedSize) else { throw mismatch(member, .compressedSize) }
        guard agrees(sizes.uncompressedSize, member.uncompressedSize) else { throw mismatch(member, .uncompressedSize) }

        let data = try span(from: UInt64(variable.upperBound), length: member.compressedSize, member, .data)
        guard streamed else {
            return MemberLayout(dataOffset: data.lowerBound, end: data.upperBound, usedZip64: usedZip64)
        }
        let end = try checkDescriptor(at: data.upperBound, member, preferWide: zip64 != nil)
        return MemberLayout(dataOffset: data.lowerBound, end: end, usedZip64: usedZip64)
    }

    /// Replaces all-ones local sizes by their ZIP64 values. The local ZIP64
    /// field holds both sizes (APPNOTE 4.5.3); when it is that long they are
    /// read by position, otherwise in APPNOTE order.
    private func resolveLocalSizes(
        _ sizes: inout Zip64Values, zip64: Range<Int>?, _ member: DeclaredMember
    ) throws(ArchiveError) {
        guard sizes.needsExtraField else { return }
        if let zip64, zip64.count >= 16 {
            if sizes.uncompressedSize == UInt64(ZipFormat.max32) { sizes.uncompressedSize = bytes.u64(zip64.lowerBound) }
            if sizes.compressedSize == UInt64(ZipFormat.max32) { sizes.compressedSize = bytes.u64(zip64.lowerBound + 8) }
            return
        }
        let missing: ArchiveError.HeaderField =
            sizes.uncompressedSize == UInt64(ZipFormat.max32) ? .uncompressedSize : .compressedSize
        do { try ExtraFields.resolveZip64(&sizes, in: bytes, data: zip64) } catch { throw mismatch(member, missing) }
    }

    /// Finds the data descriptor after the data at `offset` and checks it
    /// against the central record. It may start with its signature or not,
    /// and carry 32- or 64-bit sizes; the forms are tried in the order the
    /// local header suggests, and the first that matches is taken. Returns
    /// the offset just past it.
    private func checkDescriptor(at offset: Int, _ member: DeclaredMember, preferWide: Bool) throws(ArchiveError) -> Int {
        let needsWide = member.compressedSize > UInt64(ZipFormat.max32) || member.uncompressedSize > UInt64(ZipFormat.max32)
        let forms: [(signed: Bool, wide: Bool)] = preferWide || needsWide
            ? [(true, true), (false, true), (true, false), (false, false)]
            : [(true, false), (false, false), (true, true), (false, true)]
        var firstMismatch: ArchiveError.HeaderField?
        var anyFits = false
        for form in forms where form.wide || !needsWide {
            let length = (form.signed ? 4 : 0) + (form.wide ? 20 : 12)
            guard bytes.count - offset >= length else { continue }
            anyFits = true
            var position = offset
            if form.signed {
                guard bytes.u32(position) == ZipFormat.dataDescriptorSignature else { continue }
                position += 4
            }
            let crc = bytes.u32(position)
            let compressed = form.wide ? bytes.u64(position + 4) : UInt64(bytes.u32(position + 4))
            let uncompressed = form.wide ? bytes.u64(position + 12) : UInt64(bytes.u32(position + 8))
            let field: ArchiveError.HeaderField? =
                crc != member.crc32 ? .crc32
                : compressed != member.compressedSize ? .compressedSize
                : uncompressed != member.uncompressedSize ? .uncompressedSize : nil
            guard let field else {
                return try span(from: UInt64(offset), length: UInt64(length), member, .dataDescriptor).upperBound
            }
            if firstMismatch == nil { firstMismatch = field }
        }
        guard anyFits else { throw .outOfBounds(archive: name, path: member.path, part: .dataDescriptor) }
        throw mismatch(member, firstMismatch ?? .crc32)
    }

    /// The range `start ..< start + length`, checked to end inside the file
    /// (else `outOfBounds`) and before the central directory (else `overlap`).
    private func span(
        from start: UInt64, length: UInt64, _ member: DeclaredMember, _ part: ArchiveError.MemberPart
    ) throws(ArchiveError) -> Range<Int> {
        let (end, overflow) = start.addingReportingOverflow(length)
        guard !overflow, end <= UInt64(bytes.count) else {
            throw .outOfBounds(archive: name, path: member.path, part: part)
        }
        guard end <= UInt64(directoryStart) else {
            throw .overlap(archive: name, path: member.path, with: .centralDirectory)
        }
        return Int(start) ..< Int(end)
    }

    private func mismatch(_ member: DeclaredMember, _ field: ArchiveError.HeaderField) -> ArchiveError {
        .headerMismatch(archive: name, path: member.path, field: field)
    }
}

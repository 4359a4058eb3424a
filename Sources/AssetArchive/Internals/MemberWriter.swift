import AssetSystem

/// Writes members one after another into an ``ArchiveOutput``: local header
/// and data, stored (aligned) or deflated, and returns what the central
/// directory must say of each.
struct MemberWriter: ~Copyable {
    private var deflater: Deflater
    private let archive: String
    private let pageSize = MappedRegion.pageSize
    private static let max32 = UInt64(ZipFormat.max32)

    /// File sources up to this size are read into memory whole; larger ones
    /// are streamed in chunks.
    static let inMemoryLimit: UInt64 = 1 << 20

    init(archive: String) throws(ArchiveError) {
        do { deflater = try Deflater(level: ArchiveWriter.deflateLevel) } catch {
            throw .io(archive: archive, error: Errno.noMemory.with(operation: "deflateInit2", path: archive))
        }
        self.archive = archive
    }

    /// Writes the member named `name` (its path's UTF-8 bytes) with `plan`,
    /// from bytes in memory.
    mutating func write(
        name: [UInt8], bytes data: UnsafeRawBufferPointer, plan: ArchiveWriter.Plan, to output: inout ArchiveOutput
    ) throws(ArchiveError) -> WrittenMember {
        let size = UInt64(data.count)
        let crc = CRC32.checksum(data)
        if plan != .stored {
            var compressed: [UInt8] = []
            deflater.reset()
            try deflater.compress(data, finish: true) { piece throws(ArchiveError) in compressed.append(contentsOf: piece) }
            if plan == .deflated || ArchiveWriter.deflatePays(compressed: UInt64(compressed.count), original: size) {
                let member = WrittenMember(
                    name: name, method: .deflated, crc32: crc, compressedSize: UInt64(compressed.count),
                    uncompressedSize: size, localHeaderOffset: output.position, zip64Local: deflatedNeedsZip64(size))
                try output.append(HeaderEncoder.localHeader(member, alignment: nil, padding: 0))
                try output.append(compressed)
                return member
            }
        }
        let member = storedMember(name: name, size: size, crc: crc, at: output.position)
        let alignment = alignment(for: size)
        let padding = HeaderEncoder.padding(
            offset: member.localHeaderOffset, nameCount: name.count, zip64: member.zip64Local, alignment: alignment)
        try output.append(HeaderEncoder.localHeader(member, alignment: alignment, padding: padding))
        try output.append(data)
        return member
    }

    /// Writes the member named `name` with `plan` from `file`, reading it in
    /// chunks: the data first, then the header in the space left for it.
    /// Counts the chunks on `meter` as they are read, once: a member that is
    /// stored after deflate did not pay is read twice.
    mutating func write(
        name: [UInt8], file: borrowing SourceFile, plan: ArchiveWriter.Plan, to output: inout ArchiveOutput,
        meter: inout ProgressMeter?
    ) throws(ArchiveError) -> WrittenMember {
        try output.flush()
        let offset = output.position
        let size = file.size
        var deflatedCRC: UInt32?
        if plan != .stored {
            let zip64 = deflatedNeedsZip64(size)
            let dataStart = offset + UInt64(HeaderEncoder.localHeaderLength(nameCount: name.count, zip64: zip64, padding: nil))
            var written: UInt64 = 0
            var crc: UInt32 = 0
            deflater.reset()
            func sink(_ piece: UnsafeRawBufferPointer) throws(ArchiveError) {
                try output.write(piece, at: dataStart + written)
                written += UInt64(piece.count)
            }
            try file.forEachChunk { chunk throws(ArchiveError) in
                crc = CRC32.checksum(chunk, continuing: crc)
                try deflater.compress(chunk, finish: false, sink: sink)
                meter?.advance(by: UInt64(chunk.count))
            }
            try deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), finish: true, sink: sink)
            if plan == .deflated || ArchiveWriter.deflatePays(compressed: written, original: size) {
                let member = WrittenMember(
                    name: name, method: .deflated, crc32: crc, compressedSize: written,
                    uncompressedSize: size, localHeaderOffset: offset, zip64Local: zip64)
                try HeaderEncoder.localHeader(member, alignment: nil, padding: 0).withBytes { header throws(ArchiveError) in
                    try output.write(header, at: offset)
                }
                output.skip(to: dataStart + written)
                return member
            }
            deflatedCRC = crc
        }
        var member = storedMember(name: name, size: size, crc: 0, at: offset)
        let alignment = alignment(for: size)
        let padding = HeaderEncoder.padding(offset: offset, nameCount: name.count, zip64: member.zip64Local, alignment: alignment)
        let dataStart = offset + UInt64(HeaderEncoder.localHeaderLength(
            nameCount: name.count, zip64: member.zip64Local, padding: padding))
        var copied: UInt64 = 0
        let firstRead = plan == .stored
        try file.forEachChunk { chunk throws(ArchiveError) in
            member.crc32 = CRC32.checksum(chunk, continuing: member.crc32)
            try output.write(chunk, at: dataStart + copied)
            copied += UInt64(chunk.count)
            if firstRead { meter?.advance(by: UInt64(chunk.count)) }
        }
        if let deflatedCRC, deflatedCRC != member.crc32 {
            throw .unreadableSource(archive: archive, path: String(decoding: name, as: UTF8.self),
                                    source: file.path, problem: .changedWhileReading)
        }
        try HeaderEncoder.localHeader(member, alignment: alignment, padding: padding).withBytes { header throws(ArchiveError) in
            try output.write(header, at: offset)
        }
        output.skip(to: dataStart + size)
        return member
    }

    private func storedMember(name: [UInt8], size: UInt64, crc: UInt32, at offset: UInt64) -> WrittenMember {
        WrittenMember(
            name: name, method: .stored, crc32: crc, compressedSize: size, uncompressedSize: size,
            localHeaderOffset: offset, zip64Local: size >= Self.max32)
    }

    /// Stored data is aligned to 16 bytes, and to the page for large members.
    private func alignment(for size: UInt64) -> Int {
        size >= ArchiveWriter.pageAlignmentThreshold ? max(pageSize, ArchiveWriter.storedAlignment) : ArchiveWriter.storedAlignment
    }

    /// Whether a deflated member of `size` bytes gets a local ZIP64 field:
    /// when its size, or the most deflate could turn it into, does not fit
    /// 32 bits. Decided before compressing, so the header's length is known.
    private func deflatedNeedsZip64(_ size: UInt64) -> Bool {
        size >= Self.max32 || deflater.bound(size) >= Self.max32
    }
}

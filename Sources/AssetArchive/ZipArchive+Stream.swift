extension ZipArchive {
    /// Hands a member's bytes to `deliver` in order, in pieces of at most
    /// `buffer.count` bytes, never holding more than that: a stored member's
    /// as slices of `bytes` (no copy), a deflated one's inflated into
    /// `buffer` by a zlib stream.
    ///
    /// The CRC-32 (a stored member's only when `checkingStored`) is checked
    /// before the last piece is delivered, so a member that fits one piece is
    /// delivered whole and checked or not at all. Of a longer member, the
    /// pieces delivered before an error are not to be trusted (as with
    /// `unzip -p`): the error is the verdict on all of them.
    ///
    /// - Parameters:
    ///   - entry: a member of the archive parsed from `bytes`.
    ///   - bytes: the whole archive file, a file mapping that `readBehind`
    ///     follows: the pages read are dropped as the stream goes by.
    ///   - buffer: at least one byte; what a deflated member inflates into.
    ///   - deliver: takes each piece; returns `false` to stop (the consumer
    ///     went away).
    /// - Returns: `false` when `deliver` stopped the stream.
    /// - Throws: as ``verify(_:in:archive:)``; nothing is delivered after an error.
    public static func stream(
        _ entry: ArchiveEntry, in bytes: UnsafeRawBufferPointer, archive: String,
        through buffer: UnsafeMutableRawBufferPointer, checkingStored: Bool = true, readBehind: inout ReadBehind,
        deliver: (UnsafeRawBufferPointer) -> Bool
    ) throws(ArchiveError) -> Bool {
        precondition(buffer.count > 0, "stream(_:in:archive:through:) needs a buffer")
        let data = try memberData(entry, in: bytes, archive: archive)
        let start = Int(entry.dataOffset)
        var crc: UInt32 = 0
        switch entry.method {
        case .stored:
            var done = 0
            while done < data.count {
                let piece = data.slice(done, min(buffer.count, data.count - done))
                done += piece.count
                if checkingStored {
                    crc = CRC32.checksum(piece, continuing: crc)
                    if done == data.count { try checkCRC(crc, entry, archive: archive) }
                }
                guard deliver(piece) else { return false }
                readBehind.reached(start + done)
            }
            if data.isEmpty && checkingStored { try checkCRC(crc, entry, archive: archive) }
            return true
        case .deflated:
            var filled = 0
            var produced: UInt64 = 0
            let expected = entry.uncompressedSize
            let going = try inflate(
                entry, data, archive: archive,
                window: { _, remaining in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[filled ..< filled + Int(min(remaining, UInt64(buffer.count - filled)))])
                },
                consume: { piece in
                    crc = CRC32.checksum(piece, continuing: crc)
                    filled += piece.count
                    produced += UInt64(piece.count)
                    // The last piece waits for the CRC-32.
                    guard filled == buffer.count, produced < expected else { return true }
                    filled = 0
                    return deliver(UnsafeRawBufferPointer(buffer))
                },
                followingInput: true, inputRead: { readBehind.reached(start + $0) })
            guard going else { return false }
            try checkCRC(crc, entry, archive: archive)
            return filled == 0 || deliver(UnsafeRawBufferPointer(rebasing: buffer[..<filled]))
        }
    }
}

extension ZipArchive {
    /// Checks one member's data: a stored member's CRC-32, or that a
    /// deflated member inflates to exactly its declared size and CRC-32.
    /// Inflated bytes go through a small scratch buffer and are not kept.
    ///
    /// - Parameters:
    ///   - entry: a member of the archive parsed from `bytes`.
    ///   - bytes: the whole archive file.
    ///   - archive: how errors name the archive.
    /// - Throws: ``ArchiveError/crcMismatch(archive:path:expected:actual:)``,
    ///   ``ArchiveError/sizeMismatch(archive:path:declared:actual:)``,
    ///   ``ArchiveError/corruptData(archive:path:detail:)``, or
    ///   ``ArchiveError/outOfBounds(archive:path:part:)`` when `bytes` is not
    ///   the archive `entry` came from.
    public static func verify(_ entry: ArchiveEntry, in bytes: UnsafeRawBufferPointer, archive: String) throws(ArchiveError) {
        try verify(entry, in: bytes, archive: archive, following: false, reached: { _ in })
    }

    /// ``verify(_:in:archive:)`` of a member in a file mapping, dropping the
    /// pages the check is done with as it goes (`readBehind` follows
    /// `bytes`), so that a member of any size keeps a window of it resident.
    public static func verify(
        _ entry: ArchiveEntry, in bytes: UnsafeRawBufferPointer, archive: String, readBehind: inout ReadBehind
    ) throws(ArchiveError) {
        try verify(entry, in: bytes, archive: archive, following: true, reached: { readBehind.reached($0) })
    }

    private static func verify(
        _ entry: ArchiveEntry, in bytes: UnsafeRawBufferPointer, archive: String, following: Bool, reached: (Int) -> Void
    ) throws(ArchiveError) {
        let data = try memberData(entry, in: bytes, archive: archive)
        let start = Int(entry.dataOffset)
        switch entry.method {
        case .stored:
            guard following else {
                try checkCRC(CRC32.checksum(data), entry, archive: archive)
                return
            }
            var crc: UInt32 = 0
            var done = 0
            while done < data.count {
                // Pieces of 1 MiB, about 0.1 ms of CRC-32: each ends where a
                // background thread may give way.
                let piece = min(1 << 20, data.count - done)
                crc = CRC32.checksum(data.slice(done, piece), continuing: crc)
                done += piece
                reached(start + done)
            }
            try checkCRC(crc, entry, archive: archive)
        case .deflated:
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
            defer { scratch.deallocate() }
            var crc: UInt32 = 0
            _ = try inflate(entry, data, archive: archive,
                            window: { _, remaining in
                                UnsafeMutableRawBufferPointer(rebasing: scratch[..<Int(min(remaining, UInt64(scratch.count)))])
                            },
                            consume: { crc = CRC32.checksum($0, continuing: crc); return true },
                            followingInput: following, inputRead: { reached(start + $0) })
            try checkCRC(crc, entry, archive: archive)
        }
    }

    /// Puts a member's bytes into `destination`: copies a stored member,
    /// inflates a deflated one. Checks the size exactly and the CRC-32.
    ///
    /// Nothing is ever written past `destination`: inflation stops at the
    /// declared size and reports more data as an error.
    ///
    /// - Parameters:
    ///   - entry: a member of the archive parsed from `bytes`.
    ///   - bytes: the whole archive file.
    ///   - destination: exactly `entry.uncompressedSize` bytes (a
    ///     precondition). On error its contents are unspecified.
    ///   - archive: how errors name the archive.
    /// - Throws: as ``verify(_:in:archive:)``, and
    ///   ``ArchiveError/malformedEntry(archive:path:problem:)`` for an entry
    ///   (made by hand) whose sizes are impossible for its method.
    public static func extract(
        _ entry: ArchiveEntry, from bytes: UnsafeRawBufferPointer,
        into destination: UnsafeMutableRawBufferPointer, archive: String
    ) throws(ArchiveError) {
        precondition(UInt64(destination.count) == entry.uncompressedSize,
                     "extract(_:from:into:archive:) needs a destination of exactly uncompressedSize bytes")
        let data = try memberData(entry, in: bytes, archive: archive)
        switch entry.method {
        case .stored:
            if !data.isEmpty { destination.copyMemory(from: data) }
            try checkCRC(CRC32.checksum(UnsafeRawBufferPointer(destination)), entry, archive: archive)
        case .deflated:
            var crc: UInt32 = 0
            _ = try inflate(entry, data, archive: archive,
                            window: { produced, remaining in
                                let start = Int(produced)
                                return UnsafeMutableRawBufferPointer(rebasing: destination[start ..< start + Int(remaining)])
                            },
                            consume: { crc = CRC32.checksum($0, continuing: crc); return true })
            try checkCRC(crc, entry, archive: archive)
        }
    }

    /// A member's bytes in a new array. See ``extract(_:from:into:archive:)``.
    ///
    /// The array has the declared size, which the archive's structure bounds
    /// (a deflated member cannot declare more than about 1,032 times its
    /// compressed size); callers facing untrusted archives should still cap
    /// `entry.uncompressedSize` before calling.
    public static func extract(_ entry: ArchiveEntry, from bytes: UnsafeRawBufferPointer, archive: String) throws(ArchiveError) -> [UInt8] {
        _ = try memberData(entry, in: bytes, archive: archive)  // bounds the size before allocating
        var failure: ArchiveError?
        let result = [UInt8](unsafeUninitializedCapacity: Int(entry.uncompressedSize)) { buffer, count in
            do throws(ArchiveError) {
                try extract(entry, from: bytes, into: UnsafeMutableRawBufferPointer(buffer), archive: archive)
                count = buffer.count
            } catch {
                failure = error
                count = 0
            }
        }
        if let failure { throw failure }
        return result
    }

    /// The member's data bytes, checked to lie inside `bytes`, and its sizes
    /// checked to be possible (an entry may be made by hand).
    static func memberData(
        _ entry: ArchiveEntry, in bytes: UnsafeRawBufferPointer, archive: String
    ) throws(ArchiveError) -> UnsafeRawBufferPointer {
        if let problem = RecordValidation.sizeProblem(
            method: entry.method, compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize) {
            throw .malformedEntry(archive: archive, path: entry.path, problem: problem)
        }
        let (end, overflow) = entry.dataOffset.addingReportingOverflow(entry.compressedSize)
        guard !overflow, end <= UInt64(bytes.count) else {
            throw .outOfBounds(archive: archive, path: entry.path, part: .data)
        }
        return bytes.slice(Int(entry.dataOffset), Int(entry.compressedSize))
    }

    static func checkCRC(_ actual: UInt32, _ entry: ArchiveEntry, archive: String) throws(ArchiveError) {
        guard actual == entry.crc32 else {
            throw .crcMismatch(archive: archive, path: entry.path, expected: entry.crc32, actual: actual)
        }
    }

    /// Inflates `entry`'s `data`, as ``Inflater/inflate(_:expected:window:consume:followingInput:inputRead:)``
    /// does. Returns `false` when `consume` stopped it.
    static func inflate(
        _ entry: ArchiveEntry, _ data: UnsafeRawBufferPointer, archive: String,
        window: (UInt64, UInt64) -> UnsafeMutableRawBufferPointer,
        consume: (UnsafeRawBufferPointer) -> Bool,
        followingInput: Bool = false, inputRead: (Int) -> Void = { _ in }
    ) throws(ArchiveError) -> Bool {
        do {
            var inflater = try Inflater()
            try inflater.inflate(data, expected: entry.uncompressedSize, window: window, consume: consume,
                                 followingInput: followingInput, inputRead: inputRead)
            return true
        } catch {
            switch error {
            case .stopped:
                return false
            case .tooLong:
                throw .sizeMismatch(archive: archive, path: entry.path, declared: entry.uncompressedSize,
                                    actual: .moreThanDeclared)
            case .tooShort(let produced):
                throw .sizeMismatch(archive: archive, path: entry.path, declared: entry.uncompressedSize,
                                    actual: .fewer(produced))
            case .corrupt(let detail):
                throw .corruptData(archive: archive, path: entry.path, detail: detail)
            case .outOfMemory:
                throw .io(archive: archive, error: .init(12, operation: "inflate", path: archive))
            }
        }
    }
}

import AssetArchive
import AssetSystem

extension AssetStore {
    /// Writes the bytes of the member at `path` (in pack `pack`, or in
    /// whichever installed pack holds it) to `target`, a descriptor the
    /// caller owns, holding at most ``streamBuffer`` bytes of it in memory:
    /// a deflated member goes through a zlib stream, a stored one with
    /// `sendfile` from the archive (by `write` where the kernel refuses, as
    /// for a terminal). The archive's pages are dropped from this process's
    /// mapping as they go by (``ReadBehind``).
    ///
    /// The CRC-32 (a stored member's only with `checkingStored`) is checked
    /// before the last piece goes out: a member that fits the buffer is
    /// written checked or not at all; of a longer one, what was written
    /// before an error must not be trusted.
    ///
    /// - Returns: the number of bytes written: the member's size.
    /// - Throws: as ``contents(at:inPack:)``, `.archive(.crcMismatch)` for a
    ///   damaged stored member when `checkingStored`, and `.system` when
    ///   writing fails (`EPIPE` when the reader went away).
    public func write(_ path: String, inPack pack: String? = nil, to target: Int32, checkingStored: Bool = true) throws(StoreError) -> UInt64 {
        try withMember(path, inPack: pack) { (id, record, map) throws(StoreError) -> UInt64? in
            try checkLimits(of: record, path: path, pack: id)
            _ = try Self.dataStart(of: record, path: path, pack: id, in: map)
            guard let fd = try layout.packs.open(IndexSchema.archiveName(pack: id, archiveKey: record.archiveKey)) else { return nil }
            var sender = MemberSender(target: target, archive: fd, base: record.method == .stored ? map.base : nil)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.streamBuffer, alignment: 16)
            defer { buffer.deallocate() }
            var behind = ReadBehind(mapping: map.bytes)
            let archive = container.packsPath + "/" + IndexSchema.archiveName(pack: id, archiveKey: record.archiveKey)
            let complete: Bool
            do throws(ArchiveError) {
                complete = try ZipArchive.stream(record.entry(path: path), in: map.bytes, archive: archive, through: buffer,
                                                 checkingStored: checkingStored, readBehind: &behind) { sender.send($0) }
            } catch {
                throw .archive(error)
            }
            if record.storedSize >= UInt64(behind.window) {
                behind.finish(at: Int(record.dataOffset + record.storedSize))
            }
            guard complete else { throw .system(sender.failure ?? Errno.ioError.with(operation: "write")) }
            return record.size
        }
    }

    /// What ``write(_:inPack:to:checkingStored:)`` holds in memory at most.
    public static let streamBuffer = 1 << 20
}

/// Puts the pieces of a streamed member out: a stored member's (slices of
/// the archive mapping at `base`) with `sendfile` from `archive`, falling
/// back to `write` for good when the kernel refuses; a deflated one's
/// (`base` nil) with `write`.
private struct MemberSender: ~Copyable {
    let target: Int32
    let archive: FileDescriptor
    let base: UnsafeRawPointer?
    var sendfileWorks = true
    /// Why the last piece did not go out.
    var failure: Errno?

    init(target: Int32, archive: consuming FileDescriptor, base: UnsafeRawPointer?) {
        self.target = target
        self.archive = archive
        self.base = base
    }

    mutating func send(_ piece: UnsafeRawBufferPointer) -> Bool {
        do throws(Errno) {
            if sendfileWorks, let base, let start = piece.baseAddress {
                let offset = Int64(start - base)
                var sent = 0
                while sent < piece.count {
                    let n: Int
                    do { n = try archive.send(count: piece.count - sent, at: offset + Int64(sent), to: target) } catch
                        where sent == 0 && (error == .invalidArgument || error == .noSys) {
                        sendfileWorks = false
                        break
                    }
                    guard n > 0 else { throw Errno.ioError.with(operation: "sendfile: the archive ended early") }
                    sent += n
                }
                if sent == piece.count { return true }
            }
            try FileDescriptor.write(piece, to: target)
            return true
        } catch {
            failure = error
            return false
        }
    }
}

public import AssetArchive
public import AssetSystem
import AssetIndex

/// Installed member data that an update may copy instead of downloading.
///
/// A snapshot of every installed member, keyed by what identifies its
/// stored bytes: method, CRC-32, inflated length and stored size. Two
/// members that agree on all four almost surely hold the same bytes; the
/// caller checks the SHA-256 that ``copy(_:to:at:)`` returns against the one
/// it expects, and the source never hides a mismatch.
///
/// Every archive the snapshot names is opened when the source is made and
/// stays open while the source lives, so a pack removed or replaced
/// meanwhile still reads (the unlinked file lives on). Immutable once made,
/// hence `Sendable`.
public final class ReuseSource: Sendable {
    /// One installed member whose stored bytes may be copied.
    public struct Candidate: Sendable, Hashable {
        /// The installed pack that holds it.
        public let pack: String
        /// Its path in that pack.
        public let path: String
        /// The pack version's archive (``PackRecord/archiveKey``).
        public let archiveKey: UInt64
        /// Where its stored bytes start in the archive.
        public let dataOffset: UInt64
        /// How many stored bytes it has.
        public let storedSize: UInt64
    }

    /// What identifies a member's stored bytes.
    struct Key: Hashable {
        let method: CompressionMethod
        let crc32: UInt32
        let length: UInt64
        let storedSize: UInt64
    }

    /// An archive held open, named in errors by its path.
    final class OpenArchive: Sendable {
        let fd: FileDescriptor
        let pack: String
        let path: String
        let size: UInt64

        init(fd: consuming FileDescriptor, pack: String, path: String, size: UInt64) {
            self.fd = fd
            self.pack = pack
            self.path = path
            self.size = size
        }
    }

    private let byKey: [Key: [Candidate]]
    private let archives: [UInt64: OpenArchive]

    init(byKey: [Key: [Candidate]], archives: [UInt64: OpenArchive]) {
        self.byKey = byKey
        self.archives = archives
    }

    /// How many members the snapshot holds.
    public var memberCount: Int { byKey.values.reduce(0) { $0 + $1.count } }

    /// Bytes in all candidates' archives (for status).
    public var archiveBytes: UInt64 { archives.values.reduce(0) { $0 + $1.size } }

    /// Installed members with these stored bytes' properties, any pack (best
    /// first: same path first, then by pack and path).
    public func candidates(method: CompressionMethod, crc32: UInt32, length: UInt64, storedSize: UInt64,
                           path: String) -> [Candidate] {
        guard let found = byKey[Key(method: method, crc32: crc32, length: length, storedSize: storedSize)] else { return [] }
        guard found.count > 1 else { return found }
        return found.filter { $0.path == path } + found.filter { $0.path != path }
    }

    /// Copies `candidate`'s stored bytes into `fd` at `offset` (`pread` from
    /// the archive, `pwrite` into `fd`, a megabyte at a time: never a mapping
    /// of the whole archive), returning the SHA-256 of the bytes copied (32
    /// bytes). The bytes are hashed as they are read, so a damaged archive
    /// gives another SHA-256; the caller decides what that means.
    ///
    /// - Throws: `StoreError.archiveMissing` naming the archive when the
    ///   candidate is not from this snapshot or its archive is shorter than
    ///   its data; `.system` naming the archive when it cannot be read, or
    ///   the error of writing into `fd`.
    public func copy(_ candidate: Candidate, to fd: borrowing FileDescriptor, at offset: UInt64) throws(StoreError) -> [UInt8] {
        guard let archive = archives[candidate.archiveKey], archive.pack == candidate.pack else {
            throw .archiveMissing(pack: candidate.pack, path: IndexSchema.archiveName(pack: candidate.pack, archiveKey: candidate.archiveKey))
        }
        let (end, overflow) = candidate.dataOffset.addingReportingOverflow(candidate.storedSize)
        guard !overflow, end <= archive.size else { throw .archiveMissing(pack: archive.pack, path: archive.path) }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: Int(min(candidate.storedSize, UInt64(Self.chunk))))
        var done: UInt64 = 0
        while done < candidate.storedSize {
            let want = Int(min(UInt64(buffer.count), candidate.storedSize - done))
            let got: Int
            do {
                got = try buffer.withUnsafeMutableBytes { b in
                    Result { () throws(Errno) in
                        try archive.fd.read(into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]), at: Int64(candidate.dataOffset + done))
                    }
                }.get()
            } catch {
                throw .system(error.with(operation: error.operation, path: archive.path))
            }
            guard got == want else { throw .archiveMissing(pack: archive.pack, path: archive.path) }
            do {
                try buffer.withUnsafeBytes { b in
                    hasher.update(UnsafeRawBufferPointer(rebasing: b[..<got]))
                    return Result { () throws(Errno) in try fd.write(UnsafeRawBufferPointer(rebasing: b[..<got]), at: Int64(offset + done)) }
                }.get()
            } catch {
                throw .system(error)
            }
            done += UInt64(got)
        }
        return hasher.finalize()
    }

    /// The most bytes read and written at once.
    static let chunk = 1 << 20
}

extension AssetStore {
    /// A snapshot of every installed member (one read transaction, one pass
    /// over `members`), keyed by (method, crc32, length, storedSize).
    ///
    /// Every pack's archive is opened in the snapshot's read transaction and
    /// kept open by the source, so a pack removed or replaced meanwhile still
    /// reads (the unlinked file lives on). When an archive the snapshot names
    /// is already gone (replaced between the snapshot and the open), a fresh
    /// snapshot is taken; a pack whose archive is still missing after that
    /// (a damaged container, which `verify` reports) supplies nothing.
    ///
    /// - Throws: `.index` when the index cannot be read, `.system` when an
    ///   archive that exists cannot be opened.
    public func reuseSource() throws(StoreError) -> ReuseSource {
        var attempt = 0
        while true {
            attempt += 1
            let commit = environment.lastCommittedTransactionID
            let (source, missing) = try reuseSnapshot()
            if !missing || attempt >= 3 || environment.lastCommittedTransactionID == commit { return source }
        }
    }

    /// One snapshot; `missing` tells whether an archive it names was gone.
    private func reuseSnapshot() throws(StoreError) -> (ReuseSource, missing: Bool) {
        try snapshot { (txn) throws(StoreError) in
            var archives: [UInt64: ReuseSource.OpenArchive] = [:]
            var missing = false
            var records: [PackRecord] = []
            try indexCall { () throws(LMDBError) in
                try txn.forEach(packs) { key, value in
                    // A record that does not decode supplies nothing (verify reports it).
                    if let record = try? PackRecord(id: String(decoding: key, as: UTF8.self), decoding: value) { records.append(record) }
                    return true
                }
            }
            for record in records {
                guard let fd = try layout.packs.open(record.archiveName) else { missing = true; continue }
                let path = layout.packs.path(of: record.archiveName)
                let size: Int64
                do throws(Errno) { size = try fd.status().size } catch { throw .system(error.with(operation: error.operation, path: path)) }
                archives[record.archiveKey] = ReuseSource.OpenArchive(fd: fd, pack: record.id, path: path, size: UInt64(size))
            }
            var byKey: [ReuseSource.Key: [ReuseSource.Candidate]] = [:]
            try indexCall { () throws(LMDBError) in
                try txn.forEach(members) { key, value in
                    guard let record = MemberRecord(value), let archive = archives[record.archiveKey],
                          let nul = key.firstIndex(of: 0) else { return true }
                    let pack = String(decoding: UnsafeRawBufferPointer(rebasing: key[..<nul]), as: UTF8.self)
                    guard pack == archive.pack else { return true }
                    let path = String(decoding: UnsafeRawBufferPointer(rebasing: key[(nul + 1)...]), as: UTF8.self)
                    let k = ReuseSource.Key(method: record.method, crc32: record.crc32, length: record.size, storedSize: record.storedSize)
                    byKey[k, default: []].append(ReuseSource.Candidate(
                        pack: pack, path: path, archiveKey: record.archiveKey, dataOffset: record.dataOffset, storedSize: record.storedSize))
                    return true
                }
            }
            return (ReuseSource(byKey: byKey, archives: archives), missing)
        }
    }
}

import Foundation
import AssetArchive
import AssetIndex
import AssetSystem

/// A member as the index records it.
public struct MemberInfo: Sendable, Hashable {
    /// The pack that holds it.
    public let pack: String
    public let path: String
    /// Its size in bytes.
    public let size: UInt64
    /// Its size inside the archive.
    public let storedSize: UInt64
    public let method: CompressionMethod
    public let crc32: UInt32
}

extension AssetStore {
    /// The record of pack `id`, or `nil` if it is not installed.
    public func packRecord(_ id: String) throws(StoreError) -> PackRecord? {
        try snapshot { (txn) throws(StoreError) in try Self.packRecord(id, txn: txn, packs: packs) }
    }

    static func packRecord(_ id: String, txn: borrowing some ReadableTransaction & ~Copyable, packs: Database) throws(StoreError) -> PackRecord? {
        guard let bytes = try indexCall({ () throws(LMDBError) in try txn.get(packs, key: Array(id.utf8)) }) else { return nil }
        return try PackRecord(id: id, decoding: bytes)
    }

    /// Every installed pack, sorted by ID.
    ///
    /// - Throws: `.corruptRecord` when a pack record is damaged (verify
    ///   reports it, repair rebuilds it).
    public func allPackRecords() throws(StoreError) -> [PackRecord] {
        let (records, damaged) = try readPackRecords()
        if let first = damaged.first { throw .corruptRecord(pack: first, member: nil, reason: .undecodable("pack record cannot be decoded")) }
        return records
    }

    /// The pack records that decode, and the IDs of those that do not.
    func readPackRecords() throws(StoreError) -> (records: [PackRecord], damaged: [String]) {
        try snapshot { (txn) throws(StoreError) in
            var records: [PackRecord] = []
            var damaged: [String] = []
            try indexCall { () throws(LMDBError) in
                try txn.forEach(packs) { key, value in
                    let id = String(decoding: key, as: UTF8.self)
                    if let record = try? PackRecord(id: id, decoding: value) { records.append(record) } else { damaged.append(id) }
                    return true
                }
            }
            return (records, damaged)
        }
    }

    /// Finds a member: in pack `pack`, or in every pack when `pack` is nil.
    /// Returns the pack's ID and the member's record, read in one snapshot —
    /// or remembered from a lookup at the last commit (``LookupCache``).
    ///
    /// - Throws: `.assetPackNotFound` when the named pack is not installed,
    ///   `.fileNotFound` when no member has the path, `.ambiguousPath` when
    ///   a path-only lookup finds it in several packs.
    @inline(__always)
    func locate(_ path: String, pack: String?) throws(StoreError) -> (pack: String, record: MemberRecord) {
        let commit = environment.lastCommittedTransactionID
        if archives.firstToSee(commit) { releaseReplacedArchives() }
        if let hit = lookups.lookup(path, pack: pack, commit: commit) { return hit }
        let key = MemberPath.normalized(path)  // index keys are NFC
        let (found, snapshot) = try snapshot { (txn) throws(StoreError) in
            let id: String
            if let pack {
                id = pack
            } else {
                guard let holders = try indexCall({ () throws(LMDBError) in try txn.get(paths, key: key) }) else {
                    throw .fileNotFound(path: path, pack: nil)
                }
                let ids = PathIndex.packs(in: holders)
                guard ids.count == 1 else { throw .ambiguousPath(path, packs: ids) }
                id = ids[0]
            }
            guard let bytes = try Self.memberValue(pack: id, path: key, txn: txn, members: members) else {
                if pack != nil, try Self.packRecord(id, txn: txn, packs: packs) == nil {
                    throw .notInstalled(id)
                }
                throw .fileNotFound(path: path, pack: pack)
            }
            guard let record = MemberRecord(bytes) else {
                throw .corruptRecord(pack: id, member: path, reason: .impossibleSizes)
            }
            return ((pack: id, record: record), txn.snapshotID)
        }
        lookups.insert(path, pack: pack, found: found, commit: snapshot)
        return found
    }

    /// The member record's bytes, looked up with a key built on the stack.
    @inline(__always)
    static func memberValue(
        pack: String, path: String, txn: borrowing some ReadableTransaction & ~Copyable, members: Database
    ) throws(StoreError) -> UnsafeRawBufferPointer? {
        var pack = pack
        var path = path
        return try pack.withUTF8 { p in
            path.withUTF8 { q in
                Result { () throws(StoreError) in
                    let count = p.count + 1 + q.count
                    return try withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { key in
                        Result { () throws(StoreError) in
                            key.baseAddress!.copyMemory(from: p.baseAddress!, byteCount: p.count)
                            key[p.count] = 0
                            if q.count > 0 { (key.baseAddress! + p.count + 1).copyMemory(from: q.baseAddress!, byteCount: q.count) }
                            return try indexCall { () throws(LMDBError) in try txn.get(members, key: UnsafeRawBufferPointer(key)) }
                        }
                    }.get()
                }
            }
        }.get()
    }

    /// The pack and record of the member at `path`, in pack `pack` or in
    /// whichever installed pack holds it, found as ``descriptor(for:inPack:options:)``
    /// and ``contents(at:inPack:)`` find it; without touching the archive.
    /// A record's archive key names the pack version its bytes come from.
    ///
    /// - Throws: `.assetPackNotFound`, `.fileNotFound`, `.ambiguousPath`, and
    ///   `.corruptRecord` for a record that cannot be decoded.
    public func member(at path: String, inPack pack: String? = nil) throws(StoreError) -> (pack: String, record: MemberRecord) {
        try locate(path, pack: pack)
    }

    /// The bytes of the member at `path`, in pack `pack` or in whichever
    /// installed pack holds it.
    ///
    /// A stored member's bytes are not copied: the returned `Data` points into
    /// a shared read-only mapping of the archive, which lives as long as any
    /// `Data` (or slice) that points into it — also after the pack is updated
    /// or removed. A deflated member is inflated into exactly its declared
    /// size and its CRC-32 checked.
    ///
    /// - Throws: `.assetPackNotFound`, `.fileNotFound`, `.ambiguousPath`;
    ///   `.archive` when a deflated member's data is damaged; `.corruptRecord`
    ///   when the index points outside the archive; `.limitExceeded` when a
    ///   deflated member is over ``limits()`` (installed under looser ones),
    ///   before anything is allocated.
    public func contents(at path: String, inPack pack: String? = nil) throws(StoreError) -> Data {
        try withMember(path, inPack: pack) { (id, record, map) throws(StoreError) in
            try checkLimits(of: record, path: path, pack: id)
            return try Self.data(of: record, path: path, pack: id, in: map)
        }
    }

    /// ``contents(at:inPack:)`` with a stored member's CRC-32 checked as well
    /// (a deflated member's always is): for callers that go on to copy the
    /// bytes, where the check costs little beside the copy. The zero-copy
    /// read above does not check, since it would touch every page.
    ///
    /// - Throws: as ``contents(at:inPack:)``; `.archive(.crcMismatch)` when
    ///   a stored member's bytes were damaged on disk.
    public func checkedContents(at path: String, inPack pack: String? = nil) throws(StoreError) -> Data {
        try withMember(path, inPack: pack) { (id, record, map) throws(StoreError) in
            try checkLimits(of: record, path: path, pack: id)
            let data = try Self.data(of: record, path: path, pack: id, in: map)
            if record.method == .stored {
                let actual = data.withUnsafeBytes { CRC32.checksum($0) }
                guard actual == record.crc32 else {
                    throw .archive(.crcMismatch(archive: container.packsPath + "/" + IndexSchema.archiveName(pack: id, archiveKey: record.archiveKey),
                                                path: path, expected: record.crc32, actual: actual))
                }
            }
            return data
        }
    }

    /// Finds a member and runs `body` with its pack ID, record and archive
    /// mapping. When the snapshot named an archive that is gone (replaced or
    /// removed since), or `body` returns `nil` for that reason, looks again in
    /// a fresh snapshot — for as long as each snapshot names a different
    /// archive (a writer churning faster than this reader), up to a bound.
    /// The same archive missing twice is damage: `.archiveMissing`.
    @inline(__always)
    func withMember<R: ~Copyable>(
        _ path: String, inPack pack: String?,
        _ body: (String, MemberRecord, ArchiveMap) throws(StoreError) -> R?
    ) throws(StoreError) -> R {
        var missing: UInt64?
        var attempt = 0
        while true {
            let (id, record) = try locate(path, pack: pack)
            if let map = try archives.map(pack: id, key: record.archiveKey), let result = try body(id, record, map) {
                return result
            }
            attempt += 1
            if record.archiveKey == missing || attempt == 64 {
                throw .archiveMissing(pack: id, path: container.packsPath + "/" + IndexSchema.archiveName(pack: id, archiveKey: record.archiveKey))
            }
            missing = record.archiveKey
        }
    }

    @inline(__always)
    static func data(of record: MemberRecord, path: String, pack: String, in map: ArchiveMap) throws(StoreError) -> Data {
        let start = try dataStart(of: record, path: path, pack: pack, in: map)
        switch record.method {
        case .stored:
            return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: start), count: Int(record.size), deallocator: map.deallocator)
        case .deflated:
            let count = Int(record.size)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            do {
                try inflate(record, path: path, pack: pack, in: map, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]))
            } catch {
                buffer.deallocate()
                throw error
            }
            return Data(bytesNoCopy: buffer.baseAddress!, count: count, deallocator: .custom { p, _ in p.deallocate() })
        }
    }

    /// Where `record`'s data starts in `map`, checked to lie inside it (and,
    /// for a stored member, to be as long as the member).
    @inline(__always)
    static func dataStart(of record: MemberRecord, path: String, pack: String, in map: ArchiveMap) throws(StoreError) -> UnsafeRawPointer {
        let end = record.dataOffset.addingReportingOverflow(record.storedSize)
        guard !end.overflow, end.partialValue <= UInt64(map.count), let base = map.base else {
            throw .corruptRecord(pack: pack, member: path, reason: .dataOutsideArchive)
        }
        guard record.method != .stored || record.size == record.storedSize else {
            throw .corruptRecord(pack: pack, member: path, reason: .impossibleSizes)
        }
        return base + Int(record.dataOffset)
    }

    /// Inflates deflated `record` into `buffer`, exactly its declared size,
    /// checking its CRC-32.
    static func inflate(_ record: MemberRecord, path: String, pack: String, in map: ArchiveMap,
                        into buffer: UnsafeMutableRawBufferPointer) throws(StoreError) {
        do {
            try ZipArchive.extract(record.entry(path: path), from: map.bytes, into: buffer, archive: pack)
        } catch {
            throw .archive(error)
        }
    }

    /// The members of pack `id`, sorted by path; with `directory`, only those
    /// below it (`"Levels"` and `"Levels/"` both mean everything under `Levels/`).
    ///
    /// - Throws: `.assetPackNotFound` when the pack is not installed.
    public func members(ofPack id: String, under directory: String? = nil) throws(StoreError) -> [MemberInfo] {
        try snapshot { (txn) throws(StoreError) in
            guard try Self.packRecord(id, txn: txn, packs: packs) != nil else { throw .notInstalled(id) }
            var prefix = IndexSchema.memberPrefix(pack: id)
            let base = prefix.count
            if let directory, !directory.isEmpty, directory != "." && directory != "/" {
                prefix.append(contentsOf: MemberPath.normalized(directory).utf8)
                if prefix.last != UInt8(ascii: "/") { prefix.append(UInt8(ascii: "/")) }
            }
            var result: [MemberInfo] = []
            var damaged: String?
            try indexCall { () throws(LMDBError) in
                try txn.forEach(members, prefix: prefix) { key, value in
                    let path = String(decoding: key[base...], as: UTF8.self)
                    guard let r = MemberRecord(value) else { damaged = path; return false }
                    result.append(MemberInfo(pack: id, path: path, size: r.size, storedSize: r.storedSize, method: r.method, crc32: r.crc32))
                    return true
                }
            }
            if let damaged { throw .corruptRecord(pack: id, member: damaged, reason: .impossibleSizes) }
            return result
        }
    }
}

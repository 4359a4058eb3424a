import AssetStore
import AssetArchive
import AssetSystem

/// A download's file in `staging/` (`<pack>-<random>.download`), its
/// journal entry, and the SHA-256 of the bytes in it so far.
///
/// Opening one resumes the journal's partial file when the entry is for the
/// same file (URL, size, SHA-256), re-hashing the bytes already on disk, and
/// discards it otherwise; a new file is recorded in the journal before it
/// gets its first byte, so a process killed at any point leaves an entry
/// the next one resumes. The hash runs behind the writes, on a queue of its
/// own (``TrailingHash``), re-reading what was written.
///
/// A delta download's file (``deltaPieceMap`` set, the journal entry saying
/// so) has the catalog's size from its creation and is written at any
/// offset; the byte ranges it completed are listed beside it in
/// ``rangesPath`` (see ``DeltaDownload``), and it is hashed once complete.
/// An entry resumes only in its own mode, for the same piece map.
final class PartialDownload {
    let store: AssetStore
    let request: DownloadRequest
    let name: String
    let descriptor: FileDescriptor
    /// Bytes in the file, all fed to `hash`.
    private(set) var length: UInt64
    private let hash: TrailingHash
    /// How far `hash` has been told the file is written.
    private var fed: UInt64 = 0
    /// The validator of the bytes in the file, as the journal has it: what
    /// a resume sends in `If-Range` — a strong ETag or a strong
    /// `Last-Modified` (``HTTPClient/Head/rangeValidator``), `nil` for none.
    private(set) var etag: String?
    /// Whether the file continued a journal entry's partial file.
    let resumed: Bool
    /// For a delta download, the SHA-256 of its piece map.
    let deltaPieceMap: [UInt8]?

    var path: String { store.container.stagingPath + "/" + name }
    /// A delta download's list of completed ranges.
    var rangesPath: String { path + JournalEntry.rangesSuffix }

    /// The download of `request`: the whole file (`deltaPieceMap` `nil`) or a
    /// delta following the piece map of that SHA-256.
    init(for request: DownloadRequest, in store: AssetStore, deltaPieceMap: [UInt8]? = nil) throws(DeliveryError) {
        self.store = store
        self.request = request
        self.deltaPieceMap = deltaPieceMap
        let staging = store.container.stagingPath
        let old = try storing(store.journalEntry(forPack: request.pack))
        // A name from the index is used only as what this type writes: one
        // component of `staging/`, ending in `.download`.
        let oldName = old?.stagingName.flatMap { $0.contains("/") || !$0.hasSuffix(JournalEntry.stagingSuffix) ? nil : $0 }
        if let old, Self.resumes(old, request), old.deltaPieceMap == deltaPieceMap, let name = oldName,
           let fd = try? FileDescriptor.open(staging + "/" + name, [.readWrite, .noFollow]) {
            if deltaPieceMap != nil {
                try systemCall { () throws(Errno) in try fd.resize(to: Int64(request.size)) }
                length = request.size
            } else {
                length = try systemCall { () throws(Errno) in try Self.length(of: fd, atMost: request.size) }
            }
            hash = try Self.hash(of: fd, path: staging + "/" + name)
            self.name = name
            self.descriptor = fd
            self.etag = old.etag
            self.resumed = true
            // The bytes on disk are read back and hashed, not trusted blindly,
            // while the rest is requested (a delta's once complete).
            if deltaPieceMap == nil { feed() }
            return
        }
        if let name = oldName {
            try? FileSystem.unlink(staging + "/" + name + JournalEntry.rangesSuffix)
            try? FileSystem.unlink(staging + "/" + name)
        }
        var name = ""
        let fd = try Self.create(in: staging, pack: request.pack, name: &name)
        // The file's name is durable before the journal names it: a power
        // loss then leaves a download to resume, not an entry whose file
        // is gone (which restarts from zero).
        do { try FileSystem.syncDirectory(staging) } catch {
            try? FileSystem.unlink(staging + "/" + name)
            throw .system(error)
        }
        hash = try Self.hash(of: fd, path: staging + "/" + name)
        if deltaPieceMap != nil {
            do { try fd.resize(to: Int64(request.size)) } catch {
                try? FileSystem.unlink(staging + "/" + name)
                throw .system(error)
            }
        }
        self.descriptor = fd
        self.name = name
        self.length = deltaPieceMap == nil ? 0 : request.size
        self.resumed = false
        try record(etag: nil)
    }

    /// Whether `entry` is an unfinished download of `request`'s file.
    static func resumes(_ entry: JournalEntry, _ request: DownloadRequest) -> Bool {
        entry.state == .downloading && entry.stagingName != nil && entry.url == request.url
            && entry.expectedSize == request.size && entry.sha256 == request.sha256Bytes
    }

    /// Creates a new `<pack>-<random>.download` in `staging`.
    private static func create(in staging: String, pack: String, name: inout String) throws(DeliveryError) -> FileDescriptor {
        while true {
            name = pack + "-" + String(UInt64.random(in: 1...UInt64.max), radix: 16) + JournalEntry.stagingSuffix
            do {
                return try FileDescriptor.open(staging + "/" + name, [.readWrite, .create, .exclusive, .noFollow])
            } catch where error == .fileExists {
                continue
            } catch {
                throw .system(error)
            }
        }
    }

    /// A hash of `fd`'s bytes, reading them through a description of its own.
    private static func hash(of fd: borrowing FileDescriptor, path: String) throws(DeliveryError) -> TrailingHash {
        do { return TrailingHash(file: try fd.reopenReadOnly(), path: path) } catch { throw .system(error) }
    }

    /// The length of `fd`, cut to 0 if it is longer than `limit`.
    private static func length(of fd: borrowing FileDescriptor, atMost limit: UInt64) throws(Errno) -> UInt64 {
        let size = UInt64(max(0, try fd.status().size))
        guard size > limit else { return size }
        try fd.resize(to: 0)
        return 0
    }

    /// Writes the journal entry of this file, with `etag`.
    func record(etag: String?) throws(DeliveryError) {
        self.etag = etag
        try storing(store.putJournalEntry(JournalEntry(
            pack: request.pack, state: .downloading, url: request.url, catalogVersion: String(request.version),
            stagingName: name, expectedSize: request.size, sha256: request.sha256Bytes, etag: etag, deltaPieceMap: deltaPieceMap)))
    }

    /// Appends `bytes` at the end and feeds them to the hash; every
    /// ``writebackPiece`` bytes, starts writing the last piece to storage,
    /// so that the install's `fsync` waits only for the tail.
    func append(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        try descriptor.write(bytes, at: Int64(length))
        length += UInt64(bytes.count)
        if length - fed >= Self.hashPiece { feed() }
        if length - writtenBack >= Self.writebackPiece {
            // Only a head start for the fsync: a file system that cannot
            // (ESPIPE, EINVAL) loses nothing.
            try? descriptor.startWriteback(from: Int64(writtenBack), count: Int64(length - writtenBack))
            writtenBack = length
        }
    }

    /// Tells `hash` the file is written up to `length`.
    private func feed() {
        hash.feed(upTo: length)
        fed = length
    }

    /// The bytes written between two hand-overs to `hash`.
    static let hashPiece: UInt64 = 1 << 20

    /// Where the writeback started by ``append(_:)`` has reached.
    private var writtenBack: UInt64 = 0

    /// The bytes between two writeback starts.
    static let writebackPiece: UInt64 = 8 << 20

    /// Empties the file, for a body that starts again from byte 0.
    func restart() throws(Errno) {
        hash.restart()
        try descriptor.resize(to: 0)
        length = 0
        fed = 0
        writtenBack = 0
    }

    /// The SHA-256 of the bytes so far, in hex, once `hash` has caught up.
    ///
    /// - Throws: the read-back's failure (a file cut short under it).
    func digest() throws(Errno) -> String {
        feed()
        return SHA256.hex(try hash.finish())
    }

    /// Removes the file and the journal entry: after a failure, or when the
    /// store found the same archive installed. (An install adopts the file
    /// and ends the download itself.)
    func discard() {
        if deltaPieceMap != nil { try? FileSystem.unlink(rangesPath) }
        try? FileSystem.unlink(path)
        try? store.removeJournalEntry(forPack: request.pack)
    }
}

extension Downloader {
    /// Removes `pack`'s journal entry and its partial file in `staging/`
    /// (a name that is not one this type writes is left alone). The caller
    /// holds the pack's download lock.
    ///
    /// - Returns: whether there was an entry.
    public static func discardPartial(of pack: String, in store: AssetStore) throws(DeliveryError) -> Bool {
        guard let entry = try storing(store.journalEntry(forPack: pack)) else { return false }
        if let name = entry.stagingName, !name.contains("/"), name.hasSuffix(JournalEntry.stagingSuffix) {
            try? FileSystem.unlink(store.container.stagingPath + "/" + name + JournalEntry.rangesSuffix)
            try? FileSystem.unlink(store.container.stagingPath + "/" + name)
        }
        try storing(store.removeJournalEntry(forPack: pack))
        return true
    }
}

/// Runs a store call, reporting its error as a delivery error.
func storing<R>(_ body: @autoclosure () throws(StoreError) -> R) throws(DeliveryError) -> R {
    do { return try body() } catch { throw .store(error) }
}

/// Runs system calls, reporting their error as a delivery error.
func systemCall<R>(_ body: () throws(Errno) -> R) throws(DeliveryError) -> R {
    do { return try body() } catch { throw .system(error) }
}

import Foundation
import Synchronization
public import AssetArchive
public import AssetSystem

/// A pack file that has been checked end to end: its ZIP structure, the
/// sizes its members declare against ``PackLimits`` (when given), every
/// member's data (CRC-32, inflated to exactly its declared size), its
/// SHA-256, and its recorded manifest, if it has one.
public struct PackFile: Sendable {
    /// The path it was read from.
    public let path: String
    /// The parsed archive.
    public let archive: ZipArchive
    /// SHA-256 of the whole file.
    public let sha256: [UInt8]
    /// Size in bytes.
    public let size: UInt64
    /// The recorded manifest, or `nil` for a plain ZIP.
    public let description: PackDescription?

    /// Sum of the members' sizes.
    public var totalSize: UInt64 { archive.entries.reduce(0) { $0 + $1.uncompressedSize } }

    /// The ID a plain ZIP installs under: its file name without the extension.
    public var defaultID: String { Self.defaultID(of: path) }

    /// The file name at `path` without its extension.
    static func defaultID(of path: String) -> String {
        let name = (path as NSString).lastPathComponent
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { return String(name[..<dot]) }
        return name
    }

    /// Checks the file at `path`. See ``validate(descriptor:path:limits:)``.
    public static func validate(
        path: String, limits: PackLimits? = nil, progress: ((InstallProgress) -> Void)? = nil
    ) throws(StoreError) -> PackFile {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path) } catch { throw .system(error) }
        return try validate(descriptor: fd, path: path, limits: limits, progress: progress)
    }

    /// Checks the open file `descriptor`, named `path` in errors: maps it,
    /// parses and validates the ZIP structure, checks the sizes the members
    /// declare against `limits` before inflating any, checks every member's
    /// data, and hashes the whole file.
    ///
    /// - Parameter limits: what the members may inflate to; `nil` checks
    ///   none (repair, which rebuilds records of archives already installed).
    /// - Throws: `StoreError.notAFile` for a non-regular file, `.archive`
    ///   with the first problem found, `.limitExceeded`,
    ///   `.invalidRecordedManifest`, `.system`.
    public static func validate(descriptor: borrowing FileDescriptor, path: String, limits: PackLimits? = nil) throws(StoreError) -> PackFile {
        try validate(descriptor: descriptor, path: path, limits: limits, progress: nil)
    }

    /// ``validate(descriptor:path:limits:)``, reporting the `.validating` and
    /// `.hashing` phases of an install to `progress`. With `verifiedSHA256`
    /// (a download's, computed over exactly the bytes it wrote into this
    /// file) the file is not hashed again and there is no `.hashing` phase.
    static func validate(
        descriptor: borrowing FileDescriptor, path: String, limits: PackLimits?, verifiedSHA256: [UInt8]? = nil,
        progress: ((InstallProgress) -> Void)?
    ) throws(StoreError) -> PackFile {
        let region = try map(descriptor, path: path)
        let bytes = region.bytes
        let archive: ZipArchive
        // Neither the headers parsing reads stay resident nor any page the
        // passes below read (``ReadBehind``): an archive of any size costs a
        // few windows of its bytes.
        do { archive = try ZipArchive.parse(bytes, name: path, releasingPages: true) } catch { throw .archive(error) }
        try limits?.check(archive, path: path)
        do { try verifyMembers(of: archive, in: bytes, path: path, progress: progress) } catch { throw .archive(error) }
        let description = try PackDescription.decode(archiveComment: archive.comment, archive: path)
        let sha256 = verifiedSHA256 ?? hash(bytes, progress: progress)
        return PackFile(path: path, archive: archive, sha256: sha256, size: UInt64(bytes.count), description: description)
    }

    /// Maps all of the regular file `descriptor`, for a sequential read.
    static func map(_ descriptor: borrowing FileDescriptor, path: String) throws(StoreError) -> MappedRegion {
        let status: FileStatus
        do { status = try descriptor.status() } catch { throw .system(error.with(operation: "stat", path: path)) }
        guard status.isRegularFile else { throw .notAFile(path) }
        let region: MappedRegion
        do { region = try MappedRegion(mapping: descriptor, count: Int(status.size)) } catch {
            throw .system(error.with(operation: "mmap", path: path))
        }
        region.advise(.sequential)
        return region
    }

    /// Checks every member's data: its CRC-32, and that it inflates to exactly
    /// its declared size.
    private static func verifyMembers(
        of archive: ZipArchive, in bytes: UnsafeRawBufferPointer, path: String, progress: ((InstallProgress) -> Void)?
    ) throws(ArchiveError) {
        var meter = ProgressMeter.install(
            .validating, total: archive.entries.reduce(0) { $0 + $1.compressedSize }, reportingTo: progress)
        var behind = ReadBehind(mapping: bytes)
        for entry in archive.entries {
            try ZipArchive.verify(entry, in: bytes, archive: path, readBehind: &behind)
            meter?.advance(by: entry.compressedSize)
        }
        behind.finish(at: bytes.count)
        meter?.finish()
    }

    /// The SHA-256 of `bytes`, a file mapping, hashed in pieces of at most
    /// ``hashPiece`` bytes, each dropped once hashed (``ReadBehind``) and,
    /// with `progress`, reported.
    static func hash(_ bytes: UnsafeRawBufferPointer, progress: ((InstallProgress) -> Void)?) -> [UInt8] {
        hash(bytes, progress: progress, until: { false })!
    }

    /// ``hash(_:progress:)``, asking `stopped` between two pieces; `nil`
    /// once it says to stop.
    static func hash(_ bytes: UnsafeRawBufferPointer, progress: ((InstallProgress) -> Void)?, until stopped: () -> Bool) -> [UInt8]? {
        var meter = ProgressMeter.install(.hashing, total: UInt64(bytes.count), reportingTo: progress)
        var behind = ReadBehind(mapping: bytes)
        var hasher = SHA256()
        var offset = 0
        while offset < bytes.count {
            if stopped() { return nil }
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset ..< min(offset + hashPiece, bytes.count)])
            hasher.update(piece)
            offset += piece.count
            behind.reached(offset)
            meter?.advance(by: UInt64(piece.count))
        }
        behind.finish(at: offset)
        meter?.finish()
        return hasher.finalize()
    }

    /// The most bytes hashed between two progress reports, and between two
    /// chances to give way (``ReadBehind``): about 0.2 ms of SHA-256.
    private static let hashPiece = 256 << 10
}

/// A pack file checked end to end as ``PackFile`` checks it, for an
/// install, without its members held: the checks walk the central
/// directory (``ZipDirectory``) keeping only counts and first problems, and
/// the index pass walks the records again from the mapping, which this
/// value keeps open. A pack of a million members costs a few windows of its
/// bytes and no array of its members.
struct StreamedPack: Sendable {
    let path: String
    let directory: ZipDirectory
    let sha256: [UInt8]
    let size: UInt64
    let description: PackDescription?
    /// The first member, in central-directory order, whose path makes no
    /// valid index key under the ID the install resolved, and why; for the
    /// install to throw once it has resolved that ID itself.
    let keyProblem: (path: String, reason: StoreError.PathProblem)?
    private let mapping: Mapping
    /// The members as the checks' first walk saw them, for a pack of at
    /// most `holding` members (``AssetStore/Options/installHeldMembers``): the later walks (data, index) go over
    /// this array instead of reading and checking every record again —
    /// a third of a 100,000-member install. `nil` for a larger pack, whose
    /// walks read the records again and hold nothing.
    private let held: [ArchiveEntry]?


    /// Keeps the staged file mapped for the index pass.
    private final class Mapping: @unchecked Sendable {
        // Read-only pages, never remapped while this lives.
        let region: MappedRegion
        init(_ region: consuming MappedRegion) { self.region = region }
    }

    var memberCount: Int { directory.memberCount }
    /// Sum of the members' sizes.
    var totalSize: UInt64 { directory.totalSize }
    /// The ID a plain ZIP installs under (``PackFile/defaultID``).
    var defaultID: String { PackFile.defaultID(of: path) }

    /// Hands every member to `body`, in central-directory order, read again
    /// from the mapping (its pages dropped behind the walk). Each call walks
    /// from the first member.
    func forEachMember(_ body: (ArchiveEntry) throws(StoreError) -> Void) throws(StoreError) {
        try Self.forEach(held, of: directory, in: mapping.region.bytes, body)
    }

    /// Hands `body` the `held` entries, or, without them, every member of
    /// `directory` read again from `bytes` (pages dropped behind the walk).
    private static func forEach(
        _ held: [ArchiveEntry]?, of directory: ZipDirectory, in bytes: UnsafeRawBufferPointer,
        _ body: (ArchiveEntry) throws(StoreError) -> Void
    ) throws(StoreError) {
        if let held {
            for entry in held { try body(entry) }
            return
        }
        var entries = directory.entries(in: bytes, releasingPages: true)
        while true {
            let entry: ArchiveEntry?
            do { entry = try entries.next() } catch { throw .archive(error) }
            guard let entry else { return }
            try body(entry)
        }
    }

    /// Checks `descriptor` as ``PackFile/validate(descriptor:path:limits:verifiedSHA256:progress:)``
    /// does, refusing what it refuses with the same errors in the same order.
    /// Members are checked in two walks of the directory: the structure and
    /// the limits, then the data, during which each path is also checked as
    /// an index key under the ID `installingAs` gives for the pack's recorded
    /// manifest (`nil`: the install will refuse the ID; no key is checked).
    /// A pack of at most `heldLimit` members keeps the first walk's entries
    /// and goes over them instead of reading the records again.
    static func validate(
        descriptor: borrowing FileDescriptor, path: String, limits: PackLimits, verifiedSHA256: [UInt8]?,
        holding heldLimit: Int, progress: ((InstallProgress) -> Void)?, installingAs: (PackDescription?) -> String?
    ) throws(StoreError) -> StreamedPack {
        let region = try PackFile.map(descriptor, path: path)
        let bytes = region.bytes
        var check = PackLimits.Check(limits)
        var held: [ArchiveEntry]? = []
        let directory: ZipDirectory
        do {
            directory = try ZipDirectory.scan(bytes, name: path, releasingPages: true) { entry in
                check.add(entry)
                guard held != nil else { return }
                if held!.count < heldLimit { held!.append(entry) } else { held = nil }
            }
        } catch {
            throw .archive(error)
        }
        try check.finish(path: path)
        // The SHA-256 on a thread of its own while the data is checked (the
        // two passes are each bound by a CPU), unless the caller wants
        // progress reported on its thread or runs at background priority.
        let hashing = verifiedSHA256 == nil && progress == nil && !BackgroundWork.isCurrent
            ? ConcurrentHash(try PackFile.map(descriptor, path: path)) : nil
        defer { hashing?.cancel() }
        // Decoded now for the ID the keys are checked under, thrown where
        // the whole-array check throws it: after the members' data.
        let described = Result { () throws(StoreError) in
            try PackDescription.decode(archiveComment: directory.comment, archive: path)
        }
        var id: String?
        if case .success(let description) = described { id = installingAs(description) }
        var keyProblem: (path: String, reason: StoreError.PathProblem)?
        var meter = ProgressMeter.install(.validating, total: directory.storedSize, reportingTo: progress)
        var behind = ReadBehind(mapping: bytes)
        try forEach(held, of: directory, in: bytes) { (entry) throws(StoreError) in
            do throws(ArchiveError) { try ZipArchive.verify(entry, in: bytes, archive: path, readBehind: &behind) } catch { throw .archive(error) }
            meter?.advance(by: entry.compressedSize)
            if keyProblem == nil, let id, let problem = IndexSchema.keyProblem(pack: id, path: entry.path) {
                keyProblem = (entry.path, problem)
            }
        }
        behind.finish(at: bytes.count)
        meter?.finish()
        let description = try described.get()
        let sha256 = verifiedSHA256 ?? hashing?.result() ?? PackFile.hash(bytes, progress: progress)
        return StreamedPack(
            path: path, directory: directory, sha256: sha256, size: UInt64(bytes.count), description: description,
            keyProblem: keyProblem, mapping: Mapping(region), held: held)
    }
}

/// The SHA-256 of a file, hashed on a thread of its own from a mapping of
/// its own (so that its pages, dropped behind the hash, are not the ones
/// the caller's walk reads), while the caller goes on: an install's, and
/// `verify --deep`'s (``ArchiveScan``).
final class ConcurrentHash: @unchecked Sendable {
    // Unchecked: `digest` is written by the thread before it leaves the
    // group and read only after waiting on it; `region` is immutable.
    private let region: MappedRegion
    private let stop = Atomic<Bool>(false)
    private let done = DispatchGroup()
    private var digest: [UInt8]?

    init(_ region: consuming MappedRegion) {
        self.region = region
        done.enter()
        // A thread, not a Dispatch queue: libdispatch traps when its worker
        // cannot make an epoll descriptor (EMFILE), and a verify or install
        // out of descriptors must fail with an error, not a crash.
        let thread = Thread { [self] in
            digest = PackFile.hash(self.region.bytes, progress: nil, until: { self.stop.load(ordering: .relaxed) })
            done.leave()
        }
        thread.start()
    }

    /// The digest, once the thread is done.
    func result() -> [UInt8]? {
        done.wait()
        return digest
    }

    /// Stops the thread at its next piece and waits for it.
    func cancel() {
        stop.store(true, ordering: .relaxed)
        done.wait()
    }
}

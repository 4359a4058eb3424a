import Foundation
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
    public var defaultID: String {
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
        let status: FileStatus
        do { status = try descriptor.status() } catch { throw .system(error.with(operation: "stat", path: path)) }
        guard status.isRegularFile else { throw .notAFile(path) }
        let region: MappedRegion
        do { region = try MappedRegion(mapping: descriptor, count: Int(status.size)) } catch {
            throw .system(error.with(operation: "mmap", path: path))
        }
        region.advise(.sequential)
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
        return PackFile(path: path, archive: archive, sha256: sha256, size: UInt64(status.size), description: description)
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
        var meter = ProgressMeter.install(.hashing, total: UInt64(bytes.count), reportingTo: progress)
        var behind = ReadBehind(mapping: bytes)
        var hasher = SHA256()
        var offset = 0
        while offset < bytes.count {
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

    /// The most bytes hashed between two progress reports.
    private static let hashPiece = 4 << 20
}

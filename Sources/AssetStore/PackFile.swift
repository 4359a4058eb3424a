import Foundation
public import AssetArchive
public import AssetSystem

/// A pack file that has been checked end to end: its ZIP structure, every
/// member's data (CRC-32, inflated to exactly its declared size), its SHA-256,
/// and its recorded manifest, if it has one.
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

    /// Checks the file at `path`. See ``validate(descriptor:path:)``.
    public static func validate(path: String) throws(StoreError) -> PackFile {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path) } catch { throw .system(error) }
        return try validate(descriptor: fd, path: path)
    }

    /// Checks the open file `descriptor`, named `path` in errors: maps it,
    /// parses and validates the ZIP structure, checks every member's data, and
    /// hashes the whole file.
    ///
    /// - Throws: `StoreError.notAFile` for a non-regular file, `.archive`
    ///   with the first problem found, `.invalidRecordedManifest`, `.system`.
    public static func validate(descriptor: borrowing FileDescriptor, path: String) throws(StoreError) -> PackFile {
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
        do {
            archive = try ZipArchive.parse(bytes, name: path)
            for entry in archive.entries {
                try ZipArchive.verify(entry, in: bytes, archive: path)
            }
        } catch {
            throw .archive(error)
        }
        let description = try PackDescription.decode(archiveComment: archive.comment, archive: path)
        return PackFile(path: path, archive: archive, sha256: SHA256.hash(bytes), size: UInt64(status.size), description: description)
    }
}

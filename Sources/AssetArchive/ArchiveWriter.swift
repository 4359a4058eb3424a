import AssetSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes pack archives: standard ZIP files that are deterministic and
/// ready to be mapped.
///
/// The same members give the same bytes, whatever order they are given in:
/// members are sorted by the bytes of their paths, every header carries the
/// DOS time 1980-01-01 00:00, "version made by" Unix, mode 0o100644 and no
/// timestamp fields, and deflate runs at a fixed level.
/// Stored members' data is aligned, with padding in a local extra field of
/// ID 0xD935 as Android's zipalign writes it: to 16 bytes, and to the page
/// size for members of 64 KiB and more. Names that are not ASCII get flag
/// bit 11 (UTF-8). ZIP64 records are written when a size, an offset or the
/// member count needs them. No data descriptors are used.
public struct ArchiveWriter {
    /// How to store a member.
    public enum Compression: Sendable, Hashable {
        /// Stored for already-compressed media (``storedExtensions``) and
        /// for members under ``smallMemberLimit`` bytes; otherwise deflated,
        /// unless deflate does not save at least 3 %.
        case automatic
        /// Always stored.
        case stored
        /// Always deflated, even when that makes the member larger.
        case deflated
    }

    /// Where a member's bytes come from.
    public enum Source: Sendable, Hashable {
        /// The regular file at this path, read in chunks (never whole when large).
        case file(String)
        /// These bytes.
        case bytes([UInt8])
    }

    /// One member to write.
    public struct Member: Sendable, Hashable {
        /// The member's path in the archive; it must pass ``MemberPath``'s rules.
        public var path: String
        /// Where its bytes come from.
        public var source: Source
        /// How to store it.
        public var compression: Compression

        /// A member at `path` holding the bytes of `source`.
        public init(path: String, source: Source, compression: Compression = .automatic) {
            self.path = path
            self.source = source
            self.compression = compression
        }
    }

    /// Writes `members` as a new archive at `path`, replacing any file there.
    ///
    /// The archive is written to a temporary file beside `path`, synced,
    /// parsed back, then renamed over `path` and the directory synced; a
    /// failure leaves `path` untouched and removes the temporary file.
    ///
    /// - Parameters:
    ///   - members: the members, in any order; paths must be unique.
    ///   - comment: the archive comment: at most 65,535 bytes, without `PK\5\6`.
    ///   - path: where the archive goes; also how errors name it.
    ///   - progress: called on this thread with the input bytes consumed so
    ///     far and their total, the sum of the members' sizes (source files
    ///     are looked at before writing starts, and one whose size has changed
    ///     by the time it is read is refused as `changedWhileReading`). It is
    ///     called with 0 first, then as members' bytes are consumed, at most
    ///     256 times more, and last with `done == total` once every member is
    ///     written (before the archive is synced and checked). `nil`: no
    ///     report, no look ahead.
    /// - Returns: the written archive, parsed.
    /// - Throws: ``ArchiveError/unsafePath(archive:path:reason:)`` or
    ///   ``ArchiveError/duplicateMember(archive:path:)``,
    ///   ``ArchiveError/caseCollision(archive:path:with:)`` or
    ///   ``ArchiveError/fileDirectoryCollision(archive:file:member:)`` for bad member paths,
    ///   ``ArchiveError/unreadableSource(archive:path:source:problem:)`` for a
    ///   source file that cannot be read, ``ArchiveError/invalidComment(archive:length:)``,
    ///   and ``ArchiveError/io(archive:error:)`` when writing fails.
    @discardableResult
    public static func write(
        _ members: [Member], comment: [UInt8] = [], to path: String,
        progress: ((_ done: UInt64, _ total: UInt64) -> Void)? = nil
    ) throws(ArchiveError) -> ZipArchive {
        guard comment.count <= Int(ZipFormat.max16), !containsEndSignature(comment) else {
            throw .invalidComment(archive: path, length: comment.count)
        }
        let ordered = try order(members, archive: path)
        var sizes: [UInt64]?
        var meter: ProgressMeter?
        if let progress {
            let found = try inputSizes(of: ordered, archive: path)
            sizes = found
            meter = ProgressMeter(total: found.reduce(0, +), report: progress)
        }
        let temporary = temporaryPath(beside: path)
        var output = try ArchiveOutput(creating: temporary, archive: path)
        do throws(ArchiveError) {
            var writer = try MemberWriter(archive: path)
            var centralDirectory: [UInt8] = []
            for (index, (name, member)) in ordered.enumerated() {
                let written = try writeMember(
                    member, name: name, expectedSize: sizes?[index], archive: path, with: &writer, to: &output, meter: &meter)
                HeaderEncoder.appendCentralRecord(written, to: &centralDirectory)
            }
            meter?.finish()
            let directoryOffset = output.position
            try output.append(centralDirectory)
            try output.append(HeaderEncoder.endRecords(
                count: UInt64(ordered.count), offset: directoryOffset, size: UInt64(centralDirectory.count), comment: comment))
            try output.finish()
            let archive = try ZipArchive.open(path: temporary, name: path)
            do {
                try FileSystem.rename(temporary, to: path)
                try FileSystem.syncDirectory(directory(of: path))
            } catch {
                throw .io(archive: path, error: error)
            }
            return archive
        } catch {
            try? FileSystem.unlink(temporary)
            throw error
        }
    }

    /// Writes one member from its source, counting its bytes on `meter` as
    /// they are consumed. A file source must still have `expectedSize` bytes
    /// when one is given.
    private static func writeMember(
        _ member: Member, name: [UInt8], expectedSize: UInt64?, archive: String,
        with writer: inout MemberWriter, to output: inout ArchiveOutput, meter: inout ProgressMeter?
    ) throws(ArchiveError) -> WrittenMember {
        switch member.source {
        case .bytes(let bytes):
            let plan = plan(member.compression, path: member.path, size: UInt64(bytes.count))
            let written = try bytes.withBytes { data throws(ArchiveError) in
                try writer.write(name: name, bytes: data, plan: plan, to: &output)
            }
            meter?.advance(by: UInt64(bytes.count))
            return written
        case .file(let source):
            let file = try SourceFile(opening: source, member: member.path, archive: archive)
            if let expectedSize, file.size != expectedSize {
                throw .unreadableSource(archive: archive, path: member.path, source: source, problem: .changedWhileReading)
            }
            let plan = plan(member.compression, path: member.path, size: file.size)
            guard file.size <= MemberWriter.inMemoryLimit else {
                return try writer.write(name: name, file: file, plan: plan, to: &output, meter: &meter)
            }
            let written = try file.readAll().withBytes { data throws(ArchiveError) in
                try writer.write(name: name, bytes: data, plan: plan, to: &output)
            }
            meter?.advance(by: file.size)
            return written
        }
    }

    /// The size of each member's bytes, in order; source files are looked at
    /// without being opened.
    private static func inputSizes(of ordered: [([UInt8], Member)], archive: String) throws(ArchiveError) -> [UInt64] {
        var sizes: [UInt64] = []
        sizes.reserveCapacity(ordered.count)
        for (_, member) in ordered {
            switch member.source {
            case .bytes(let bytes): sizes.append(UInt64(bytes.count))
            case .file(let source): sizes.append(try SourceFile.size(of: source, member: member.path, archive: archive))
            }
        }
        return sizes
    }

    /// The members with their paths' bytes, checked and sorted by those bytes.
    private static func order(_ members: [Member], archive: String) throws(ArchiveError) -> [([UInt8], Member)] {
        var seen = Set<String>(minimumCapacity: members.count)
        var named: [([UInt8], Member)] = []
        named.reserveCapacity(members.count)
        for member in members {
            let name = Array(member.path.utf8)
            if let problem = name.withUnsafeBytes({ MemberPath.problem(in: $0) }) {
                throw .unsafePath(archive: archive, path: member.path, reason: problem)
            }
            guard name.count <= Int(ZipFormat.max16) else {
                throw .unsafePath(archive: archive, path: member.path, reason: .tooLong)
            }
            guard seen.insert(member.path).inserted else {
                throw .duplicateMember(archive: archive, path: member.path)
            }
            named.append((name, member))
        }
        try NameCollisions.check(members.map(\.path), archive: archive)
        named.sort { $0.0.lexicographicallyPrecedes($1.0) }
        return named
    }

    /// A new name in the directory of `path`, hidden and unlikely to clash.
    private static func temporaryPath(beside path: String) -> String {
        let directory = directory(of: path)
        let base = path.split(separator: "/").last.map(String.init) ?? "archive"
        let tag = String(UInt64.random(in: 0 ... .max), radix: 36)
        return "\(directory)/.\(base).\(getpid()).\(tag).tmp"
    }

    /// The directory part of `path`: "." for a bare name, "/" for a file in the root.
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func containsEndSignature(_ comment: [UInt8]) -> Bool {
        guard comment.count >= 4 else { return false }
        return (0 ... comment.count - 4).contains { i in
            comment[i] == 0x50 && comment[i + 1] == 0x4b && comment[i + 2] == 0x05 && comment[i + 3] == 0x06
        }
    }
}

import AssetSystem

/// A member's source file, open for reading in chunks.
struct SourceFile: ~Copyable {
    private let descriptor: FileDescriptor
    /// The file's size when it was opened: exactly the bytes the member gets.
    let size: UInt64
    /// The source file's path.
    let path: String
    private let member: String
    private let archive: String

    /// The size of the pieces ``forEachChunk(_:)`` reads.
    static let chunkSize = 1 << 20

    /// Opens the regular file `source` for the member `member`.
    init(opening source: String, member: String, archive: String) throws(ArchiveError) {
        func failure(_ problem: ArchiveError.SourceProblem) -> ArchiveError {
            .unreadableSource(archive: archive, path: member, source: source, problem: problem)
        }
        // Look before opening: opening a FIFO for reading would block.
        _ = try Self.size(of: source, member: member, archive: archive)
        let opened: FileDescriptor
        do { opened = try FileDescriptor.open(source) } catch { throw failure(.system(error)) }
        let status: FileStatus
        do { status = try opened.status() } catch { throw failure(.system(error)) }
        guard status.isRegularFile else { throw failure(.notRegularFile) }
        descriptor = opened
        size = UInt64(status.size)
        self.path = source
        self.member = member
        self.archive = archive
    }

    /// The size of the regular file `source`, looked up without opening it.
    static func size(of source: String, member: String, archive: String) throws(ArchiveError) -> UInt64 {
        func failure(_ problem: ArchiveError.SourceProblem) -> ArchiveError {
            .unreadableSource(archive: archive, path: member, source: source, problem: problem)
        }
        let found: FileStatus?
        do { found = try FileDescriptor.status(of: source) } catch { throw failure(.system(error)) }
        guard let found else {
            throw failure(.system(Errno(Errno.noSuchFile.rawValue, operation: "stat", path: source)))
        }
        guard found.isRegularFile else { throw failure(.notRegularFile) }
        return UInt64(found.size)
    }

    /// Reads the whole file into memory.
    func readAll() throws(ArchiveError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(size))
        try forEachChunk { chunk throws(ArchiveError) in bytes.append(contentsOf: chunk) }
        return bytes
    }

    /// Hands the file's `size` bytes to `body` in pieces of at most
    /// ``chunkSize``. Throws `changedWhileReading` if the file is shorter
    /// than it was, or has grown, by the end.
    func forEachChunk(_ body: (UnsafeRawBufferPointer) throws(ArchiveError) -> Void) throws(ArchiveError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: UInt64 = 0
        while offset < size {
            let want = Int(min(UInt64(buffer.count), size - offset))
            let got: Int
            do {
                got = try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]), at: Int64(offset))
            } catch {
                throw .unreadableSource(archive: archive, path: member, source: path, problem: .system(error))
            }
            guard got == want else { throw changed() }
            try body(UnsafeRawBufferPointer(rebasing: buffer[..<got]))
            offset += UInt64(got)
        }
        let now: FileStatus
        do { now = try descriptor.status() } catch {
            throw .unreadableSource(archive: archive, path: member, source: path, problem: .system(error))
        }
        guard UInt64(now.size) == size else { throw changed() }
    }

    private func changed() -> ArchiveError {
        .unreadableSource(archive: archive, path: member, source: path, problem: .changedWhileReading)
    }
}

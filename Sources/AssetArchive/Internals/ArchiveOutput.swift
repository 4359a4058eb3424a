import AssetSystem

/// The file an archive is written to: appends go through a buffer, and
/// members whose headers are written after their data use positioned
/// writes once the buffer is flushed.
struct ArchiveOutput: ~Copyable {
    private let descriptor: FileDescriptor
    /// How errors name the archive.
    let archive: String
    private var buffer: [UInt8] = []
    private var bufferStart: UInt64 = 0
    private static let capacity = 1 << 20

    /// Creates the new file `path`, which must not exist.
    init(creating path: String, archive: String) throws(ArchiveError) {
        do {
            descriptor = try FileDescriptor.open(path, [.readWrite, .create, .exclusive], permissions: 0o644)
        } catch {
            throw .io(archive: archive, error: error)
        }
        self.archive = archive
        buffer.reserveCapacity(Self.capacity)
    }

    /// The offset the next appended byte will have.
    var position: UInt64 { bufferStart + UInt64(buffer.count) }

    /// Appends `bytes` at ``position``.
    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(ArchiveError) {
        if buffer.count + bytes.count > Self.capacity { try flush() }
        if bytes.count >= Self.capacity {
            try write(bytes, at: bufferStart)
            bufferStart += UInt64(bytes.count)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// Appends `bytes` at ``position``.
    mutating func append(_ bytes: [UInt8]) throws(ArchiveError) {
        try bytes.withBytes { b throws(ArchiveError) in try append(b) }
    }

    /// Writes the buffered bytes to the file.
    mutating func flush() throws(ArchiveError) {
        guard !buffer.isEmpty else { return }
        let start = bufferStart
        try buffer.withBytes { b throws(ArchiveError) in try write(b, at: start) }
        bufferStart += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes `bytes` at `offset`, bypassing the buffer, which must be
    /// empty (after ``flush()``).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(ArchiveError) {
        do { try descriptor.write(bytes, at: Int64(offset)) } catch { throw .io(archive: archive, error: error) }
    }


    /// Moves ``position`` to `offset` after positioned writes; the buffer
    /// must be empty.
    mutating func skip(to offset: UInt64) {
        precondition(buffer.isEmpty, "skip(to:) needs a flushed buffer")
        bufferStart = offset
    }

    /// Flushes, cuts the file at ``position`` (dropping anything an abandoned
    /// attempt left beyond it), and syncs it to storage.
    mutating func finish() throws(ArchiveError) {
        try flush()
        do {
            try descriptor.resize(to: Int64(position))
            try descriptor.sync()
        } catch {
            throw .io(archive: archive, error: error)
        }
    }
}

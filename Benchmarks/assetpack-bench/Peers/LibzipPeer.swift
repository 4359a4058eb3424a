import CLibzip

/// libzip on the same ZIP file as the pack: the archive opened once
/// (`zip_open`, which reads the central directory and hashes the names),
/// then each member read by name: `zip_fopen`, `zip_fread` into a buffer,
/// `zip_fclose`. libzip inflates deflated members and checks their CRC-32.
final class LibzipArchive {
    private let archive: OpaquePointer

    init(path: String) throws {
        var error: Int32 = 0
        guard let za = zip_open(path, ZIP_RDONLY, &error) else { throw PeerError("zip_open \(path): \(error)") }
        archive = za
    }

    deinit { zip_discard(archive) }

    /// Reads member `name` into `buffer`; returns the byte count.
    @inline(__always)
    func read(_ name: String, into buffer: ByteBuffer) throws -> Int {
        guard let file = name.withCString({ zip_fopen(archive, $0, 0) }) else { throw PeerError("zip_fopen \(name)") }
        let n = zip_fread(file, buffer.pointer, zip_uint64_t(buffer.capacity))
        zip_fclose(file)
        guard n >= 0 else { throw PeerError("zip_fread \(name)") }
        return Int(n)
    }
}

/// A member read by name from an archive libzip keeps open.
struct LibzipRead: Operation {
    let archive: LibzipArchive
    let names: [String]
    let buffer: ByteBuffer
    let consume: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let n = try archive.read(names[item], into: buffer)
        return consume ? Int(truncatingIfNeeded: sumBytes(buffer.pointer, n)) : n
    }
}

/// Opening an archive and reading one member: `zip_open`, `zip_fopen`,
/// `zip_fread`, `zip_fclose`, `zip_discard`.
struct LibzipOpenAndRead: Operation {
    let path: String
    let names: [String]
    let buffer: ByteBuffer

    mutating func run(_ item: Int) throws -> Int {
        try LibzipArchive(path: path).read(names[item], into: buffer)
    }
}

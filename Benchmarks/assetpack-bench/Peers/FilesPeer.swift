#if canImport(Glibc)
import Glibc
#endif

/// Plain files extracted on disk, what a user picks instead of a pack:
/// `open`, one `read` into a reused buffer, `close`. Paths are Swift strings,
/// as for every contender; `withCString` passes a native string's own
/// NUL-terminated bytes without a copy.
///
/// Generous to the peer: the buffer is allocated once and large enough for
/// any member, so a single `read` returns the whole file and no `fstat` is
/// needed.
struct FilesRead: Operation {
    let paths: [String]
    let buffer: ByteBuffer
    let consume: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let fd = paths[item].withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw PeerError("open \(paths[item]): errno \(errno)") }
        let n = read(fd, buffer.pointer, buffer.capacity)
        close(fd)
        guard n >= 0 else { throw PeerError("read: errno \(errno)") }
        return consume ? Int(truncatingIfNeeded: sumBytes(buffer.pointer, n)) : n
    }
}

/// A large file read whole: `open`, `read` until the end into a buffer of
/// its size, `close`, then (when consuming) the bytes summed.
struct FilesReadWhole: Operation {
    let path: String
    let buffer: ByteBuffer
    let consume: Bool

    mutating func run(_ item: Int) throws -> Int {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PeerError("open: errno \(errno)") }
        defer { close(fd) }
        var total = 0
        while total < buffer.capacity {
            let n = read(fd, buffer.pointer + total, buffer.capacity - total)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw PeerError("read: errno \(errno)") }
            if n == 0 { break }
            total += n
        }
        return consume ? Int(truncatingIfNeeded: sumBytes(buffer.pointer, total)) : total
    }
}

/// What a user does instead of asking for a descriptor: `open` the
/// extracted file (and, here, `close` it again).
struct FilesOpen: Operation {
    let paths: [String]

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let fd = paths[item].withCString { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw PeerError("open: errno \(errno)") }
        close(fd)
        return Int(fd)
    }
}

/// Writes `bytes` to a new file at `path`, creating it (or truncating it).
func writeFile(_ path: String, _ bytes: UnsafeRawBufferPointer) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw PeerError("create \(path): errno \(errno)") }
    defer { close(fd) }
    var done = 0
    while done < bytes.count {
        let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { throw PeerError("write \(path): errno \(errno)") }
        done += n
    }
}

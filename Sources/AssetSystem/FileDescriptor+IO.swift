internal import CAssetShim
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `fstat` says of a file.
public struct FileStatus: Sendable, Equatable {
    /// `st_mode`: type and permission bits.
    public var mode: UInt32
    /// Size in bytes.
    public var size: Int64
    public var inode: UInt64
    public var device: UInt64

    /// Whether this is a regular file.
    public var isRegularFile: Bool { mode & S_IFMT == S_IFREG }
    /// Whether this is a directory.
    public var isDirectory: Bool { mode & S_IFMT == S_IFDIR }
    /// Whether this is a symbolic link (only from ``FileDescriptor/status(of:relativeTo:followingLinks:)``).
    public var isSymbolicLink: Bool { mode & S_IFMT == S_IFLNK }
    /// Whether this is a Unix domain socket (only from ``FileDescriptor/status(of:relativeTo:followingLinks:)``).
    public var isSocket: Bool { mode & S_IFMT == S_IFSOCK }
}

extension FileDescriptor {
    /// The file's type, size and identity. The corresponding C function is `fstat`.
    public func status() throws(Errno) -> FileStatus {
        var s = FileStatus(mode: 0, size: 0, inode: 0, device: 0)
        let fd = rawValue
        _ = try valueOrErrno("fstat") { cas_fstat(fd, &s.mode, &s.size, &s.inode, &s.device) }
        return s
    }

    /// The file's owner: its user and group. The corresponding C function
    /// is `fstat`.
    public func owner() throws(Errno) -> (uid: UInt32, gid: UInt32) {
        var uid: UInt32 = 0, gid: UInt32 = 0
        let fd = rawValue
        _ = try valueOrErrno("fstat") { cas_fstat_owner(fd, &uid, &gid) }
        return (uid, gid)
    }

    /// The file's modification time, in whole seconds since 1970 UTC
    /// (rounded down). The corresponding C function is `fstat`.
    public func modificationSeconds() throws(Errno) -> Int64 {
        var mode: UInt32 = 0, size: Int64 = 0, inode: UInt64 = 0, seconds: Int64 = 0, nanoseconds: Int64 = 0
        let fd = rawValue
        _ = try valueOrErrno("fstat") { cas_fstat_mtime(fd, &mode, &size, &inode, &seconds, &nanoseconds) }
        return seconds
    }

    /// The file's modification time in seconds since 1970 UTC, with its
    /// fraction (to the nanosecond the file system keeps). The
    /// corresponding C function is `fstat`.
    public func modificationTime() throws(Errno) -> Double {
        var mode: UInt32 = 0, size: Int64 = 0, inode: UInt64 = 0, seconds: Int64 = 0, nanoseconds: Int64 = 0
        let fd = rawValue
        _ = try valueOrErrno("fstat") { cas_fstat_mtime(fd, &mode, &size, &inode, &seconds, &nanoseconds) }
        return Double(seconds) + Double(nanoseconds) / 1e9
    }

    /// Sets the file's modification time to now. The corresponding C
    /// function is `futimens` with `UTIME_NOW`.
    public func touchModificationTime() throws(Errno) {
        let fd = rawValue
        _ = try valueOrErrno("futimens") { cas_touch_mtime(fd) }
    }

    /// Sets the file's modification time to `seconds` since 1970 UTC. The
    /// corresponding C function is `futimens`.
    public func setModificationTime(seconds: Int64) throws(Errno) {
        let fd = rawValue
        _ = try valueOrErrno("futimens") { cas_set_mtime(fd, seconds) }
    }

    /// The type, size and identity of `path`, or `nil` if nothing is there.
    /// The corresponding C function is `fstatat`.
    public static func status(
        of path: String, relativeTo anchor: DirectoryAnchor = .workingDirectory, followingLinks: Bool = true
    ) throws(Errno) -> FileStatus? {
        var s = FileStatus(mode: 0, size: 0, inode: 0, device: 0)
        do {
            _ = try valueOrErrno("stat", path: path) {
                cas_fstatat(anchor.raw, path, followingLinks ? 0 : 1, &s.mode, &s.size, &s.inode, &s.device)
            }
        } catch where error == .noSuchFile {
            return nil
        }
        return s
    }

    /// Reads into `buffer` from `offset` until it is full or the file ends.
    /// Returns the number of bytes read. The corresponding C function is `pread`.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let fd = rawValue
        return try valueOrErrno("pread") { cas_pread_full(fd, base, buffer.count, offset) }
    }

    /// Reads at most `count` bytes from `offset` (fewer at end of file).
    public func read(count: Int, at offset: Int64) throws(Errno) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        let n = try result.withUnsafeMutableBytes { b in Result { () throws(Errno) in try read(into: b, at: offset) } }.get()
        result.removeSubrange(n...)
        return result
    }

    /// Reads once from the file position. Returns 0 at end of file.
    /// The corresponding C function is `read`.
    public func readSome(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        let fd = rawValue
        return try valueOrErrno("read") { cas_read(fd, base, buffer.count) }
    }

    /// Reads from the file position to the end of the file.
    public func readToEnd() throws(Errno) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = try chunk.withUnsafeMutableBytes { b in Result { () throws(Errno) in try readSome(into: b) } }.get()
            if n == 0 { return result }
            result.append(contentsOf: chunk[..<n])
        }
    }

    /// Writes all of `bytes` at `offset`. The corresponding C function is `pwrite`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let fd = rawValue
        _ = try valueOrErrno("pwrite") { cas_pwrite_full(fd, base, bytes.count, offset) }
    }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: [UInt8], at offset: Int64) throws(Errno) {
        try bytes.withUnsafeBytes { b in Result { () throws(Errno) in try write(b, at: offset) } }.get()
    }

    /// Writes all of `bytes` at the file position. The corresponding C function is `write`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let fd = rawValue
        _ = try valueOrErrno("write") { cas_write_full(fd, base, bytes.count) }
    }

    /// Writes all of `bytes` at the file position.
    public func write(_ bytes: some Sequence<UInt8>) throws(Errno) {
        let array = Array(bytes)
        try array.withUnsafeBytes { b in Result { () throws(Errno) in try write(b) } }.get()
    }

    /// Moves the file position to `offset` from the start. Returns it.
    /// The corresponding C function is `lseek`.
    @discardableResult
    public func seek(to offset: Int64) throws(Errno) -> Int64 {
        let fd = rawValue
        return try valueOrErrno("lseek") { cas_lseek(fd, offset, SEEK_SET) }
    }

    /// Flushes data and metadata to storage. The corresponding C function is `fsync`.
    public func sync() throws(Errno) {
        let fd = rawValue
        _ = try valueOrErrno("fsync") { cas_fsync(fd) }
    }

    /// Starts writing the file's dirty pages in `offset ..< offset + count`
    /// to storage, without waiting, so that a later ``sync()`` waits only for
    /// what is still in flight. Makes nothing durable by itself. The
    /// corresponding C function is `sync_file_range` with
    /// `SYNC_FILE_RANGE_WRITE`.
    public func startWriteback(from offset: Int64, count: Int64) throws(Errno) {
        let fd = rawValue
        _ = try valueOrErrno("sync_file_range") { cas_start_writeback(fd, offset, count) }
    }

    /// Allocates the file's blocks from `offset` for `count` bytes, without
    /// changing its length: a later write there, also through a shared
    /// mapping, needs no space the file system may no longer have. Blocks
    /// already allocated stay as they are.
    ///
    /// - Throws: `Errno`: `.noSpace` when the file system is full,
    ///   `.notSupported` where it cannot allocate ahead.
    ///   The corresponding C function is `fallocate` with `FALLOC_FL_KEEP_SIZE`.
    public func allocate(from offset: Int64, count: Int64) throws(Errno) {
        let fd = rawValue
        _ = try valueOrErrno("fallocate") { cas_allocate(fd, offset, count) }
    }

    /// Frees the file's blocks from `offset` for `count` bytes, without
    /// changing its length: that range then reads as zeros and takes no
    /// space.
    ///
    /// - Throws: `Errno`; `.notSupported` where the file system cannot.
    ///   The corresponding C function is `fallocate` with
    ///   `FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE`.
    public func punchHole(from offset: Int64, count: Int64) throws(Errno) {
        let fd = rawValue
        _ = try valueOrErrno("fallocate") { cas_punch_hole(fd, offset, count) }
    }

    /// Sets the file's length. The corresponding C function is `ftruncate`.
    public func resize(to length: Int64) throws(Errno) {
        let fd = rawValue
        _ = try valueOrErrno("ftruncate") { cas_ftruncate(fd, length) }
    }

    /// Copies `count` bytes from `source` at `sourceOffset` to this file at
    /// `offset`, in the kernel where it can (`copy_file_range`), by `pread` and
    /// `pwrite` where it cannot.
    public func copy(
        count: Int64, from source: borrowing FileDescriptor, at sourceOffset: Int64, to offset: Int64
    ) throws(Errno) {
        var (inOff, outOff, left) = (sourceOffset, offset, count)
        let (inFD, outFD) = (source.rawValue, rawValue)
        while left > 0 {
            let n = cas_copy_file_range(inFD, &inOff, outFD, &outOff, Int(min(left, 1 << 30)))
            if n > 0 { left -= Int64(n); continue }
            if n == 0 { throw Errno.ioError.with(operation: "copy_file_range: source ended early") }
            let code = Int32(-n)
            if code == Errno.interrupted.rawValue { continue }
            guard [Errno.crossDevice, .noSys, .invalidArgument, .notSupported].contains(Errno(code)) else {
                throw Errno(code, operation: "copy_file_range")
            }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while left > 0 {
                let want = Int(min(left, Int64(buffer.count)))
                let got = try buffer.withUnsafeMutableBytes { b in
                    Result { () throws(Errno) in try source.read(into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]), at: inOff) }
                }.get()
                if got == 0 { throw Errno.ioError.with(operation: "copy: source ended early") }
                try buffer.withUnsafeBytes { b in
                    Result { () throws(Errno) in try write(UnsafeRawBufferPointer(rebasing: b[..<got]), at: outOff) }
                }.get()
                inOff += Int64(got); outOff += Int64(got); left -= Int64(got)
            }
        }
    }
}

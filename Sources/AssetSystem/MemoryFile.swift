internal import CAssetShim

/// Anonymous in-memory files (`memfd`) that are filled once and then sealed,
/// so a descriptor of one can be handed to another process that cannot change
/// the bytes behind it.
public enum MemoryFile {
    /// Creates a memory file of `count` bytes, lets `fill` write them in place
    /// (through a temporary writable mapping, no intermediate buffer), seals
    /// the file against every change, and returns a read-only, close-on-exec
    /// descriptor of it at offset 0.
    ///
    /// - Parameters:
    ///   - name: shown in `/proc/<pid>/fd` as `memfd:<name>`; for debugging only.
    ///   - fill: writes all `count` bytes of the buffer it is given.
    /// - Throws: `MemoryFileError.system` from `memfd_create`, `ftruncate`,
    ///   `mmap`, `fcntl` or `open`; `MemoryFileError.fill` with what `fill` threw.
    public static func sealed<E: Error>(
        name: String, count: Int, fill: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(MemoryFileError<E>) -> FileDescriptor {
        let writable: FileDescriptor
        do { writable = FileDescriptor(adopting: try valueOrErrno("memfd_create") { cas_memfd_create(name) }) } catch { throw .system(error) }
        do { try writable.resize(to: Int64(count)) } catch { throw .system(error) }
        let fd = writable.rawValue
        if count > 0 {
            var address: UnsafeMutableRawPointer?
            do { _ = try valueOrErrno("mmap") { cas_mmap_writable(fd, count, &address) } } catch { throw .system(error) }
            // The writable mapping must be gone before F_SEAL_WRITE is allowed.
            defer { _ = cas_munmap(address, count) }
            do { try fill(UnsafeMutableRawBufferPointer(start: address, count: count)) } catch { throw .fill(error) }
        }
        do {
            _ = try valueOrErrno("fcntl F_ADD_SEALS") { cas_memfd_seal(fd) }
            return try writable.reopenReadOnly()
        } catch { throw .system(error) }
    }

    /// Creates a sealed memory file holding a copy of `bytes`.
    /// See ``sealed(name:count:fill:)``.
    public static func sealed(name: String, copying bytes: UnsafeRawBufferPointer) throws(Errno) -> FileDescriptor {
        do {
            return try sealed(name: name, count: bytes.count) { (buffer: UnsafeMutableRawBufferPointer) throws(Never) in
                buffer.copyMemory(from: bytes)
            }
        } catch {
            switch error {
            case .system(let e): throw e
            }
        }
    }

    /// Creates a sealed memory file holding a copy of `bytes`.
    /// See ``sealed(name:count:fill:)``.
    public static func sealed(name: String, copying bytes: [UInt8]) throws(Errno) -> FileDescriptor {
        do {
            return try sealed(name: name, count: bytes.count) { (buffer: UnsafeMutableRawBufferPointer) throws(Never) in
                bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
            }
        } catch {
            switch error {
            case .system(let e): throw e
            }
        }
    }

    /// The seals on `descriptor` (`F_SEAL_*` bits; 0x0f is all four).
    /// The corresponding C function is `fcntl` with `F_GET_SEALS`.
    public static func seals(of descriptor: borrowing FileDescriptor) throws(Errno) -> Int32 {
        let fd = descriptor.rawValue
        return try valueOrErrno("fcntl F_GET_SEALS") { cas_memfd_seals(fd) }
    }
}

/// An error from ``MemoryFile/sealed(name:count:fill:)``: from the system, or
/// from the fill closure.
public enum MemoryFileError<Fill: Error>: Error {
    case system(Errno)
    case fill(Fill)
}

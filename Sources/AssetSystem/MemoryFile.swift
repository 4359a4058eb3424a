internal import CAssetShim

/// Anonymous in-memory files (`memfd`) that are filled once and then sealed,
/// so a descriptor of one can be handed to another process that cannot change
/// the bytes behind it.
public enum MemoryFile {
    /// Members up to this size are filled into an ordinary buffer and
    /// written into the memory file with one `write`; larger ones are filled
    /// through a temporary writable mapping of the file. The `write` is the
    /// faster of the two at every size measured: `mmap`, a page fault per
    /// page and the `munmap` (a TLB flush) came to 2–3× the `write` for
    /// 1–16 KiB and 1.2–1.6× for 1–16 MiB (docs/descriptors.md); above this
    /// size the buffer would hold the member's bytes twice while the file
    /// is made, so the mapping bounds the memory instead.
    public static let bufferedLimit = 8 << 20

    /// Creates a memory file of `count` bytes, lets `fill` write them,
    /// seals the file against every change, and returns a read-only,
    /// close-on-exec descriptor of it at offset 0.
    ///
    /// Up to ``bufferedLimit`` bytes, `fill` writes into an ordinary buffer
    /// that is then written into the file; above it, straight into the file
    /// through a temporary writable mapping (no second copy of the bytes).
    ///
    /// - Parameters:
    ///   - name: shown in `/proc/<pid>/fd` as `memfd:<name>`; for debugging only.
    ///   - fill: writes all `count` bytes of the buffer it is given.
    /// - Throws: `MemoryFileError.system` from `memfd_create`, `write`,
    ///   `ftruncate`, `mmap`, `fcntl` or `open`; `MemoryFileError.fill` with
    ///   what `fill` threw (before any memory file is made, for a buffered one).
    public static func sealed<E: Error>(
        name: String, count: Int, fill: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(MemoryFileError<E>) -> FileDescriptor {
        guard count > bufferedLimit else {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            defer { buffer.deallocate() }
            let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
            do { try fill(bytes) } catch { throw .fill(error) }
            do { return try sealed(name: name, copying: UnsafeRawBufferPointer(bytes)) } catch { throw .system(error) }
        }
        let writable: FileDescriptor
        do { writable = try create(name) } catch { throw .system(error) }
        do { try writable.resize(to: Int64(count)) } catch { throw .system(error) }
        let fd = writable.rawValue
        var address: UnsafeMutableRawPointer?
        do { _ = try valueOrErrno("mmap") { cas_mmap_writable(fd, count, &address) } } catch { throw .system(error) }
        do {
            // The writable mapping must be gone before F_SEAL_WRITE is allowed.
            defer { _ = cas_munmap(address, count) }
            do { try fill(UnsafeMutableRawBufferPointer(start: address, count: count)) } catch { throw .fill(error) }
        }
        do { return try seal(writable) } catch { throw .system(error) }
    }

    private static func create(_ name: String) throws(Errno) -> FileDescriptor {
        FileDescriptor(adopting: try valueOrErrno("memfd_create") { cas_memfd_create(name) })
    }

    /// Seals `writable` against every change and returns a read-only
    /// descriptor of it (a new open description: `writable` closes).
    private static func seal(_ writable: consuming FileDescriptor) throws(Errno) -> FileDescriptor {
        let fd = writable.rawValue
        _ = try valueOrErrno("fcntl F_ADD_SEALS") { cas_memfd_seal(fd) }
        return try writable.reopenReadOnly()
    }

    /// Creates a sealed memory file holding a copy of `bytes`.
    /// See ``sealed(name:count:fill:)``.
    /// Written with `write`, straight from `bytes`, at any size.
    public static func sealed(name: String, copying bytes: UnsafeRawBufferPointer) throws(Errno) -> FileDescriptor {
        let writable = try create(name)
        // A write to a memory file is never short but for ENOSPC/ENOMEM,
        // which it reports; the shim loops on short writes regardless.
        try writable.write(bytes)
        return try seal(writable)
    }

    /// Creates a sealed memory file holding a copy of `bytes`.
    /// See ``sealed(name:count:fill:)``.
    public static func sealed(name: String, copying bytes: [UInt8]) throws(Errno) -> FileDescriptor {
        let writable = try create(name)
        try writable.write(bytes, at: 0)
        return try seal(writable)
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

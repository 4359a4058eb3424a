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

    /// An empty memory file made ahead of use: its read-write descriptor,
    /// to fill and seal it, and the read-only, close-on-exec one it is
    /// handed out as once sealed. Opening the read-only one is a path
    /// lookup (`open` of `/proc/self/fd/N`); made ahead, it is off the path
    /// of whoever fills the file. Both close when the value goes.
    public struct Blank: ~Copyable, Sendable {
        let writable: FileDescriptor
        let readOnly: FileDescriptor

        /// Takes ownership of both descriptors, which must be the read-write
        /// and a read-only descriptor of one unsealed memory file made with
        /// `MFD_ALLOW_SEALING` and nothing written to it (as ``take()``
        /// gives them).
        public init(adoptingWritable writable: Int32, readOnly: Int32) {
            self.writable = FileDescriptor(adopting: writable)
            self.readOnly = FileDescriptor(adopting: readOnly)
        }

        init(writable: consuming FileDescriptor, readOnly: consuming FileDescriptor) {
            self.writable = writable
            self.readOnly = readOnly
        }

        /// Gives up ownership of both descriptors and returns their numbers.
        public consuming func take() -> (writable: Int32, readOnly: Int32) {
            (writable.take(), readOnly.take())
        }
    }

    /// A new empty memory file (`MFD_CLOEXEC | MFD_ALLOW_SEALING`) and a
    /// read-only descriptor of it.
    ///
    /// - Parameter name: shown in `/proc/<pid>/fd` as `memfd:<name>`; fixed
    ///   when the file is made; for debugging only.
    /// - Throws: `Errno` from `memfd_create` or `open`.
    public static func blank(name: String) throws(Errno) -> Blank {
        let writable = try create(name)
        let readOnly = try writable.reopenReadOnly()
        return Blank(writable: writable, readOnly: readOnly)
    }

    /// Creates a memory file of `count` bytes, lets `fill` write them,
    /// seals the file against every change, and returns a read-only,
    /// close-on-exec descriptor of it at offset 0.
    /// See ``sealed(count:in:fill:)``.
    ///
    /// - Parameters:
    ///   - name: shown in `/proc/<pid>/fd` as `memfd:<name>`; for debugging only.
    ///   - fill: writes all `count` bytes of the buffer it is given.
    public static func sealed<E: Error>(
        name: String, count: Int, fill: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(MemoryFileError<E>) -> FileDescriptor {
        try sealed(count: count, in: { () throws(Errno) in try blank(name: name) }, fill: fill)
    }

    /// Fills a memory file of `count` bytes that `blank` gives, seals it
    /// against every change, and returns its read-only, close-on-exec
    /// descriptor at offset 0.
    ///
    /// Up to ``bufferedLimit`` bytes, `fill` writes into an ordinary buffer
    /// first, and `blank` is asked only once that has succeeded, so a
    /// failing `fill` costs no memory file; the buffer is then written into
    /// the file with one `write`. Above it, `fill` writes straight into the
    /// file through a temporary writable mapping (no second copy of the
    /// bytes); when it fails, the file is closed.
    ///
    /// - Parameters:
    ///   - blank: gives the empty memory file (``blank(name:)``, or one made ahead).
    ///   - fill: writes all `count` bytes of the buffer it is given.
    /// - Throws: `MemoryFileError.system` from `blank`, `write`, `ftruncate`,
    ///   `mmap` or `fcntl`; `MemoryFileError.fill` with what `fill` threw.
    public static func sealed<E: Error>(
        count: Int, in blank: () throws(Errno) -> Blank, fill: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(MemoryFileError<E>) -> FileDescriptor {
        guard count > bufferedLimit else {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            defer { buffer.deallocate() }
            let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])
            do { try fill(bytes) } catch { throw .fill(error) }
            do throws(Errno) {
                let file = try blank()
                // A write to a memory file is never short but for ENOSPC/ENOMEM,
                // which it reports; the shim loops on short writes regardless.
                try file.writable.write(UnsafeRawBufferPointer(bytes))
                return try seal(file)
            } catch { throw .system(error) }
        }
        let file: Blank
        do { file = try blank() } catch { throw .system(error) }
        do { try file.writable.resize(to: Int64(count)) } catch { throw .system(error) }
        let fd = file.writable.rawValue
        var address: UnsafeMutableRawPointer?
        do { _ = try valueOrErrno("mmap") { cas_mmap_writable(fd, count, &address) } } catch { throw .system(error) }
        do {
            // The writable mapping must be gone before F_SEAL_WRITE is allowed.
            defer { _ = cas_munmap(address, count) }
            do { try fill(UnsafeMutableRawBufferPointer(start: address, count: count)) } catch { throw .fill(error) }
        }
        do { return try seal(file) } catch { throw .system(error) }
    }

    private static func create(_ name: String) throws(Errno) -> FileDescriptor {
        FileDescriptor(adopting: try valueOrErrno("memfd_create") { cas_memfd_create(name) })
    }

    /// Seals `file` against every change and returns its read-only
    /// descriptor (its writable one closes).
    private static func seal(_ file: consuming Blank) throws(Errno) -> FileDescriptor {
        let fd = file.writable.rawValue
        _ = try valueOrErrno("fcntl F_ADD_SEALS") { cas_memfd_seal(fd) }
        return file.readOnly
    }

    /// Creates a sealed memory file holding a copy of `bytes`.
    /// See ``sealed(name:count:fill:)``.
    /// Written with `write`, straight from `bytes`, at any size.
    public static func sealed(name: String, copying bytes: UnsafeRawBufferPointer) throws(Errno) -> FileDescriptor {
        try sealed(copying: bytes, in: { () throws(Errno) in try blank(name: name) })
    }

    /// Creates a sealed memory file holding a copy of `bytes`, in the empty
    /// file `blank` gives (one made ahead): written with `write` straight
    /// from `bytes`, at any size, with no buffer in between.
    public static func sealed(copying bytes: UnsafeRawBufferPointer, in blank: () throws(Errno) -> Blank) throws(Errno) -> FileDescriptor {
        let file = try blank()
        try file.writable.write(bytes)
        return try seal(file)
    }

    /// Creates a sealed memory file holding a copy of `bytes`.
    /// See ``sealed(name:count:fill:)``.
    public static func sealed(name: String, copying bytes: [UInt8]) throws(Errno) -> FileDescriptor {
        let file = try blank(name: name)
        try file.writable.write(bytes, at: 0)
        return try seal(file)
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

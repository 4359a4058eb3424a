internal import CAssetShim

extension FileDescriptor {
    /// Sends up to `count` bytes of this file, from `offset`, to the
    /// descriptor `target` (not owned: standard output, a pipe, a socket),
    /// in the kernel. Returns the number sent (0 at end of file).
    ///
    /// - Throws: the `errno`; `.invalidArgument` or `.noSys` when the kernel
    ///   cannot send between these two (a terminal, an `O_APPEND` file) —
    ///   callers fall back to ``read(into:at:)`` and ``write(_:to:)``.
    ///   The corresponding C function is `sendfile`.
    public func send(count: Int, at offset: Int64, to target: Int32) throws(Errno) -> Int {
        var position = offset
        let source = rawValue
        return try valueOrErrno("sendfile") { cas_sendfile(target, source, &position, count) }
    }

    /// Writes all of `bytes` to the descriptor `target` (not owned) at its
    /// file position. The corresponding C function is `write`.
    public static func write(_ bytes: UnsafeRawBufferPointer, to target: Int32) throws(Errno) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = try valueOrErrno("write") { cas_write_full(target, base, bytes.count) }
    }
}

extension MappedRegion {
    /// Gives back the pages of `bytes`, a part of a file mapping that a
    /// sequential reader is done with: the file's data stays in the page
    /// cache, the process no longer counts it as resident, and a later read
    /// of the same bytes faults them in again. Only whole pages inside
    /// `bytes` are dropped. `bytes` must lie in a file mapping (never
    /// anonymous memory, which this would zero). The corresponding C
    /// function is `madvise` with `MADV_DONTNEED`.
    public static func release(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let page = UInt(cas_page_size())
        let start = (UInt(bitPattern: base) + page - 1) / page * page
        let end = (UInt(bitPattern: base) + UInt(bytes.count)) / page * page
        guard end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = cas_madvise(address, Int(end - start), Advice.dontNeed.rawValue)
    }
}

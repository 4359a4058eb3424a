internal import CLMDB
#if canImport(Glibc)
internal import Glibc
#endif

extension MDB_val {
    /// A value that points at `bytes`. LMDB reads through it and never writes,
    /// except where `MDB_RESERVE` asks it to hand back space.
    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer) {
        self.init(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
    }

    /// The bytes the value points at.
    @inline(__always)
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mv_data, count: mv_size) }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes begin with `prefix`. An empty prefix begins everything.
    @inline(__always)
    func hasPrefix(_ prefix: UnsafeRawBufferPointer) -> Bool {
        guard prefix.count <= count else { return false }
        guard prefix.count > 0 else { return true }
        return memcmp(baseAddress!, prefix.baseAddress!, prefix.count) == 0
    }

    /// Whether these bytes equal `other`'s.
    @inline(__always)
    func isEqual(to other: UnsafeRawBufferPointer) -> Bool {
        count == other.count && hasPrefix(other)
    }
}

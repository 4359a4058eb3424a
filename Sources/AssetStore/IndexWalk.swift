import AssetIndex

/// Follows a walk over a large part of the index (verify's, an install's,
/// a removal's) and lets go of the index pages it has read every
/// ``stride`` records (``AssetIndex/ReadableTransaction/releaseResidentPages()``), so that
/// checking a million members keeps a few megabytes of the index resident,
/// not the whole file.
struct IndexWalk {
    /// Records between two releases: at about 150 bytes a record, some
    /// 10 MB of index pages.
    static let stride = 1 << 16

    private var visited = 0

    @inline(__always)
    mutating func visited(in txn: borrowing some ReadableTransaction & ~Copyable) {
        visited &+= 1
        if visited & (Self.stride - 1) == 0 { txn.releaseResidentPages() }
    }
}

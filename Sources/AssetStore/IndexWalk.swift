import AssetIndex

/// Follows a walk over a large part of the index (verify's, an install's,
/// a removal's) and lets go of the index
/// pages it has read every ``stride`` records
/// (``AssetIndex/ReadTransaction/releaseResidentPages()``), so that
/// checking a million members keeps a few megabytes of the index resident,
/// not the whole file.
struct IndexWalk {
    /// Records between two releases: at about 150 bytes a record, some
    /// 10 MB of index pages.
    static let stride = 1 << 16

    private var visited = 0

    @inline(__always)
    mutating func visited(in txn: borrowing ReadTransaction) {
        if step() { txn.releaseResidentPages() }
    }

    /// The same in a write transaction (an install's or a removal's walk).
    @inline(__always)
    mutating func visited(in txn: borrowing WriteTransaction) {
        if step() { txn.releaseResidentPages() }
    }

    /// Counts one record; whether it ends a stride.
    @inline(__always)
    private mutating func step() -> Bool {
        visited &+= 1
        return visited & (Self.stride - 1) == 0
    }
}

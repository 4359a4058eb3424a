internal import CLMDB
internal import AssetSystem
internal import Synchronization

/// LMDB's two meta pages (the first two pages of `data.mdb`), mapped by
/// themselves, for reading the last committed transaction ID on every
/// lookup without LMDB's map.
///
/// `mdb_env_info` reads the same field, but through the environment's map,
/// which a map resize (`mdb_env_set_mapsize`) unmaps: a caller has to pin
/// the map through the reader pool's gate first — two locked shard updates
/// and a thread-local lookup, most of the cost of asking. This mapping is
/// never remapped, so reading it needs no pin: two atomic loads.
///
/// The offsets are those of LMDB's data file format (version 1, the format
/// of every LMDB 0.9 release): each meta page has a 16-byte page header,
/// then `MDB_meta`, whose `mm_magic` is `0xBEEFC0DE` and whose `mm_txnid`
/// is 128 bytes in; a commit writes its ID into the meta page of its parity,
/// so the larger of the two is the last commit. ``init(environment:)``
/// checks the magic, the version and that the IDs read here agree with
/// `mdb_env_info`; on any doubt there is no `MetaPages` and the environment
/// asks `mdb_env_info` as before.
final class MetaPages: @unchecked Sendable {
    // Unchecked only for the two pointers: they point into `region`, which
    // lives as long as this object and is never remapped, and are read only
    // with atomic loads (other processes write them).
    private let region: MappedRegion
    /// Where `mm_txnid` is in the first and in the second page.
    private let first: UnsafeMutablePointer<Atomic<Int>>
    private let second: UnsafeMutablePointer<Atomic<Int>>

    static let magic: UInt32 = 0xBEEF_C0DE
    static let version: UInt32 = 1
    static let header = 16
    static let transactionIDOffset = 16 + 128

    /// The meta pages of the open environment `env`, or `nil` when they
    /// cannot be mapped or do not look as expected.
    init?(environment env: OpaquePointer) {
        var stat = MDB_stat()
        var fd: mdb_filehandle_t = -1
        guard mdb_env_stat(env, &stat) == 0, mdb_env_get_fd(env, &fd) == 0, fd >= 0 else { return nil }
        let page = Int(stat.ms_psize)
        guard page >= 512 else { return nil }
        let borrowed = FileDescriptor(adopting: fd)
        let mapped = Result { () throws(Errno) in try MappedRegion(mapping: borrowed, count: 2 * page) }
        _ = borrowed.take()  // LMDB's: it stays open
        guard case .success(let region) = mapped, let base = region.baseAddress else { return nil }
        for p in 0..<2 {
            let meta = base + p * page + Self.header
            guard meta.loadUnaligned(as: UInt32.self) == Self.magic,
                  meta.loadUnaligned(fromByteOffset: 4, as: UInt32.self) == Self.version else { return nil }
        }
        let bytes = UnsafeMutableRawPointer(mutating: base)
        first = (bytes + Self.transactionIDOffset).assumingMemoryBound(to: Atomic<Int>.self)
        second = (bytes + page + Self.transactionIDOffset).assumingMemoryBound(to: Atomic<Int>.self)
        self.region = region
        // Agrees with LMDB (a commit by another process in between may make
        // one pair of readings differ: ask a few times).
        var agreed = false
        for _ in 0..<3 where !agreed {
            var info = MDB_envinfo()
            _ = mdb_env_info(env, &info)
            agreed = info.me_last_txnid == lastCommittedTransactionID
        }
        guard agreed else { return nil }
    }

    /// The larger of the two pages' transaction IDs: the last commit.
    @inline(__always)
    var lastCommittedTransactionID: Int {
        max(first.pointee.load(ordering: .acquiring), second.pointee.load(ordering: .acquiring))
    }
}

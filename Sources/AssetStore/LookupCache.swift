import Synchronization

/// Recent member lookups, valid for exactly one commit of the index.
///
/// A lookup through LMDB costs a transaction renewal and a B-tree descent
/// (most of a microsecond over 100,000 members). While nobody commits, the
/// answer cannot change, so the store keeps the answers it found, tagged with
/// the commit their snapshot showed, and serves them again as long as
/// ``AssetIndex/Environment/lastCommittedTransactionID`` still names that
/// commit. Any commit, by any process, makes every entry stale at once; the
/// next lookups go to LMDB and fill the cache anew for the new commit.
///
/// A hit is as good as a snapshot taken at the moment of the check: a commit
/// that lands right after it is not seen, as it would not be by a snapshot
/// taken then. The archive it names may be unlinked meanwhile; the caller
/// then falls back to LMDB, as for any snapshot.
final class LookupCache: Sendable {
    /// The most entries kept; past it the cache starts over.
    static let capacity = 1 << 20

    private struct State {
        /// The commit every entry was read at; -1 before the first.
        var commit = -1
        /// Pack ID → path → record.
        var byPack: [String: [String: MemberRecord]] = [:]
        /// Path → (pack ID, record), for lookups across packs that found one pack.
        var byPath: [String: (pack: String, record: MemberRecord)] = [:]
        var count = 0
    }

    private let state = Mutex(State())

    /// The cached answer for `path` (in `pack`, or in whichever pack holds it),
    /// if it was read at commit `commit`.
    @inline(__always)
    func lookup(_ path: String, pack: String?, commit: Int) -> (pack: String, record: MemberRecord)? {
        state.withLock { s in
            guard s.commit == commit else { return nil }
            if let pack {
                return s.byPack[pack]?[path].map { (pack, $0) }
            }
            return s.byPath[path]
        }
    }

    /// Remembers what a lookup found in a snapshot of commit `commit`. An
    /// answer from an older snapshot than the cache's is dropped; one from a
    /// newer snapshot starts the cache over.
    func insert(_ path: String, pack: String?, found: (pack: String, record: MemberRecord), commit: Int) {
        state.withLock { s in
            if commit < s.commit { return }
            if commit > s.commit || s.count >= Self.capacity { s = State(); s.commit = commit }
            if let pack {
                if s.byPack[pack, default: [:]].updateValue(found.record, forKey: path) == nil { s.count += 1 }
            } else if s.byPath.updateValue(found, forKey: path) == nil {
                s.count += 1
            }
        }
    }
}

internal import Synchronization

/// The directories whose environment this process has open.
///
/// LMDB allows one open environment per file per process: a second
/// `mdb_env_open` of the same files finds no conflicting POSIX lock (the
/// process's own locks never conflict), takes itself for the only user and
/// reinitializes the shared lock table under the first; closing either then
/// drops the process's locks on `lock.mdb`. ``Environment`` refuses the
/// second open instead.
enum OpenEnvironments {
    /// A directory, by device and inode, so that different spellings of one
    /// path match.
    struct Identity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    private static let claimed = Mutex<Set<Identity>>([])

    /// Claims `identity`; `false` if it is already claimed.
    static func claim(_ identity: Identity) -> Bool {
        claimed.withLock { $0.insert(identity).inserted }
    }

    /// Gives up a claim.
    static func release(_ identity: Identity) {
        _ = claimed.withLock { $0.remove(identity) }
    }
}

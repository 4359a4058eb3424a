#if canImport(Glibc)
internal import Glibc
#endif
internal import AssetSystem
internal import Synchronization

/// An environment's reusable read transactions and its map gate.
///
/// **Pool.** A reset read transaction (`mdb_txn_reset`) keeps its slot in
/// the reader table and is ready for `mdb_txn_renew`. Idle transactions wait
/// in shards; each thread uses the shard of its ``ThreadIndex`` (so threads
/// do not contend for one lock), takes an idle transaction from another
/// shard when its own has none, and begins a new one only when no shard has
/// any. A process thus holds as many reader slots as it ever had concurrent
/// reads. Each transaction is lent to one thread at a time, which
/// `MDB_NOTLS` allows to be any thread.
///
/// **Gate.** `mdb_env_set_mapsize` unmaps and remaps the file, so it may run
/// only while no transaction of this process uses the map. Each shard lists
/// the reads in progress on its threads. A resize sets `resizing` in every
/// shard, which stops new reads, waits until every shard's list is empty,
/// then remaps and clears the flags. A thread that already has a read open
/// may open more while a resize waits: the resize cannot start before that
/// thread's reads end, so a shard's list that was seen empty stays empty,
/// and making the thread wait would deadlock.
struct ReaderPool: ~Copyable {
    /// A read transaction's handle as the pool keeps it. `@unchecked Sendable`
    /// because handing the handle from thread to thread is the pool's
    /// purpose: with `MDB_NOTLS` any thread may use a read transaction, and
    /// the pool lends each one to a single thread at a time, under a lock.
    struct Transaction: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// One shard's state. Padded to 128 bytes so that shards in the array
    /// never share a cache line.
    struct Shard: ~Copyable {
        /// Reset transactions ready to be renewed.
        var idle: [Transaction] = []
        /// The ``ThreadIndex`` of each read (or other map user) in progress.
        var readers: [Int] = []
        /// A resize waits for ``readers`` to drain; new reads must wait.
        var resizing = false
        private var padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

        init() {
            idle.reserveCapacity(8)
            readers.reserveCapacity(8)
        }

        /// Counts a read by `thread`, unless a resize must go first.
        /// Returns whether admitted, and, when `lending`, an idle transaction
        /// if there is one.
        mutating func admit(_ thread: Int, lending: Bool) -> (admitted: Bool, txn: Transaction?) {
            if resizing && !readers.contains(thread) { return (false, nil) }
            readers.append(thread)
            return (true, lending ? idle.popLast() : nil)
        }

        /// Ends a read by `thread`, keeping its reset transaction if any.
        mutating func dismiss(_ thread: Int, keeping txn: Transaction?) {
            if let txn { idle.append(txn) }
            if let i = readers.lastIndex(of: thread) {
                readers.swapAt(i, readers.count - 1)
                readers.removeLast()
            }
        }
    }

    static let shardCount = 32
    let shards: InlineArray<32, Mutex<Shard>>
    /// Remaps so far, so that a thread can tell that another did its remap.
    let generation = Atomic<Int>(0)
    /// The ``ThreadIndex`` of the thread running a write transaction, or 0.
    let writer = Atomic<Int>(0)

    init() { shards = InlineArray { _ in Mutex(Shard()) } }

    @inline(__always)
    func shard(_ thread: Int) -> Int { thread & (ReaderPool.shardCount - 1) }

    /// Counts a read by `thread` and, when `lending`, lends it an idle
    /// transaction if any shard has one; waits while a resize is pending.
    /// Without `lending`, it counts a map user that needs no transaction (a
    /// copy, a look at the meta pages). End either with ``dismiss(_:keeping:)``.
    func admit(_ thread: Int, lending: Bool = true) -> Transaction? {
        var backoff = Backoff()
        let own = shard(thread)
        while true {
            let (admitted, txn) = shards[own].withLock { $0.admit(thread, lending: lending) }
            if admitted { return lending ? txn ?? steal(excluding: own) : nil }
            backoff.pause()
        }
    }

    /// Runs `body` while counted as a map user, so that no resize remaps the
    /// map under it.
    func pinningMap<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let thread = ThreadIndex.current
        _ = admit(thread, lending: false)
        defer { dismiss(thread, keeping: nil) }
        return try body()
    }

    /// An idle transaction from another shard, or `nil`.
    private func steal(excluding own: Int) -> Transaction? {
        for offset in 1..<ReaderPool.shardCount {
            if let txn = shards[(own + offset) % ReaderPool.shardCount].withLock({ $0.idle.popLast() }) { return txn }
        }
        return nil
    }

    /// Ends a read by `thread`, keeping `txn` (reset) for reuse.
    func dismiss(_ thread: Int, keeping txn: Transaction?) {
        shards[shard(thread)].withLock { $0.dismiss(thread, keeping: txn) }
    }

    /// Whether `thread` has a read (or other map use) in progress.
    func isReading(_ thread: Int) -> Bool {
        shards[shard(thread)].withLock { $0.readers.contains(thread) }
    }

    /// Runs `remap` once no read is in progress, holding new reads back
    /// meanwhile. The caller must not be reading itself.
    func drain<R>(then remap: () -> R) -> R {
        for i in 0..<ReaderPool.shardCount { shards[i].withLock { $0.resizing = true } }
        var backoff = Backoff()
        while !(0..<ReaderPool.shardCount).allSatisfy({ i in shards[i].withLock { $0.readers.isEmpty } }) {
            backoff.pause()
        }
        // Every shard was seen empty with `resizing` set: none can admit a read.
        let result = remap()
        generation.add(1, ordering: .sequentiallyConsistent)
        for i in 0..<ReaderPool.shardCount { shards[i].withLock { $0.resizing = false } }
        return result
    }

    /// Every transaction of every shard, for closing the environment.
    func removeAll() -> [Transaction] {
        var all: [Transaction] = []
        for i in 0..<ReaderPool.shardCount {
            all += shards[i].withLock { shard in
                defer { shard.idle.removeAll() }
                return shard.idle
            }
        }
        return all
    }
}

/// A small number that identifies the calling thread for as long as it
/// lives, given out in order (1, 2, 3, …) on a thread's first read, so that
/// threads spread evenly over the pool's shards. Bodies run synchronously, so
/// a read stays on one thread from start to end.
enum ThreadIndex {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()
    private static let next = Atomic<Int>(1)

    /// The calling thread's index. The corresponding C function is `pthread_getspecific`.
    @inline(__always)
    static var current: Int {
        if let stored = pthread_getspecific(key) { return Int(bitPattern: stored) }
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: index))
        return index
    }
}

/// Waiting for a rare, short event (a map resize): yields the processor at
/// first, then sleeps for growing intervals up to a millisecond.
struct Backoff {
    private var rounds = 0

    mutating func pause() {
        rounds += 1
        if rounds <= 64 {
            sched_yield()
        } else {
            Monotonic.sleep(min(0.001, 0.000_01 * Double(rounds - 64)))
        }
    }
}

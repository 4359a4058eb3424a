#if canImport(Glibc)
internal import Glibc
#endif
internal import AssetSystem

/// An environment's reusable read transactions and its map gate, kept in a
/// `Mutex` by ``Environment``.
///
/// **Pool.** Each slot holds a read transaction that was reset
/// (`mdb_txn_reset`) and keeps its reader-table slot, ready for
/// `mdb_txn_renew`; a slot is lent to one thread at a time (`MDB_NOTLS`
/// lets any thread use it). Slots are added only when every slot is lent, so
/// a process holds as many reader slots as it ever had concurrent reads.
///
/// **Gate.** `mdb_env_set_mapsize` unmaps and remaps the file, so it may run
/// only while no transaction of this process touches the map. ``active``
/// counts the reads (and other map users) in progress. A resize sets
/// ``resizing``, which stops new reads, waits for ``active`` to reach zero,
/// and remaps while holding this state's lock, so no read can begin in
/// between. A thread that already has a read open may open more while a
/// resize waits: the resize cannot start before that thread's reads end, and
/// making it wait would deadlock.
struct ReaderPool: ~Copyable {
    /// A read transaction's handle as the pool keeps it. `@unchecked Sendable`
    /// because handing the handle from thread to thread is the pool's
    /// purpose: with `MDB_NOTLS` any thread may use a read transaction, and
    /// the pool lends each one to a single thread at a time, under its lock.
    struct Transaction: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    struct Slot {
        /// A reset read transaction, or `nil` until one is begun.
        var txn: Transaction?
        /// The thread the slot is lent to, or 0.
        var owner: UInt
    }

    /// What ``acquire(thread:)`` grants.
    enum Grant {
        /// Slot `index`, with its reset transaction if it has one.
        case slot(Int, Transaction?)
        /// A resize is under way: try again shortly.
        case wait
    }

    var slots: [Slot] = []
    var idle: [Int] = []
    /// Reads and other map users in progress.
    var active = 0
    /// A resize waits for ``active`` to reach zero; new reads must wait.
    var resizing = false
    /// Remaps so far, so that a thread can tell that another did its remap.
    var generation = 0
    /// The thread running a write transaction, or 0.
    var writer: UInt = 0

    init(capacity: Int) {
        slots.reserveCapacity(capacity)
        idle.reserveCapacity(capacity)
    }

    /// Lends a slot to `thread`, unless a resize must go first.
    mutating func acquire(thread: UInt) -> Grant {
        if resizing && !hasActiveRead(on: thread) { return .wait }
        active += 1
        if let index = idle.popLast() {
            slots[index].owner = thread
            return .slot(index, slots[index].txn)
        }
        slots.append(Slot(txn: nil, owner: thread))
        return .slot(slots.count - 1, nil)
    }

    /// Records the transaction begun for slot `index`.
    mutating func adopt(_ txn: Transaction, at index: Int) {
        slots[index].txn = txn
    }

    /// Takes back slot `index`, whose transaction (if any) is reset; with
    /// `discarding`, the transaction is gone and the slot empty.
    mutating func release(_ index: Int, discarding: Bool = false) {
        if discarding { slots[index].txn = nil }
        slots[index].owner = 0
        idle.append(index)
        active -= 1
    }

    /// Counts a map user that holds no slot (a copy), unless a resize must go first.
    mutating func pin(thread: UInt) -> Bool {
        if resizing && !hasActiveRead(on: thread) { return false }
        active += 1
        return true
    }

    /// Ends ``pin(thread:)``.
    mutating func unpin() { active -= 1 }

    /// Whether `thread` has a read transaction open.
    func hasActiveRead(on thread: UInt) -> Bool {
        slots.contains { $0.owner == thread }
    }
}

/// The calling thread's identity, for the gate's bookkeeping. Bodies run
/// synchronously, so a read stays on one thread from start to end.
@inline(__always)
func currentThread() -> UInt { UInt(pthread_self()) }

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

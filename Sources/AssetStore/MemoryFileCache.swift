import Dispatch
import Synchronization
public import AssetSystem

/// The sealed memory files made for descriptor handouts (deflated members,
/// and any member asked for standalone), kept so that the next handout of
/// the same member of the same pack version is a `dup` of the same file
/// instead of a new inflation.
///
/// A sealed memory file cannot change (no write, grow, shrink or new seal),
/// so one can go to any number of holders. It is kept by
/// (pack, archive key, member path, standalone): an update of the pack
/// installs a new archive under a new key, so its members miss the old
/// files, and the first file made for the new key drops the pack's old
/// ones. The cache keeps at most ``capacity`` bytes and ``maximumFiles``
/// files (each holds a descriptor), dropping the least recently used;
/// dropping one only closes the cache's descriptor, handouts keep theirs.
/// Files dropped to make room for new ones are closed on a background
/// queue, ``closeBatch`` at a time (closing a memory file frees its pages,
/// 1.5–3.5 µs for 1–16 KiB, which the handout that made room should not
/// wait for; one wake of the queue per batch): until then the cache holds
/// up to that many dropped files beyond its limits, and at most a
/// sixteenth of its byte limit (a batch that reaches it closes at once). Concurrent requests for a file being made wait for
/// that one. New files come from a ``MemoryFilePool`` of empty ones made
/// ahead.
///
/// One cache serves a store's own handouts and the descriptor daemon's
/// (which counts each user's share of it by ``File/id``).
public final class MemoryFileCache: Sendable {
    /// A member of one pack version, asked for standalone or not: the
    /// bytes are the same, but each way is a file of its own (the daemon's
    /// per-user budget counts them apart).
    public struct Key: Hashable, Sendable {
        public var pack: String
        /// Names the pack version: archive keys are not reused.
        public var archiveKey: UInt64
        public var path: String
        public var standalone: Bool

        public init(pack: String, archiveKey: UInt64, path: String, standalone: Bool) {
            self.pack = pack
            self.archiveKey = archiveKey
            self.path = path
            self.standalone = standalone
        }
    }

    /// One sealed memory file: read-only, holding exactly the member at
    /// offset 0. Its descriptor stays open while the value lives, cached
    /// or not.
    public final class File: Sendable {
        /// Unique among the files of this cache for its life.
        public let id: Int
        public let descriptor: FileDescriptor
        /// The member's length: the file's size.
        public let length: Int64
        public let crc32: UInt32

        init(id: Int, descriptor: consuming FileDescriptor, length: Int64, crc32: UInt32) {
            self.id = id
            self.descriptor = descriptor
            self.length = length
            self.crc32 = crc32
        }
    }

    /// How many bytes and files the cache may hold.
    public struct Limits: Sendable, Hashable {
        /// Bytes of memory files kept; 0 keeps none.
        public var bytes: Int64
        /// Files kept (each holds a descriptor); 0 keeps none.
        public var files: Int

        public init(bytes: Int64, files: Int) {
            self.bytes = bytes
            self.files = files
        }
    }

    /// A key with its hash computed once: a handout hashes its key's two
    /// strings once, and the tables below (and the moves a removal makes
    /// in them) hash one word.
    private struct HashedKey: Hashable {
        let key: Key
        let hash: Int

        init(_ key: Key) {
            self.key = key
            hash = key.hashValue
        }

        static func == (a: HashedKey, b: HashedKey) -> Bool { a.hash == b.hash && a.key == b.key }
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    /// A kept file, and its neighbours in the order of use.
    private struct Slot {
        var key: HashedKey?
        var file: File?
        /// The slot used just before this one, or -1.
        var older = -1
        /// The slot used just after this one, or -1.
        var newer = -1
    }

    private struct State {
        var limits: Limits
        /// Each kept file's slot.
        var index: [HashedKey: Int] = [:]
        var slots: [Slot] = []
        /// Slots no file holds.
        var free: [Int] = []
        /// The least and the most recently used slots, or -1.
        var oldest = -1
        var newest = -1
        var bytes: Int64 = 0
        var nextID = 0
        /// Keys being made, so that concurrent requests wait for one file.
        var making: [HashedKey: DispatchGroup] = [:]
        /// The archive key of each pack's newest file, so that only a new
        /// version looks for the pack's old files.
        var latest: [String: UInt64] = [:]
        /// Files dropped to make room, to be closed in one batch.
        var closing: [File] = []

        var count: Int { index.count }

        /// Moves `dropped` to ``closing`` and returns the batch to close
        /// now, if it is full.
        mutating func deferClose(_ dropped: [File]) -> [File] {
            closing += dropped
            // At most a batch of files: summing their lengths is cheaper than keeping a sum right.
            let bytes = closing.reduce(0) { $0 + $1.length }
            guard closing.count >= MemoryFileCache.closeBatch || bytes >= limits.bytes / 16 else { return [] }
            return takeClosing()
        }

        /// The dropped files not closed yet, to close now.
        mutating func takeClosing() -> [File] {
            defer { closing = [] }
            return closing
        }

        /// Takes slot `i` out of the order of use.
        private mutating func unlink(_ i: Int) {
            let (older, newer) = (slots[i].older, slots[i].newer)
            if older >= 0 { slots[older].newer = newer } else { oldest = newer }
            if newer >= 0 { slots[newer].older = older } else { newest = older }
        }

        /// Puts slot `i` last in the order of use.
        private mutating func linkNewest(_ i: Int) {
            slots[i].older = newest
            slots[i].newer = -1
            if newest >= 0 { slots[newest].newer = i } else { oldest = i }
            newest = i
        }

        /// Counts a use of `key`'s file, if kept, and returns it.
        mutating func use(_ key: HashedKey) -> File? {
            guard let i = index[key] else { return nil }
            if i != newest {
                unlink(i)
                linkNewest(i)
            }
            return slots[i].file
        }

        /// Keeps `file` under `key` (not kept yet), as just used.
        mutating func insert(_ file: File, for key: HashedKey) {
            let i: Int
            if let reused = free.popLast() { i = reused } else {
                i = slots.count
                slots.append(Slot())
            }
            slots[i].key = key
            slots[i].file = file
            index[key] = i
            linkNewest(i)
            bytes += file.length
        }

        /// Drops the least recently used files until `count` more files of
        /// `length` bytes in all fit the limits, into `dropped`.
        mutating func evict(toFit length: Int64, count: Int, into dropped: inout [File]) {
            while oldest >= 0, bytes + length > limits.bytes || self.count + count > limits.files {
                remove(slot: oldest, into: &dropped)
            }
        }

        /// Forgets `key`'s file, if kept, into `dropped`.
        mutating func remove(_ key: HashedKey, into dropped: inout [File]) {
            if let i = index[key] { remove(slot: i, into: &dropped) }
        }

        /// Forgets the file in slot `i`, into `dropped`: the caller lets go
        /// of them once the lock is released, since closing a memory file
        /// frees its pages, which should not hold up other handouts.
        private mutating func remove(slot i: Int, into dropped: inout [File]) {
            guard let key = slots[i].key, let file = slots[i].file else { return }
            index.removeValue(forKey: key)
            unlink(i)
            slots[i] = Slot()
            free.append(i)
            bytes -= file.length
            dropped.append(file)
        }

        /// The keys of the files kept for `pack` (of any version but `except`).
        func keys(of pack: String, except archiveKey: UInt64? = nil) -> [HashedKey] {
            index.keys.filter { $0.key.pack == pack && $0.key.archiveKey != archiveKey }
        }
    }

    /// Dropped files closed on the background queue at a time.
    static let closeBatch = 16

    /// Descriptors a store's memory files may hold beyond the files its
    /// limits keep: the pool's ready files (two each) and a batch of
    /// dropped ones waiting to be closed.
    public static let descriptorsAhead = 2 * MemoryFilePool.defaultCapacity + closeBatch - 1

    private let state: Mutex<State>
    /// Closes dropped files and refills ``pool``.
    private let background = DispatchQueue(label: "AssetStore.MemoryFileCache", qos: .utility)
    /// The empty memory files new ones are made from.
    let pool: MemoryFilePool

    init(limits: Limits, poolCapacity: Int = MemoryFilePool.defaultCapacity, poolName: String = MemoryFilePool.defaultName) {
        state = Mutex(State(limits: limits))
        pool = MemoryFilePool(capacity: poolCapacity, name: poolName, queue: background)
    }

    /// What the cache may hold.
    public var limits: Limits { state.withLock { $0.limits } }

    /// Sets what the cache may hold, dropping the least recently used files
    /// that no longer fit.
    public func setLimits(_ limits: Limits) {
        let dropped = state.withLock { s -> [File] in
            var dropped: [File] = []
            s.limits = limits
            s.evict(toFit: 0, count: 0, into: &dropped)
            return dropped + s.takeClosing()
        }
        withExtendedLifetime(dropped) {}
    }

    /// Files dropped and not closed yet (at most ``closeBatch`` - 1).
    var closingCount: Int { state.withLock { $0.closing.count } }

    /// The files and bytes held now.
    public var usage: (files: Int, bytes: Int64) { state.withLock { ($0.count, $0.bytes) } }

    /// The cached file for `key`, if there is one (counted as a use).
    public func cached(_ key: Key) -> File? {
        let key = HashedKey(key)
        return state.withLock { $0.use(key) }
    }

    private enum Step {
        case hit(File)
        case wait(DispatchGroup)
        case make(DispatchGroup, Int)
    }

    /// The cached file for `key`, or the one `make` makes — a sealed,
    /// read-only memory file of `length` bytes — kept when it fits the
    /// limits. Concurrent calls for one key wait for one `make`; when it
    /// throws, each of them tries on its own.
    func file(for key: Key, length: Int64, crc32: UInt32,
              make: () throws(StoreError) -> FileDescriptor) throws(StoreError) -> File {
        let hashed = HashedKey(key)
        while true {
            let step = state.withLock { s -> Step in
                if let hit = s.use(hashed) { return .hit(hit) }
                if let group = s.making[hashed] { return .wait(group) }
                let group = DispatchGroup()
                group.enter()
                s.making[hashed] = group
                s.nextID += 1
                return .make(group, s.nextID)
            }
            switch step {
            case .hit(let file):
                return file
            case .wait(let group):
                group.wait()
            case .make(let group, let id):
                defer { group.leave() }
                let descriptor: FileDescriptor
                do { descriptor = try make() } catch {
                    state.withLock { _ = $0.making.removeValue(forKey: hashed) }
                    throw error
                }
                let file = File(id: id, descriptor: descriptor, length: length, crc32: crc32)
                let dropped = state.withLock { s -> [File] in
                    var dropped: [File] = []
                    s.making.removeValue(forKey: hashed)
                    guard length <= s.limits.bytes, s.limits.files > 0 else { return dropped }
                    // A new version of the pack: its old files can never be asked for again.
                    if s.latest.updateValue(key.archiveKey, forKey: key.pack) != key.archiveKey {
                        for old in s.keys(of: key.pack, except: key.archiveKey) { s.remove(old, into: &dropped) }
                    }
                    s.evict(toFit: length, count: 1, into: &dropped)
                    s.insert(file, for: hashed)
                    return s.deferClose(dropped)
                }
                // On a background thread (``BackgroundWork``) they close here:
                // a Dispatch worker started from it would stay at its priority.
                if !dropped.isEmpty && !BackgroundWork.isCurrent { background.async { withExtendedLifetime(dropped) {} } }
                return file
            }
        }
    }

    /// Drops every file of `pack` (after it is removed).
    func drop(pack: String) {
        let dropped = state.withLock { s -> [File] in
            var dropped: [File] = []
            for key in s.keys(of: pack) { s.remove(key, into: &dropped) }
            s.latest[pack] = nil
            return dropped + s.takeClosing()
        }
        withExtendedLifetime(dropped) {}
    }
}

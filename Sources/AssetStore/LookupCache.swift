import Glibc
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
///
/// **Starting over costs nothing.** The entries live in one open-addressing
/// table of plain slots, their keys in one byte arena; neither holds a
/// reference. Each slot carries the *generation* it was written in, and a
/// slot of an older generation counts as empty, so starting over for a new
/// commit is one increment — not the release of every cached key, which
/// for a million entries took hundreds of milliseconds inside the lock, on
/// the first read after each commit (the reader stalls seen while large
/// packs installed). The table and arena keep their memory for the next
/// generation.
final class LookupCache: Sendable {
    /// The most entries kept; past it the cache starts over.
    static let capacity = 1 << 20

    private let state = Mutex(Table())
    /// This cache's bound (``capacity`` unless a test asks for less).
    let limit: Int

    init(capacity: Int = LookupCache.capacity) { limit = capacity }

    /// The cached answer for `path` (in `pack`, or in whichever pack holds it),
    /// if it was read at commit `commit`.
    @inline(__always)
    func lookup(_ path: String, pack: String?, commit: Int) -> (pack: String, record: MemberRecord)? {
        var path = path
        var key = pack
        return path.withUTF8 { p in
            Key.with(pack: &key, path: p) { key in
                state.withLock { t -> (pack: String, record: MemberRecord)? in
                    guard t.commit == commit, let slot = t.find(key) else { return nil }
                    return (pack ?? t.packs[Int(t.slots[slot].pack)], t.slots[slot].record)
                }
            }
        }
    }

    /// Remembers what a lookup found in a snapshot of commit `commit`. An
    /// answer from an older snapshot than the cache's is dropped; one from a
    /// newer snapshot starts the cache over.
    func insert(_ path: String, pack: String?, found: (pack: String, record: MemberRecord), commit: Int) {
        var path = path
        var pack = pack
        path.withUTF8 { p in
            Key.with(pack: &pack, path: p) { key in
                state.withLock { t in
                    if commit < t.commit { return }
                    if commit > t.commit || t.count >= limit { t.startOver(commit: commit) }
                    t.insert(key, pack: found.pack, record: found.record)
                }
            }
        }
    }
}

/// A lookup's key as bytes, without allocating: `pack \0 path` for a lookup
/// in a pack, `\u{1} path` for one across packs (no pack ID starts with a
/// control character, so the two never meet), and its hash.
private struct Key {
    let head: UnsafeBufferPointer<UInt8>
    let separator: UInt8
    let path: UnsafeBufferPointer<UInt8>
    let hash: UInt64

    var count: Int { head.count + 1 + path.count }

    @inline(__always)
    static func with<R>(pack: inout String?, path: UnsafeBufferPointer<UInt8>, _ body: (Key) -> R) -> R {
        guard pack != nil else {
            return body(Key(head: UnsafeBufferPointer(start: nil, count: 0), separator: 1, path: path))
        }
        return pack!.withUTF8 { head in body(Key(head: head, separator: 0, path: path)) }
    }

    @inline(__always)
    init(head: UnsafeBufferPointer<UInt8>, separator: UInt8, path: UnsafeBufferPointer<UInt8>) {
        self.head = head
        self.separator = separator
        self.path = path
        // Eight bytes at a time, each word folded in with a multiply, then a
        // final mix so the low bits (the slot index) depend on every byte.
        var h = Self.fold(0x9e37_79b9_7f4a_7c15 ^ UInt64(head.count << 1 | Int(separator)), head)
        h = Self.fold(h ^ UInt64(path.count), path)
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        self.hash = h
    }

    @inline(__always)
    private static func fold(_ seed: UInt64, _ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = seed
        guard let base = bytes.baseAddress else { return h }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 8 <= bytes.count {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x0000_0100_0000_01b3
            h ^= h >> 29
            i += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while i < bytes.count {
            tail |= UInt64(bytes[i]) << shift
            shift += 8
            i += 1
        }
        return ((h ^ tail) &* 0x0000_0100_0000_01b3) ^ (h >> 31)
    }

    /// Whether `stored` holds exactly this key's bytes.
    @inline(__always)
    func equals(_ stored: UnsafeBufferPointer<UInt8>) -> Bool {
        guard stored.count == count, stored[head.count] == separator else { return false }
        if head.count > 0, memcmp(stored.baseAddress!, head.baseAddress!, head.count) != 0 { return false }
        return path.count == 0 || memcmp(stored.baseAddress! + head.count + 1, path.baseAddress!, path.count) == 0
    }

    func write(into arena: inout [UInt8]) {
        arena.append(contentsOf: head)
        arena.append(separator)
        arena.append(contentsOf: path)
    }
}

/// The cache's storage: slots with linear probing, keys in an arena.
private struct Table {
    struct Slot {
        /// The generation that wrote it; an older one is an empty slot.
        var generation: UInt32 = 0
        /// Index into ``Table/packs`` of the pack the lookup found.
        var pack: UInt32 = 0
        var keyOffset: UInt32 = 0
        var keyLength: UInt32 = 0
        var hash: UInt64 = 0
        var record = MemberRecord.none
    }

    /// The commit every live entry was read at; -1 before the first.
    var commit = -1
    /// Starts at 1, so that zeroed slots are empty.
    var generation: UInt32 = 1
    var slots = [Slot](repeating: Slot(), count: 1024)
    var arena: [UInt8] = []
    /// Pack IDs the live entries found, by index; few, and kept small by
    /// starting over with the generation.
    var packs: [String] = []
    var count = 0

    /// Makes every entry stale: nothing is released or cleared.
    mutating func startOver(commit: Int) {
        self.commit = commit
        generation &+= 1
        if generation == 0 {
            // Wrapped after 4 billion generations: slots of generation 0
            // would look live again, so clear them once.
            for i in slots.indices { slots[i].generation = 0 }
            generation = 1
        }
        arena.removeAll(keepingCapacity: true)
        packs.removeAll(keepingCapacity: true)
        count = 0
    }

    @inline(__always)
    func find(_ key: Key) -> Int? {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: key.hash) & mask
        return slots.withUnsafeBufferPointer { slots in
            arena.withUnsafeBufferPointer { arena in
                while true {
                    let s = slots[i]
                    guard s.generation == generation else { return nil }
                    if s.hash == key.hash,
                       key.equals(UnsafeBufferPointer(rebasing: arena[Int(s.keyOffset) ..< Int(s.keyOffset) + Int(s.keyLength)])) {
                        return i
                    }
                    i = (i + 1) & mask
                }
            }
        }
    }

    mutating func insert(_ key: Key, pack: String, record: MemberRecord) {
        if let existing = find(key) {
            slots[existing].record = record
            slots[existing].pack = packIndex(pack)
            return
        }
        // Past 3/4 full, twice the slots (this generation's entries moved;
        // the memory stays for later generations).
        if (count + 1) * 4 > slots.count * 3 { grow() }
        guard arena.count + key.count <= Int(UInt32.max) else { startOver(commit: commit); return insert(key, pack: pack, record: record) }
        let offset = UInt32(arena.count)
        key.write(into: &arena)
        var slot = Slot()
        slot.generation = generation
        slot.pack = packIndex(pack)
        slot.keyOffset = offset
        slot.keyLength = UInt32(key.count)
        slot.hash = key.hash
        slot.record = record
        place(slot)
        count += 1
    }

    private mutating func place(_ slot: Slot) {
        let mask = slots.count - 1
        var i = Int(truncatingIfNeeded: slot.hash) & mask
        while slots[i].generation == generation { i = (i + 1) & mask }
        slots[i] = slot
    }

    private mutating func packIndex(_ pack: String) -> UInt32 {
        if let last = packs.last, last == pack { return UInt32(packs.count - 1) }
        if let i = packs.firstIndex(of: pack) { return UInt32(i) }
        packs.append(pack)
        return UInt32(packs.count - 1)
    }

    private mutating func grow() {
        let live = slots.filter { $0.generation == generation }
        slots = [Slot](repeating: Slot(), count: slots.count * 2)
        for slot in live { place(slot) }
    }
}

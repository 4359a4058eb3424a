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
/// **A hit reads one entry and nothing else.** The entries are 128 bytes
/// each, aligned to 128 (the pair of lines the hardware fetches together),
/// and hold everything a hit needs: the member record, the key's hash, its
/// pack, and the key itself when it is at most 60 bytes (a longer one keeps
/// the rest in an overflow arena). They are placed where the key's hash
/// points, with linear probing, and at most 3/4 of the table is live; there
/// is no separate index to read first, so a hit costs one trip to memory
/// rather than two in a row. Over 100,000 members the table is 32 MiB,
/// asked for transparent huge pages, so a random hit rarely walks the page
/// tables either.
///
/// **Starting over costs nothing.** Each entry carries the generation that
/// wrote it, and one of an older generation counts as empty, so starting
/// over for a new commit is one increment — not the release of every cached
/// key, which for a million entries took hundreds of milliseconds inside
/// the lock, on the first read after each commit (the reader stalls seen
/// while large packs installed). The table holds no reference and keeps
/// its memory for the next generation. Only when the 32-bit generation
/// wraps (every 4,294,967,295 commits) is it cleared, a `memset`.
final class LookupCache: Sendable {
    /// The most entries kept; past it the cache starts over.
    static let capacity = 1 << 20

    private let state: Mutex<Table>
    /// This cache's bound (``capacity`` unless a test asks for less).
    let limit: Int

    /// - Parameter lastGeneration: the generation after which the table is
    ///   cleared; lower only in tests, which cannot reach the real wrap.
    init(capacity: Int = LookupCache.capacity, lastGeneration: UInt32 = .max) {
        limit = capacity
        state = Mutex(Table(lastGeneration: lastGeneration))
    }

    /// The cached answer for `path` (in `pack`, or in whichever pack holds it),
    /// if it was read at commit `commit`.
    @inline(__always)
    func lookup(_ path: String, pack: String?, commit: Int) -> (pack: String, record: MemberRecord)? {
        Key.with(pack: pack, path: path) { key in
            state.withLock { t -> (pack: String, record: MemberRecord)? in
                guard t.commit == commit, let entry = t.find(key), let record = MemberRecord(entry.record) else { return nil }
                return (pack ?? t.packs[Int(entry.pack)], record)
            }
        }
    }

    /// Remembers what a lookup found in a snapshot of commit `commit`. An
    /// answer from an older snapshot than the cache's is dropped; one from a
    /// newer snapshot starts the cache over.
    func insert(_ path: String, pack: String?, found: (pack: String, record: MemberRecord), commit: Int) {
        Key.with(pack: pack, path: path) { key in
            state.withLock { t in
                if commit < t.commit { return }
                if commit > t.commit || t.count >= limit { t.startOver(commit: commit) }
                t.insert(key, pack: found.pack, record: found.record)
            }
        }
    }
}

/// Runs `body` with `string`'s UTF-8: a native string's own bytes (or a
/// small one's, spilled to the stack) without copying or retaining it, else
/// those of a contiguous copy.
@inline(__always)
private func withUTF8<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = string
    return copy.withUTF8(body)
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
    static func with<R>(pack: String?, path: String, _ body: (Key) -> R) -> R {
        withUTF8(of: path) { path in
            guard let pack else {
                return body(Key(head: UnsafeBufferPointer(start: nil, count: 0), separator: 1, path: path))
            }
            return withUTF8(of: pack) { head in body(Key(head: head, separator: 0, path: path)) }
        }
    }

    @inline(__always)
    init(head: UnsafeBufferPointer<UInt8>, separator: UInt8, path: UnsafeBufferPointer<UInt8>) {
        self.head = head
        self.separator = separator
        self.path = path
        // Eight bytes at a time, each word folded in with a multiply, then a
        // final mix so the low bits (the slot index) and the high ones (the
        // slot's tag) depend on every byte.
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

    /// Whether `entry` holds exactly this key's bytes, the first
    /// ``Entry/inlineKeyBytes`` of them in the entry, the rest in `overflow`.
    @inline(__always)
    func equals(_ entry: Entry, overflow: UnsafeRawPointer?) -> Bool {
        guard entry.keyLength == count else { return false }
        let stored = KeyBytes(inline: entry.key, overflow: overflow.map { $0 + Int(entry.overflowOffset) })
        return stored.matches(UnsafeRawPointer(head.baseAddress), count: head.count, at: 0)
            && stored.byte(at: head.count) == separator
            && stored.matches(UnsafeRawPointer(path.baseAddress), count: path.count, at: head.count + 1)
    }

    /// Writes the key into `entry` and, past what fits there, onto `overflow`.
    func write(into entry: Entry, overflow: inout [UInt8]) {
        var offset = 0
        func put(_ byte: UInt8) {
            if offset < Entry.inlineKeyBytes { entry.key.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self) } else { overflow.append(byte) }
            offset += 1
        }
        for byte in head { put(byte) }
        put(separator)
        for byte in path { put(byte) }
    }
}

/// A stored key: its first bytes inline in an entry, the rest elsewhere.
private struct KeyBytes {
    let inline: UnsafeRawPointer
    let overflow: UnsafeRawPointer?

    @inline(__always)
    func byte(at offset: Int) -> UInt8 {
        offset < Entry.inlineKeyBytes
            ? inline.load(fromByteOffset: offset, as: UInt8.self)
            : overflow!.load(fromByteOffset: offset - Entry.inlineKeyBytes, as: UInt8.self)
    }

    /// Whether the `count` stored bytes from `start` equal those at `bytes`.
    @inline(__always)
    func matches(_ bytes: UnsafeRawPointer?, count: Int, at start: Int) -> Bool {
        guard count > 0, let bytes else { return true }
        let inlined = max(0, min(count, Entry.inlineKeyBytes - start))
        if inlined > 0, memcmp(inline + start, bytes, inlined) != 0 { return false }
        if inlined == count { return true }
        let rest = start + inlined - Entry.inlineKeyBytes
        return memcmp(overflow! + rest, bytes + inlined, count - inlined) == 0
    }
}

/// One entry of the table: 128 bytes, at a multiple of 128.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 48 | the member record, encoded as in the index (``MemberRecord``) |
/// | 48 | 8 | the key's hash |
/// | 56 | 2 | the key's length |
/// | 58 | 2 | index into ``Table/packs`` of the pack the lookup found |
/// | 60 | 4 | the generation that wrote the entry; an older one is empty |
/// | 64 | 60 | the key's first bytes |
/// | 124 | 4 | where the rest of a longer key starts in ``Table/overflow`` |
private struct Entry {
    static let size = 128
    static let inlineKeyBytes = 60

    let base: UnsafeMutableRawPointer

    var record: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: MemberRecord.encodedSize) }
    var hash: UInt64 {
        get { base.load(fromByteOffset: 48, as: UInt64.self) }
        nonmutating set { base.storeBytes(of: newValue, toByteOffset: 48, as: UInt64.self) }
    }
    var keyLength: Int {
        get { Int(base.load(fromByteOffset: 56, as: UInt16.self)) }
        nonmutating set { base.storeBytes(of: UInt16(newValue), toByteOffset: 56, as: UInt16.self) }
    }
    var pack: UInt16 {
        get { base.load(fromByteOffset: 58, as: UInt16.self) }
        nonmutating set { base.storeBytes(of: newValue, toByteOffset: 58, as: UInt16.self) }
    }
    var generation: UInt32 {
        get { base.load(fromByteOffset: 60, as: UInt32.self) }
        nonmutating set { base.storeBytes(of: newValue, toByteOffset: 60, as: UInt32.self) }
    }
    var key: UnsafeMutableRawPointer { base + 64 }
    var overflowOffset: UInt32 {
        get { base.load(fromByteOffset: 124, as: UInt32.self) }
        nonmutating set { base.storeBytes(of: newValue, toByteOffset: 124, as: UInt32.self) }
    }

    func setRecord(_ record: MemberRecord) {
        record.encode(into: UnsafeMutableRawBufferPointer(start: base, count: MemberRecord.encodedSize))
    }
}

/// Zeroed memory for the table, straight from the kernel: its pages are
/// zeroed as they are first touched, not all at once when the table grows.
/// When at least a huge page large, it is aligned to one and advised to be
/// backed by them.
private struct Block: ~Copyable, @unchecked Sendable {
    // Unchecked only for the pointer: the memory belongs to the one table
    // that holds the block, which is touched only under the cache's lock.
    static let hugePage = 2 << 20
    let base: UnsafeMutableRawPointer
    let count: Int

    /// Whether `base` came from `mmap` (else from the allocator).
    private let mapped: Bool

    init(count: Int) {
        let huge = count >= Self.hugePage
        let size = huge ? (count + Self.hugePage - 1) & ~(Self.hugePage - 1) : count
        let slack = huge ? Self.hugePage : 0
        self.count = size
        guard let region = mmap(nil, size + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              region != MAP_FAILED else {
            // Out of address space: the allocator's memory, zeroed now (and
            // a trap, as for any allocation, if there is none).
            base = .allocate(byteCount: size, alignment: Entry.size)
            memset(base, 0, size)
            mapped = false
            return
        }
        mapped = true
        guard huge else { base = region; return }
        // Trim to huge-page boundaries at both ends.
        let head = (Self.hugePage - Int(bitPattern: region) % Self.hugePage) % Self.hugePage
        if head > 0 { munmap(region, head) }
        if slack > head { munmap(region + head + size, slack - head) }
        base = region + head
        // Only advice: where the kernel gives no huge pages, small ones serve.
        _ = madvise(base, size, MADV_HUGEPAGE)
    }

    deinit { if mapped { munmap(base, count) } else { base.deallocate() } }
}

/// The cache's storage: entries placed where their key's hash points, with
/// linear probing, so a hit reads one entry and nothing else.
private struct Table: ~Copyable, Sendable {
    /// The commit every live entry was read at; -1 before the first.
    var commit = -1
    /// Starts at 1, so that zeroed entries are empty.
    var generation: UInt32 = 1
    /// The generation past which the table is cleared (the type's largest
    /// but for tests, which cannot make four billion commits).
    let lastGeneration: UInt32
    /// A power of two of entries, at most 3/4 of them live.
    var table = Block(count: 1024 * Entry.size)
    var slotCount = 1024
    /// Key bytes past the first ``Entry/inlineKeyBytes`` of each key.
    var overflow: [UInt8] = []
    /// Pack IDs the live entries found, by index; few, and kept small by
    /// starting over with the generation.
    var packs: [String] = []
    var count = 0

    init(lastGeneration: UInt32) { self.lastGeneration = lastGeneration }

    /// The most live entries before the table grows: 3/4 of it.
    var entryCapacity: Int { slotCount / 4 * 3 }

    private func entry(_ i: Int) -> Entry { Entry(base: table.base + i * Entry.size) }

    /// Makes every entry stale: nothing is released or cleared.
    mutating func startOver(commit: Int) {
        self.commit = commit
        if generation == lastGeneration {
            // Wrapped: entries of generation 1 … would look live again, so clear them once.
            memset(table.base, 0, slotCount * Entry.size)
            generation = 1
        } else {
            generation += 1
        }
        overflow.removeAll(keepingCapacity: true)
        packs.removeAll(keepingCapacity: true)
        count = 0
    }

    @inline(__always)
    func find(_ key: Key) -> Entry? {
        let mask = slotCount - 1
        var i = Int(truncatingIfNeeded: key.hash) & mask
        return overflow.withUnsafeBytes { overflow in
            while true {
                let e = entry(i)
                guard e.generation == generation else { return nil }
                if e.hash == key.hash, key.equals(e, overflow: overflow.baseAddress) { return e }
                i = (i + 1) & mask
            }
        }
    }

    mutating func insert(_ key: Key, pack: String, record: MemberRecord) {
        if let existing = find(key) {
            guard let p = packIndex(pack) else { return restart(key, pack: pack, record: record) }
            existing.setRecord(record)
            existing.pack = p
            return
        }
        guard key.count <= Int(UInt16.max) else { return }  // never an index key; not kept
        guard overflow.count + key.count <= Int(UInt32.max) else { return restart(key, pack: pack, record: record) }
        guard let p = packIndex(pack) else { return restart(key, pack: pack, record: record) }
        if count == entryCapacity { grow() }
        let e = freeSlot(for: key.hash, in: table.base, slots: slotCount)
        e.setRecord(record)
        e.hash = key.hash
        e.keyLength = key.count
        e.pack = p
        e.generation = generation
        e.overflowOffset = UInt32(overflow.count)
        key.write(into: e, overflow: &overflow)
        count += 1
    }

    /// Starts over at the same commit and puts the entry in: the overflow
    /// arena or the pack list is full.
    private mutating func restart(_ key: Key, pack: String, record: MemberRecord) {
        startOver(commit: commit)
        insert(key, pack: pack, record: record)
    }

    /// The first entry from where `hash` points that is not live, in a
    /// table of `slots` entries at `base`.
    private func freeSlot(for hash: UInt64, in base: UnsafeMutableRawPointer, slots: Int) -> Entry {
        let mask = slots - 1
        var i = Int(truncatingIfNeeded: hash) & mask
        while Entry(base: base + i * Entry.size).generation == generation { i = (i + 1) & mask }
        return Entry(base: base + i * Entry.size)
    }

    /// The index of `pack` in ``packs``, added if new; `nil` when the list
    /// is full (65,536 packs in one generation).
    private mutating func packIndex(_ pack: String) -> UInt16? {
        if let last = packs.last, last == pack { return UInt16(packs.count - 1) }
        if let i = packs.firstIndex(of: pack) { return UInt16(i) }
        guard packs.count <= Int(UInt16.max) else { return nil }
        packs.append(pack)
        return UInt16(packs.count - 1)
    }

    /// Twice the entries: this generation's are placed again in a new
    /// table, which keeps its memory for later generations.
    private mutating func grow() {
        let larger = Block(count: 2 * slotCount * Entry.size)
        for i in 0..<slotCount {
            let e = entry(i)
            guard e.generation == generation else { continue }
            memcpy(freeSlot(for: e.hash, in: larger.base, slots: 2 * slotCount).base, e.base, Entry.size)
        }
        table = larger
        slotCount *= 2
    }
}

import Foundation
import Synchronization
import AssetSystem

/// A read-only mapping of one installed archive file, shared by every value
/// that points into it and unmapped when the last of them is gone, and the
/// file itself once a descriptor of it was handed out.
final class ArchiveMap: @unchecked Sendable {
    // Unchecked only for the raw pointer: every property is immutable after
    // init (but the atomic `file`), and the mapping is read-only and never
    // remapped, so any thread may read through it.
    let key: UInt64
    let pack: String
    let base: UnsafeRawPointer?
    let count: Int
    /// The deallocator of every `Data` that points into this mapping: it
    /// holds the pages until the last such `Data` is gone. It is made once
    /// per mapping, so handing out bytes retains it rather than allocating a
    /// closure for each read.
    let deallocator: Data.Deallocator
    private let pages: Pages

    /// Owns the mapping. Held by the map and by its deallocator, so values
    /// that point into the pages keep them mapped without keeping the map.
    private final class Pages: @unchecked Sendable {
        // Unchecked: the region is immutable and read-only (see above).
        let region: MappedRegion
        init(_ region: consuming MappedRegion) { self.region = region }
    }

    init(region: consuming MappedRegion, key: UInt64, pack: String) {
        self.base = region.baseAddress
        self.count = region.count
        let pages = Pages(region)
        self.pages = pages
        self.deallocator = .custom { _, _ in withExtendedLifetime(pages) {} }
        self.key = key
        self.pack = pack
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// What keeps the pages mapped, for a borrower that holds it instead of a `Data`.
    var owner: AnyObject { pages }

    /// The archive file, held open from the first descriptor handout of it
    /// (``duplicateFile(opening:)``) until this map goes; -1 before. It
    /// lives and dies with the map, so whatever drops the map from the
    /// cache (a newer version mapped, the pack removed) retires it too.
    private let file = Atomic<Int32>(-1)

    deinit {
        let fd = file.load(ordering: .acquiring)
        if fd >= 0 { try? FileDescriptor(adopting: fd).close() }
    }

    /// A `dup` of the archive file (sharing one open file description with
    /// every other), opening it with `open` the first time. Returns `nil`
    /// when `open` does (the file is gone).
    func duplicateFile(opening open: () throws(StoreError) -> FileDescriptor?) throws(StoreError) -> FileDescriptor? {
        var fd = file.load(ordering: .acquiring)
        if fd < 0 {
            guard let opened = try open() else { return nil }
            let raw = opened.take()
            let (exchanged, original) = file.compareExchange(expected: -1, desired: raw, ordering: .acquiringAndReleasing)
            if exchanged {
                fd = raw
            } else {
                try? FileDescriptor(adopting: raw).close()  // another thread's is kept
                fd = original
            }
        }
        let held = FileDescriptor(adopting: fd)
        let copy = Result { () throws(Errno) in try held.duplicate() }
        _ = held.take()  // borrowed: the map keeps it
        do { return try copy.get() } catch { throw .system(error) }
    }
}

/// The mappings of the archives this process has read from, by archive key.
///
/// An archive file never changes once installed (a new version is a new
/// file with a new key), so a cached mapping stays right for its key for as
/// long as it lives. When a pack's newer version is mapped, the older one
/// leaves the cache; values still pointing into it keep it alive.
final class ArchiveCache: Sendable {
    /// `packs/`, where archives are opened (by name, not following symlinks).
    let packs: LayoutDirectory
    private let state = Mutex(State())

    private struct State {
        var maps: [UInt64: ArchiveMap] = [:]
        /// The mapping found last. Reads mostly go to the pack read just
        /// before, and a hit here costs one comparison instead of hashing.
        var last: ArchiveMap?
    }

    /// The last commit of the index a read saw (``firstToSee(_:)``).
    private let seenCommit = Atomic<Int>(-1)

    init(packs: LayoutDirectory) { self.packs = packs }

    /// Whether the caller is the first to see commit `commit` of the index:
    /// one atomic load for every other read. The first then lets go of the
    /// mappings that commit left no pack naming
    /// (``AssetStore/releaseReplacedArchives()``).
    @inline(__always)
    func firstToSee(_ commit: Int) -> Bool {
        let seen = seenCommit.load(ordering: .relaxed)
        return seen != commit && seenCommit.compareExchange(expected: seen, desired: commit, ordering: .relaxed).exchanged
    }

    /// The archives mapped now, by archive key and pack.
    var mapped: [(key: UInt64, pack: String)] { state.withLock { s in s.maps.map { (key: $0.key, pack: $0.value.pack) } } }

    /// Forgets every mapping `isCurrent` says no pack names any more. The
    /// mapping itself goes once no value points into it.
    func keepOnly(_ isCurrent: (_ key: UInt64, _ pack: String) -> Bool) {
        state.withLock { s in
            for (key, map) in s.maps where !isCurrent(key, map.pack) { s.maps[key] = nil }
            if let last = s.last, s.maps[last.key] == nil { s.last = nil }
        }
    }

    /// The mapping of pack `pack`'s archive `key`, mapping it on first use.
    /// Returns `nil` when the file is gone (removed or replaced after the
    /// caller's snapshot was taken).
    @inline(__always)
    func map(pack: String, key: UInt64) throws(StoreError) -> ArchiveMap? {
        let hit = state.withLock { s -> ArchiveMap? in
            if let last = s.last, last.key == key { return last }
            guard let found = s.maps[key] else { return nil }
            s.last = found
            return found
        }
        if let hit { return hit }
        return try mapArchive(pack: pack, key: key)
    }

    private func mapArchive(pack: String, key: UInt64) throws(StoreError) -> ArchiveMap? {
        let name = IndexSchema.archiveName(pack: pack, archiveKey: key)
        guard let fd = try packs.open(name) else { return nil }
        let map: ArchiveMap
        do {
            let status = try fd.status()
            var region = try MappedRegion(mapping: fd, count: Int(status.size))
            region.advise(.random)
            // Dropped by whichever reader maps the next version: never a stall.
            region.unmapsInBackground()
            map = ArchiveMap(region: region, key: key, pack: pack)
        } catch {
            throw .system(error.with(operation: error.operation, path: packs.path(of: name)))
        }
        return state.withLock { s in
            if let raced = s.maps[key] { return raced }
            for (k, v) in s.maps where v.pack == pack { s.maps[k] = nil }
            s.maps[key] = map
            s.last = map
            return map
        }
    }

    /// Forgets the mapping of `pack`, if any (after it is removed).
    func evict(pack: String) {
        state.withLock { s in
            for (k, v) in s.maps where v.pack == pack { s.maps[k] = nil }
            if s.last?.pack == pack { s.last = nil }
        }
    }
}

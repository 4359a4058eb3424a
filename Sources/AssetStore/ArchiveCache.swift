import Synchronization
import AssetSystem

/// A read-only mapping of one installed archive file, shared by every value
/// that points into it and unmapped when the last of them is gone.
final class ArchiveMap: @unchecked Sendable {
    // Unchecked only for the raw pointer: every property is immutable after
    // init, and the mapping is read-only and never remapped, so any thread
    // may read through it.
    let region: MappedRegion
    let key: UInt64
    let pack: String
    let base: UnsafeRawPointer?
    let count: Int

    init(region: consuming MappedRegion, key: UInt64, pack: String) {
        self.base = region.baseAddress
        self.count = region.count
        self.region = region
        self.key = key
        self.pack = pack
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}

/// The mappings of the archives this process has read from, by archive key.
///
/// An archive file never changes once installed (a new version is a new
/// file with a new key), so a cached mapping stays right for its key for as
/// long as it lives. When a pack's newer version is mapped, the older one
/// leaves the cache; values still pointing into it keep it alive.
final class ArchiveCache: Sendable {
    let packsPath: String
    private let maps = Mutex<[UInt64: ArchiveMap]>([:])

    init(packsPath: String) { self.packsPath = packsPath }

    /// The mapping of pack `pack`'s archive `key`, mapping it on first use.
    /// Returns `nil` when the file is gone (removed or replaced after the
    /// caller's snapshot was taken).
    @inline(__always)
    func map(pack: String, key: UInt64) throws(AssetPackError) -> ArchiveMap? {
        if let hit = maps.withLock({ $0[key] }) { return hit }
        return try mapArchive(pack: pack, key: key)
    }

    private func mapArchive(pack: String, key: UInt64) throws(AssetPackError) -> ArchiveMap? {
        let name = IndexSchema.archiveName(pack: pack, archiveKey: key)
        let path = packsPath + "/" + name
        let map: ArchiveMap
        do {
            let fd = try FileDescriptor.open(path, .readOnly)
            let status = try fd.status()
            let region = try MappedRegion(mapping: fd, count: Int(status.size))
            region.advise(.random)
            map = ArchiveMap(region: region, key: key, pack: pack)
        } catch where error == .noSuchFile {
            return nil
        } catch {
            throw .system(error)
        }
        return maps.withLock { maps in
            if let raced = maps[key] { return raced }
            for (k, v) in maps where v.pack == pack { maps[k] = nil }
            maps[key] = map
            return map
        }
    }

    /// Forgets the mapping of `pack`, if any (after it is removed).
    func evict(pack: String) {
        maps.withLock { maps in
            for (k, v) in maps where v.pack == pack { maps[k] = nil }
        }
    }
}

import Synchronization
import AssetSystem
import AssetStore

extension DescriptorDaemon {
    /// What each user has been handed of the sealed memory files (deflated
    /// members, and any member asked for standalone) that the store keeps in
    /// its ``MemoryFileCache``, so that every request for the same member of
    /// the same pack version gets the same file instead of a new inflation.
    /// The daemon's requests and its store's own handouts share that one
    /// cache; the daemon sets its limits.
    ///
    /// A sealed memory file cannot change, so one can go to any number of
    /// clients; each reply carries a new open description of it (its own
    /// file position), all sharing the one file's pages.
    ///
    /// The cache keeps at most ``capacity`` bytes and ``maximumFiles`` files,
    /// dropping the least recently used; dropping one only closes the
    /// cache's descriptor, clients keep theirs. Each user may hold, through
    /// its open connections, memory files of at most ``budget`` distinct
    /// bytes; a request past that is refused with `daemonBusy`. Bytes count
    /// once per file however often it is handed out, and stop counting when
    /// the last of the user's connections that got it closes.
    final class MemoryFiles: Sendable {
        /// A member of one pack version, whole (`standalone`) or as the
        /// store would hand it out.
        struct Key: Hashable, Sendable {
            var pack: String
            var path: String
            var standalone: Bool
            /// The index's record, whose archive key names the pack version.
            var record: MemberRecord

            var cacheKey: MemoryFileCache.Key {
                MemoryFileCache.Key(pack: pack, archiveKey: record.archiveKey, path: path, standalone: standalone)
            }
        }

        /// One descriptor to send copies of.
        final class File: Sendable {
            /// The cache's ``MemoryFileCache/File/id`` for a memory file:
            /// what the budget counts by.
            let id: Int?
            let descriptor: FileDescriptor
            let offset: Int64
            let length: Int64
            let source: MemberDescriptor.Source
            let crc32: UInt32

            init(_ d: consuming MemberDescriptor) {
                self.id = d.memoryFile
                self.offset = d.offset
                self.length = d.length
                self.source = d.source
                self.crc32 = d.crc32
                self.descriptor = FileDescriptor(adopting: d.take())
            }

            init(cached: MemoryFileCache.File) throws(Errno) {
                self.id = cached.id
                self.offset = 0
                self.length = cached.length
                self.source = .memory
                self.crc32 = cached.crc32
                self.descriptor = try cached.descriptor.duplicate()
            }

            /// A new open description of the file (with its own file
            /// position, at the member), to send.
            func opened() throws(Errno) -> MemberDescriptor {
                let fd = try descriptor.reopenReadOnly()
                if offset != 0 { try fd.seek(to: offset) }
                return MemberDescriptor(descriptor: fd, offset: offset, length: length, source: source, crc32: crc32, memoryFile: id)
            }
        }

        let capacity: Int64
        let maximumFiles: Int
        let budget: Int64
        private let cache: MemoryFileCache

        private struct Charge {
            var bytes: Int64
            /// Open connections of the user that were handed the file.
            var holders: Int
        }

        private struct State {
            var charges: [UInt32: [Int: Charge]] = [:]
            var charged: [UInt32: Int64] = [:]
        }

        private let state = Mutex(State())

        /// Sets `cache`'s limits to `capacity` bytes and `maximumFiles` files.
        init(cache: MemoryFileCache, capacity: Int64, maximumFiles: Int, budget: Int64) {
            self.cache = cache
            self.capacity = capacity
            self.maximumFiles = maximumFiles
            self.budget = budget
            cache.setLimits(MemoryFileCache.Limits(bytes: capacity, files: maximumFiles))
        }

        /// The cached file for `key`, or the descriptor `make` has the store
        /// hand out (making and caching the file, keyed by the store's own
        /// snapshot). `make` runs only when the cache has no file for `key`,
        /// so a refusal it throws comes before any inflation.
        func file(for key: Key, make: () throws(AssetPackError) -> MemberDescriptor) throws(AssetPackError) -> File {
            if let cached = cache.cached(key.cacheKey) {
                do { return try File(cached: cached) } catch { throw AssetPackError(error) }
            }
            return File(try make())
        }

        /// The refusal for `uid` asking for `bytes` more, or `nil` when they fit.
        func refusal(adding bytes: Int64, for uid: UInt32) -> AssetPackError? {
            let used = state.withLock { $0.charged[uid, default: 0] }
            guard used + bytes > budget else { return nil }
            return Self.refusal(uid: uid, used: used, adding: bytes, budget: budget)
        }

        /// Counts memory file `file` against `uid`, unless this connection
        /// (`given`) or another of the user's open ones already holds it.
        /// Returns the refusal when it does not fit.
        func charge(_ file: File, to uid: UInt32, given: inout Set<Int>) -> AssetPackError? {
            guard file.source == .memory, let id = file.id, !given.contains(id) else { return nil }
            let budget = self.budget
            let used: Int64? = state.withLock { s in
                var charges = s.charges[uid, default: [:]]
                if var charge = charges[id] {
                    charge.holders += 1
                    charges[id] = charge
                } else {
                    let used = s.charged[uid, default: 0]
                    guard used + file.length <= budget else { return used }
                    charges[id] = Charge(bytes: file.length, holders: 1)
                    s.charged[uid] = used + file.length
                }
                s.charges[uid] = charges
                return nil
            }
            if let used { return Self.refusal(uid: uid, used: used, adding: file.length, budget: budget) }
            given.insert(id)
            return nil
        }

        /// Forgets what a closing connection of `uid` was handed.
        func release(_ given: Set<Int>, of uid: UInt32) {
            guard !given.isEmpty else { return }
            state.withLock { s in
                var charges = s.charges[uid, default: [:]]
                for id in given {
                    guard var charge = charges[id] else { continue }
                    charge.holders -= 1
                    if charge.holders == 0 {
                        charges.removeValue(forKey: id)
                        s.charged[uid, default: 0] -= charge.bytes
                    } else {
                        charges[id] = charge
                    }
                }
                if charges.isEmpty {
                    s.charges.removeValue(forKey: uid)
                    s.charged.removeValue(forKey: uid)
                } else {
                    s.charges[uid] = charges
                }
            }
        }

        private static func refusal(uid: UInt32, used: Int64, adding bytes: Int64, budget: Int64) -> AssetPackError {
            AssetPackError(.daemonBusy, message: "uid \(uid) holds \(used) bytes of memory files through its open connections; "
                           + "\(bytes) more would pass its budget of \(budget) bytes (close descriptors and connections first)")
        }
    }
}

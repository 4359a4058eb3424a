import Dispatch
import Synchronization
import AssetSystem
import AssetStore

extension DescriptorDaemon {
    /// The sealed memory files the daemon has made (deflated members, and any
    /// member asked for standalone), kept so that every request for the same
    /// member of the same pack version gets the same file instead of a new
    /// inflation, and what each user has been handed of them.
    ///
    /// A sealed memory file cannot change, so one can go to any number of
    /// clients; each reply carries a new open description of it (its own
    /// file position), all sharing the one file's pages.
    ///
    /// The daemon keeps at most ``capacity`` bytes and ``maximumFiles`` files,
    /// dropping the least recently used; dropping one only closes the
    /// daemon's descriptor, clients keep theirs. Each user may hold, through
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
        }

        /// One descriptor the store made.
        final class File: Sendable {
            /// Unique for the daemon's life; what the budget counts by.
            let id: Int
            let descriptor: FileDescriptor
            let offset: Int64
            let length: Int64
            let source: MemberDescriptor.Source
            let crc32: UInt32

            init(id: Int, _ d: consuming MemberDescriptor) {
                self.id = id
                self.offset = d.offset
                self.length = d.length
                self.source = d.source
                self.crc32 = d.crc32
                self.descriptor = FileDescriptor(adopting: d.take())
            }

            /// A new open description of the file (with its own file
            /// position, at the member), to send.
            func opened() throws(Errno) -> MemberDescriptor {
                let fd = try descriptor.reopenReadOnly()
                if offset != 0 { try fd.seek(to: offset) }
                return MemberDescriptor(descriptor: fd, offset: offset, length: length, source: source, crc32: crc32)
            }
        }

        let capacity: Int64
        let maximumFiles: Int
        let budget: Int64

        private struct Cached {
            var file: File
            var used: UInt64
        }

        private struct Charge {
            var bytes: Int64
            /// Open connections of the user that were handed the file.
            var holders: Int
        }

        private struct State {
            var files: [Key: Cached] = [:]
            var bytes: Int64 = 0
            var tick: UInt64 = 0
            /// Keys being made, so that concurrent requests wait for one file.
            var making: [Key: DispatchGroup] = [:]
            var nextID = 0
            var charges: [UInt32: [Int: Charge]] = [:]
            var charged: [UInt32: Int64] = [:]
        }

        private let state = Mutex(State())

        init(capacity: Int64, maximumFiles: Int, budget: Int64) {
            self.capacity = capacity
            self.maximumFiles = maximumFiles
            self.budget = budget
        }

        /// What a ``file(for:make:)`` closure made.
        struct Made: ~Copyable {
            var descriptor: MemberDescriptor
            /// Whether the descriptor is known to hold the key's bytes.
            var cacheable: Bool

            /// Whether it may be cached: a memory file known to hold the key's
            /// bytes, and no larger than the whole cache.
            func keep(within capacity: Int64) -> Bool {
                cacheable && descriptor.source == .memory && descriptor.length <= capacity
            }

            consuming func file(id: Int) -> File { File(id: id, descriptor) }
        }

        private enum Step {
            case hit(File)
            case wait(DispatchGroup)
            case make(DispatchGroup, Int)
        }

        /// The cached file for `key`, or the one `make` makes (cached when
        /// `make` says it may be: `true` when the descriptor is known to hold
        /// `key`'s bytes, and only memory files are). Concurrent calls for one
        /// key wait for one `make`.
        func file(for key: Key, make: () throws(AssetPackError) -> Made) throws(AssetPackError) -> File {
            while true {
                let step = state.withLock { s -> Step in
                    if let hit = s.files[key] {
                        s.tick += 1
                        s.files[key]?.used = s.tick
                        return .hit(hit.file)
                    }
                    if let group = s.making[key] { return .wait(group) }
                    let group = DispatchGroup()
                    group.enter()
                    s.making[key] = group
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
                    let made: Made
                    do { made = try make() } catch {
                        state.withLock { _ = $0.making.removeValue(forKey: key) }
                        throw error
                    }
                    let keep = made.keep(within: capacity)
                    let file = made.file(id: id)
                    state.withLock { s in
                        s.making.removeValue(forKey: key)
                        guard keep else { return }
                        while let victim = s.files.min(by: { $0.value.used < $1.value.used }),
                              s.bytes + file.length > capacity || s.files.count >= maximumFiles {
                            s.files.removeValue(forKey: victim.key)
                            s.bytes -= victim.value.file.length
                        }
                        s.tick += 1
                        s.files[key] = Cached(file: file, used: s.tick)
                        s.bytes += file.length
                    }
                    return file
                }
            }
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
            guard file.source == .memory, !given.contains(file.id) else { return nil }
            let budget = self.budget
            let used: Int64? = state.withLock { s in
                var charges = s.charges[uid, default: [:]]
                if var charge = charges[file.id] {
                    charge.holders += 1
                    charges[file.id] = charge
                } else {
                    let used = s.charged[uid, default: 0]
                    guard used + file.length <= budget else { return used }
                    charges[file.id] = Charge(bytes: file.length, holders: 1)
                    s.charged[uid] = used + file.length
                }
                s.charges[uid] = charges
                return nil
            }
            if let used { return Self.refusal(uid: uid, used: used, adding: file.length, budget: budget) }
            given.insert(file.id)
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

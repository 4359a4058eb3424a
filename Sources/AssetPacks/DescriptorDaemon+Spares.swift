import Synchronization
import AssetSystem
import AssetStore

extension DescriptorDaemon {
    /// Spare open descriptions of the archives handed out last, opened ahead
    /// by a worker, so that a stored member's reply waits for no `openat`.
    ///
    /// Each spare is a descriptor of its own, never handed out twice: a
    /// client gets a new open description with a file position of its own,
    /// as when the archive is opened for its request. A spare is of one
    /// archive file (pack and archive key, ``ArchiveID``) and is handed out
    /// only for a record that names that key: an archive never changes, and
    /// a pack's new version is a new key, so a spare is never stale. Taking
    /// a spare of a pack's archive closes those of its other archives (an
    /// older version); at most ``archives`` archives keep spares (the least
    /// recently used go), ``depth`` each, and every one is closed on stop.
    final class Spares: Sendable {
        /// Spares kept for one archive.
        static let depth = 8
        /// Refilled once an archive has this few left, so that a worker is
        /// woken once for several handouts.
        static let refillBelow = depth / 2
        /// Descriptors the pool holds at most: ``depth`` for each of 4 archives.
        static let maximum = 4 * depth
        /// Descriptors the pool may hold when `room` are left for it.
        static func capacity(room: Int) -> Int { min(maximum, max(0, room) / depth * depth) }

        /// Archives that keep spares at once.
        let archives: Int

        private struct State {
            /// Each archive's spares (descriptor numbers, owned here), the
            /// most recently used archive last.
            var spares: [(archive: ArchiveID, numbers: [Int32])] = []
            /// Archives a refill was asked for and has not yet run.
            var refilling: Set<ArchiveID> = []
            var stopped = false
        }

        private let state = Mutex(State())

        /// A pool of at most `capacity` descriptors (none when 0).
        init(capacity: Int) { archives = capacity / Self.depth }

        /// A spare of `archive`, taken out of the pool, or `nil`; closes the
        /// spares of the pack's other archives. `refill` is set when a refill
        /// should be asked for (``refill(_:opening:)``).
        func take(_ archive: ArchiveID, refill: inout Bool) -> FileDescriptor? {
            guard archives > 0 else { return nil }
            var retired: [Int32] = []
            let (taken, wanted) = state.withLock { s -> (Int32?, Bool) in
                guard !s.stopped else { return (nil, false) }
                var entry: (archive: ArchiveID, numbers: [Int32])?
                s.spares.removeAll { e in
                    if e.archive == archive { entry = e; return true }
                    if e.archive.pack == archive.pack { retired += e.numbers; return true }
                    return false
                }
                var numbers = entry?.numbers ?? []
                let taken = numbers.popLast()
                s.spares.append((archive, numbers))
                if s.spares.count > archives { retired += s.spares.removeFirst().numbers }
                let refill = numbers.count < Self.refillBelow && s.refilling.insert(archive).inserted
                return (taken, refill)
            }
            Self.close(retired)
            if wanted { refill = true }
            guard let taken else { return nil }
            return FileDescriptor(adopting: taken)
        }

        /// Opens spares of `archive` until it has ``depth`` (run by a
        /// worker): none when the pool no longer keeps the archive (a
        /// newer one took its place) or `open` finds the file gone or fails.
        func refill(_ archive: ArchiveID, opening open: () -> FileDescriptor?) {
            while true {
                let wanted = state.withLock { s -> Bool in
                    guard !s.stopped, let e = s.spares.first(where: { $0.archive == archive }), e.numbers.count < Self.depth else {
                        s.refilling.remove(archive)
                        return false
                    }
                    return true
                }
                guard wanted else { return }
                guard let fd = open() else {
                    _ = state.withLock { $0.refilling.remove(archive) }
                    return
                }
                let number = fd.take()
                let kept = state.withLock { s -> Bool in
                    guard !s.stopped, let i = s.spares.firstIndex(where: { $0.archive == archive }), s.spares[i].numbers.count < Self.depth else {
                        return false
                    }
                    s.spares[i].numbers.append(number)
                    return true
                }
                if !kept { Self.close([number]) }
            }
        }

        /// The archives that have spares now.
        var held: [ArchiveID] { state.withLock { $0.spares.map(\.archive) } }

        /// Closes the spares of every archive `isGone` names (another process
        /// updated or removed its pack), so that the daemon does not hold an
        /// unlinked file — its disk space — open until a request for another
        /// version of the pack, or its stop. Returns how many it closed.
        @discardableResult
        func close(where isGone: (ArchiveID) -> Bool) -> Int {
            let closing = state.withLock { s -> [Int32] in
                var closing: [Int32] = []
                s.spares.removeAll { e in
                    guard isGone(e.archive) else { return false }
                    closing += e.numbers
                    return true
                }
                return closing
            }
            Self.close(closing)
            return closing.count
        }

        /// Closes every spare and keeps no more (on stop).
        func closeAll() {
            let all = state.withLock { s -> [Int32] in
                s.stopped = true
                defer { s.spares = [] }
                return s.spares.flatMap(\.numbers)
            }
            Self.close(all)
        }

        /// The spares held, for tests and the log.
        var count: Int { state.withLock { $0.spares.reduce(0) { $0 + $1.numbers.count } } }

        private static func close(_ numbers: [Int32]) {
            for n in numbers { try? FileDescriptor(adopting: n).close() }
        }
    }
}

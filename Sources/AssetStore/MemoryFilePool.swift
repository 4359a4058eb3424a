import Dispatch
import Synchronization
import AssetSystem

/// Empty memory files made ahead, so that the first handout of a member
/// fills and seals one instead of also making it: `memfd_create` and the
/// read-only `open` of `/proc/self/fd/N` (about 2 µs each, a third of the
/// memory-file system calls for a member of 1–16 KiB) run on a background
/// queue, in batches, so the queue is woken once per ``capacity`` / 2
/// files taken, not once per file.
///
/// The pool holds at most ``capacity`` files (two descriptors each: the
/// read-write one that fills and seals it, the read-only one handed out).
/// It is filled on first use, not before, so a store that never hands out
/// a memory file holds none; a ``take()`` that leaves half of it or less
/// starts a refill, and one that finds it empty makes a file at once. The
/// files are all named ``name`` (a memfd's name is fixed when it is made,
/// before its member is known). The files still in the pool close with it.
final class MemoryFilePool: Sendable {
    /// Files kept ready by a store's pool.
    static let defaultCapacity = 16

    /// The name of every file made (`/proc/<pid>/fd` shows `memfd:<name>`).
    static let defaultName = "assetpacks"

    let capacity: Int
    let name: String

    private struct State {
        /// Descriptor numbers of the ready files, owned by the pool.
        var ready: [(writable: Int32, readOnly: Int32)] = []
        var refilling = false
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue

    /// A pool of `capacity` files named `name`, refilled on `queue`.
    init(capacity: Int = defaultCapacity, name: String = defaultName, queue: DispatchQueue) {
        precondition(capacity >= 0, "MemoryFilePool needs a capacity of 0 or more")
        self.capacity = capacity
        self.name = name
        self.queue = queue
    }

    deinit {
        for file in state.withLock({ $0.ready }) {
            _ = MemoryFile.Blank(adoptingWritable: file.writable, readOnly: file.readOnly)
        }
    }

    /// Files ready now.
    var count: Int { state.withLock { $0.ready.count } }

    /// A ready file, or a new one when none is.
    ///
    /// - Throws: `Errno` from `memfd_create` or `open`, when one is made now.
    func take() throws(Errno) -> MemoryFile.Blank {
        let (file, refill) = state.withLock { s in
            let file = s.ready.popLast()
            let refill = capacity > 0 && !s.refilling && s.ready.count <= capacity / 2
            if refill { s.refilling = true }
            return (file, refill)
        }
        if refill {
            // In place on a background thread: see ``BackgroundWork``.
            if BackgroundWork.isCurrent { self.refill() } else { queue.async { [weak self] in self?.refill() } }
        }
        if let file { return MemoryFile.Blank(adoptingWritable: file.writable, readOnly: file.readOnly) }
        return try MemoryFile.blank(name: name)
    }

    /// Makes files until the pool is full (or making one fails: the next
    /// ``take()`` makes its own and tries again).
    private func refill() {
        defer { state.withLock { $0.refilling = false } }
        while state.withLock({ $0.ready.count < capacity }) {
            guard let made = try? MemoryFile.blank(name: name) else { return }
            let file = made.take()
            let kept = state.withLock { s in
                guard s.ready.count < capacity else { return false }
                s.ready.append(file)
                return true
            }
            if !kept { _ = MemoryFile.Blank(adoptingWritable: file.writable, readOnly: file.readOnly) }
        }
    }
}

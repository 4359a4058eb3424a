import Dispatch
import Synchronization
import AssetArchive
import AssetSystem

/// The SHA-256 of a file that is being appended to, computed on a serial
/// queue of its own, behind the writer: the writer says how far the file is
/// written (``feed(upTo:)``), and the queue reads those bytes back through
/// its own read-only description of the file (`pread`, from the page cache)
/// and hashes them. With two cores, the hash of a download costs its
/// transfer (libcurl's thread receiving and writing) almost nothing.
///
/// Every byte hashed is read back from the file, so the digest is that of
/// the bytes on disk, in order, from offset 0: a file cut short under it
/// (another writer) is a read that comes back short, reported by
/// ``finish()``, never a wrong digest.
final class TrailingHash: Sendable {
    private struct State: ~Copyable {
        var hasher = SHA256()
        /// Bytes hashed, from offset 0.
        var hashed: UInt64 = 0
        /// The first read that failed or came back short; nothing is
        /// hashed after it.
        var failure: Errno?
        /// The read buffer, reused.
        var buffer = [UInt8](repeating: 0, count: TrailingHash.piece)
    }

    /// The most bytes read back and hashed at once.
    static let piece = 1 << 20

    private let file: FileDescriptor
    private let path: String
    private let queue = DispatchQueue(label: "AssetDelivery.TrailingHash")
    /// Touched on the queue, and by the writer only once the queue is
    /// drained: never contended.
    private let state = Mutex(State())
    /// Counts restarts: work fed before the latest one is dropped unread.
    private let generation = Atomic<UInt64>(0)

    /// Hashes `file` (a read-only description of its own) from offset 0;
    /// `path` names it in errors.
    init(file: consuming FileDescriptor, path: String) {
        self.file = file
        self.path = path
    }

    /// Hashes, after what is already queued, the bytes up to offset `end`
    /// (all written by then).
    func feed(upTo end: UInt64) {
        let fedIn = generation.load(ordering: .relaxed)
        queue.async { [self] in
            state.withLock { state in
                while state.failure == nil && state.hashed < end && generation.load(ordering: .relaxed) == fedIn {
                    let want = Int(min(UInt64(Self.piece), end - state.hashed))
                    let offset = Int64(state.hashed)
                    let got = state.buffer.withUnsafeMutableBytes { b in
                        Result { () throws(Errno) in try file.read(into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]), at: offset) }
                    }
                    switch got {
                    case .success(let n) where n == want:
                        state.buffer.withUnsafeBytes { state.hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                        state.hashed += UInt64(n)
                    case .success:
                        state.failure = Errno.ioError.with(operation: "pread: the file is shorter than written", path: path)
                    case .failure(let error):
                        state.failure = error.with(operation: error.operation, path: path)
                    }
                }
            }
        }
    }

    /// Waits for everything fed, and returns the digest of the bytes up to
    /// the last `end` fed.
    ///
    /// - Throws: the first failed or short read.
    func finish() throws(Errno) -> [UInt8] {
        queue.sync {}
        return try state.withLock { (state) throws(Errno) -> [UInt8] in
            if let failure = state.failure { throw failure }
            let copy = state.hasher
            return copy.finalize()
        }
    }

    /// Drops everything fed (what is queued stops at its next piece), then
    /// forgets it: the file starts again from byte 0.
    func restart() {
        generation.add(1, ordering: .relaxed)
        queue.sync {}
        state.withLock { state in
            state.hasher = SHA256()
            state.hashed = 0
            state.failure = nil
        }
    }
}

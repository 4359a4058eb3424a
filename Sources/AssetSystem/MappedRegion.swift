internal import CAssetShim

/// A shared, read-only memory mapping of a whole file, unmapped when it goes
/// out of scope.
///
/// The mapping stays valid after the descriptor it was made from is closed,
/// and after the file is unlinked (POSIX keeps the pages alive).
public struct MappedRegion: ~Copyable, @unchecked Sendable {
    // The pages are never written and never remapped while this value lives, so
    // sharing the read-only pointer between threads is safe.

    /// The first mapped byte, or `nil` for an empty file (nothing is mapped).
    public let baseAddress: UnsafeRawPointer?
    /// The number of mapped bytes: the file's size when it was mapped.
    public let count: Int
    /// Unmap on a background thread instead of in `deinit` (``unmapsInBackground()``).
    private var deferred = false

    /// Maps the first `count` bytes of `descriptor` read-only and shared.
    /// `count` zero maps nothing. The corresponding C function is `mmap`.
    public init(mapping descriptor: borrowing FileDescriptor, count: Int) throws(Errno) {
        precondition(count >= 0)
        self.count = count
        guard count > 0 else { baseAddress = nil; return }
        var address: UnsafeMutableRawPointer?
        let fd = descriptor.rawValue
        _ = try valueOrErrno("mmap") { cas_mmap_readonly(fd, count, &address) }
        baseAddress = UnsafeRawPointer(address)
    }

    deinit {
        guard let baseAddress else { return }
        guard deferred && count >= Self.backgroundThreshold else {
            _ = cas_munmap(UnsafeMutableRawPointer(mutating: baseAddress), count)
            return
        }
        let address = UInt(bitPattern: baseAddress)
        let count = count
        BackgroundWork.later { Self.unmapGradually(UnsafeMutableRawPointer(bitPattern: address)!, count) }
    }

    /// Unmaps `count` bytes at `address` ``unmapPiece`` at a time, giving
    /// way between pieces (``BackgroundWork/giveWay()``), so that one
    /// `munmap` holds a CPU for no longer than its piece.
    private static func unmapGradually(_ address: UnsafeMutableRawPointer, _ count: Int) {
        var offset = 0
        while offset < count {
            let piece = min(unmapPiece, count - offset)
            _ = cas_munmap(address + offset, piece)
            offset += piece
            BackgroundWork.giveWay()
        }
    }

    /// From now on, the mapping is released on the process's background
    /// thread (``BackgroundWork/later(_:)``) when this value goes away, if it
    /// is large (``backgroundThreshold``); a thread at background priority
    /// releases it in place.
    ///
    /// `munmap` costs in proportion to the pages the process touched: about
    /// 110–150 ms for a 600 MB mapping read all over. A reader that drops
    /// the last reference to an archive mapping (the cache forgetting the
    /// previous version of a pack after an update) would stall that long;
    /// with this, the thread that drops it goes on at once. Nothing can use
    /// the pages meanwhile: the value that owned them is gone.
    public mutating func unmapsInBackground() { deferred = true }

    /// A mapping released in the background goes a piece of this many bytes
    /// (whole pages) at a time, the thread giving way between two: about
    /// 100 µs of page-table work each (`munmap` costs about 0.8 µs per page
    /// touched). The background thread runs at nice 19, yet when both CPUs
    /// are busy the scheduler still gives it one of them now and then — and
    /// without a yield it kept it until the next tick, 4 ms, stalling the
    /// reader it took it from (traced).
    static let unmapPiece = 512 << 10

    /// Mappings smaller than this are unmapped in place: their `munmap` is
    /// cheaper than a hand-off to the background thread.
    public static let backgroundThreshold = 4 << 20

    /// The mapped bytes.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: baseAddress, count: count) }

    /// Advice for the kernel on how a range will be read.
    public enum Advice: Int32, Sendable {
        case normal = 0, random = 1, sequential = 2, willNeed = 3, dontNeed = 4
    }

    /// Tells the kernel how `range` (byte offsets into the mapping) will be
    /// read. Errors are ignored: advice is a hint. The corresponding C function is `madvise`.
    public func advise(_ advice: Advice, range: Range<Int>? = nil) {
        guard let baseAddress, count > 0 else { return }
        let r = range ?? 0..<count
        let page = Int(cas_page_size())
        let start = r.lowerBound / page * page
        let end = min(count, r.upperBound)
        guard end > start else { return }
        _ = cas_madvise(UnsafeMutableRawPointer(mutating: baseAddress + start), end - start, advice.rawValue)
    }

    /// The system page size.
    public static var pageSize: Int { Int(cas_page_size()) }
}

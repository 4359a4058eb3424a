/// Bytes lent out without a `Data` around them: a pointer and the object
/// that keeps it valid. For the C library, whose callers hold a handle to
/// the owner (one retain) instead of a `Data` in a box (two allocations).
public struct BorrowedBytes: @unchecked Sendable {
    // Unchecked only for the pointer: the bytes are immutable (a read-only
    // mapping, or an inflated buffer nothing writes after), and valid for
    // as long as `owner` lives.
    public let bytes: UnsafeRawBufferPointer
    /// Keeps `bytes` valid while it lives: the archive mapping's pages, or
    /// the inflated buffer.
    public let owner: AnyObject
}

/// An inflated member's buffer, freed with the last reference.
private final class InflatedBytes {
    let buffer: UnsafeMutableRawBufferPointer
    init(count: Int) { buffer = .allocate(byteCount: max(count, 1), alignment: 16) }
    deinit { buffer.deallocate() }
}

extension AssetStore {
    /// ``contents(at:inPack:)`` as a pointer and its owner instead of a
    /// `Data`: a stored member's bytes in the shared mapping (the owner
    /// keeps it mapped, also after the pack is updated or removed), a
    /// deflated member inflated into a buffer of its own and CRC-checked.
    ///
    /// - Throws: as ``contents(at:inPack:)``.
    public func borrowedContents(at path: String, inPack pack: String? = nil) throws(StoreError) -> BorrowedBytes {
        try withMember(path, inPack: pack) { (id, record, map) throws(StoreError) in
            try checkLimits(of: record, path: path, pack: id)
            let start = try Self.dataStart(of: record, path: path, pack: id, in: map)
            switch record.method {
            case .stored:
                return BorrowedBytes(bytes: UnsafeRawBufferPointer(start: start, count: Int(record.size)), owner: map.owner)
            case .deflated:
                let count = Int(record.size)
                let inflated = InflatedBytes(count: count)
                try Self.inflate(record, path: path, pack: id, in: map, into: UnsafeMutableRawBufferPointer(rebasing: inflated.buffer[..<count]))
                return BorrowedBytes(bytes: UnsafeRawBufferPointer(start: inflated.buffer.baseAddress, count: count), owner: inflated)
            }
        }
    }
}

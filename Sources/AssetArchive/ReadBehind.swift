import AssetSystem

/// Drops the pages of a file mapping behind a sequential reader, so that
/// reading a whole archive keeps about ``window`` bytes of it resident
/// instead of all of it.
///
/// The file's data stays in the page cache: what is dropped is only the
/// process's mapping of it (its resident set), and reading the same bytes
/// again faults them back in. Going backwards is allowed and drops nothing.
public struct ReadBehind {
    /// The whole mapping, which must be of a file (see ``MappedRegion/release(_:)``).
    public let mapping: UnsafeRawBufferPointer
    /// How many bytes are left resident behind the reader before they are dropped.
    public let window: Int
    /// Everything before this offset has been dropped.
    public private(set) var released = 0

    /// Follows a reader of `mapping`, a file mapping (an ``ArchiveMap`` or a
    /// ``MappedRegion``'s bytes — never anonymous memory).
    public init(mapping: UnsafeRawBufferPointer, window: Int = ReadBehind.defaultWindow) {
        self.init(mapping: mapping, start: 0, window: window)
    }

    /// Follows a reader of `mapping` that starts at offset `start`: nothing
    /// before it is ever dropped.
    public init(mapping: UnsafeRawBufferPointer, start: Int, window: Int = ReadBehind.defaultWindow) {
        self.mapping = mapping
        self.window = max(window, MappedRegion.pageSize)
        self.released = min(max(start, 0), mapping.count) / MappedRegion.pageSize * MappedRegion.pageSize
    }

    /// The bytes a reader hands on at a time, and what it may keep resident.
    public static let defaultWindow = 8 << 20

    /// The reader is done with everything before `offset`: once that is a
    /// window or more past what was dropped, drop it. A reader at
    /// background priority gives way here (``BackgroundWork/giveWay()``):
    /// every walk over a mapping reports its progress through this.
    public mutating func reached(_ offset: Int) {
        BackgroundWork.giveWay()
        guard offset - released >= window else { return }
        drop(to: offset)
    }

    /// Drops everything before `offset`, however little.
    public mutating func finish(at offset: Int) {
        guard offset > released else { return }
        drop(to: offset)
    }

    private mutating func drop(to offset: Int) {
        let end = min(offset, mapping.count)
        MappedRegion.release(UnsafeRawBufferPointer(rebasing: mapping[released ..< end]))
        released = end / MappedRegion.pageSize * MappedRegion.pageSize
    }
}

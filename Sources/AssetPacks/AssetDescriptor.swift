public import Foundation
import Synchronization
import AssetArchive
import AssetStore
import AssetSystem

/// A read-only, close-on-exec file descriptor with the byte range that holds
/// one member, as Android's `AssetFileDescriptor`; the caller owns it.
///
/// ```swift
/// let video = try manager.descriptor(for: "Videos/Intro.m4v")
/// defer { try? video.close() }
/// player.open(fd: video.fileDescriptor, offset: video.offset, length: video.length)
/// ```
///
/// - Important: An ``Source/archive`` descriptor is a descriptor of the
///   **whole installed archive**: the member is only the range
///   `offset ..< offset + length`. Reading it to end-of-file runs past the
///   member into the next ones. Hand it only to consumers that honour the
///   offset and length (media players, `mmap` of a range, `pread`), or read
///   it with ``read(into:at:)``, which never leaves the member. For a
///   consumer that reads to end-of-file, ask for ``Options/standalone``: a
///   sealed memory file holding exactly the member at offset 0.
///
/// - Important: The descriptor is a `dup` of one the manager keeps open
///   (the archive's, or the cached memory file's), as Android's are of the
///   APK's: every descriptor of the same file that this process holds shares
///   one file position. Read it with ``read(into:at:)`` or `pread` (or `mmap`
///   the range), which never use the position, whoever else reads; `read`
///   and `lseek` move it for all of them. It is set to ``offset`` when the
///   descriptor is handed out. For a consumer that reads with `read` while
///   others may read the same member, or to pass the descriptor to another
///   process, ask for ``Options/ownOffset``. ``AssetPackClient`` follows the
///   same rule for the descriptors it gets from the daemon: those of one
///   archive share a position unless asked for with `.ownOffset`, though
///   never with another process's.
///
/// Close it with ``close()``; a descriptor that is never closed is closed
/// when the last reference goes. ``take()`` hands ownership of the number to
/// the caller (to pass it on, or to another library that will close it).
public final class AssetDescriptor: Sendable {
    /// Where the bytes come from.
    public enum Source: String, Sendable, Hashable {
        /// The installed archive, positioned at `offset`: the member is the
        /// range `offset ..< offset + length` of it (a stored member). The
        /// file goes on past the member.
        case archive
        /// A sealed memory file (`memfd`, sealed against writing, growing
        /// and shrinking) holding exactly the member at offset 0: its end is
        /// the member's end (a deflated member, or any member asked for
        /// ``Options/standalone``).
        case memory
    }

    /// How ``AssetPackManager/descriptor(for:searchingInAssetPackWithID:options:)`` hands out a member.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Always a descriptor whose end is the member's end: a sealed memory
        /// file with exactly the member's bytes at offset 0, for consumers
        /// that cannot take an offset or read to end-of-file. A stored member
        /// is copied into it once; Linux has no way to open a sub-range of a
        /// file as a file of its own.
        public static let standalone = Options(rawValue: 1)

        /// A new open file description with a file position of its own,
        /// instead of a `dup` that shares one with every other descriptor of
        /// the same file in this process: for a consumer that reads with
        /// `read`, and for a descriptor passed to another process. It costs
        /// an `open` per call (of the archive, or of the memory file through
        /// `/proc/self/fd`).
        public static let ownOffset = Options(rawValue: 2)
    }

    /// Where the member starts in the file.
    public let offset: Int64
    /// The member's length in bytes.
    public let length: Int64
    public let source: Source
    /// The CRC-32 the member's bytes must have, as the pack recorded it: a
    /// consumer that copies the bytes can check them with
    /// ``checksum(_:continuing:)``.
    public let crc32: UInt32

    private let fd: Mutex<Int32>

    init(_ descriptor: consuming MemberDescriptor) {
        offset = descriptor.offset
        length = descriptor.length
        source = descriptor.source == .archive ? .archive : .memory
        crc32 = descriptor.crc32
        fd = Mutex(descriptor.take())
    }

    deinit {
        let raw = fd.withLock { $0 }
        if raw >= 0 { try? FileDescriptor(adopting: raw).close() }
    }

    /// The descriptor's number. Its file position is at ``offset`` when it
    /// is handed out (shared unless ``Options/ownOffset``).
    ///
    /// - Precondition: the descriptor is neither closed nor taken.
    public var fileDescriptor: Int32 {
        let raw = fd.withLock { $0 }
        precondition(raw >= 0, "AssetDescriptor used after close() or take()")
        return raw
    }

    /// Whether ``close()`` or ``take()`` has been called.
    public var isClosed: Bool { fd.withLock { $0 } < 0 }

    /// Closes the descriptor. The corresponding C function is `close`.
    ///
    /// - Throws: `AssetPackError` with code `.system` when `close` reports
    ///   an error (the descriptor is closed all the same).
    /// - Precondition: the descriptor is neither closed nor taken.
    public func close() throws(AssetPackError) {
        let raw = fd.withLock { fd -> Int32 in
            defer { fd = -1 }
            return fd
        }
        precondition(raw >= 0, "AssetDescriptor closed twice, or after take()")
        do { try FileDescriptor(adopting: raw).close() } catch { throw AssetPackError(error) }
    }

    /// Gives up ownership: returns the number, which the caller must close.
    ///
    /// - Precondition: the descriptor is neither closed nor taken.
    public func take() -> Int32 {
        let raw = fd.withLock { fd -> Int32 in
            defer { fd = -1 }
            return fd
        }
        precondition(raw >= 0, "AssetDescriptor taken twice, or after close()")
        return raw
    }

    /// Reads member bytes starting `position` bytes into the member, never
    /// past its end; returns how many were read (0 at the member's end). The
    /// file position does not move. The corresponding C function is `pread`.
    ///
    /// - Throws: `.system` when `pread` fails.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at position: Int64) throws(AssetPackError) -> Int {
        precondition(position >= 0, "negative position")
        guard position < length, buffer.count > 0 else { return 0 }
        let want = Int(min(Int64(buffer.count), length - position))
        let raw = fileDescriptor
        // Borrow the number for one pread; ownership stays here.
        let borrowed = FileDescriptor(adopting: raw)
        let result = Result { () throws(Errno) in
            try borrowed.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]), at: offset + position)
        }
        _ = borrowed.take()
        do { return try result.get() } catch { throw AssetPackError(error) }
    }

    /// The CRC-32 of `bytes` (ZIP's), continuing from `crc` — the result for
    /// earlier bytes — when the member is read in parts.
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        CRC32.checksum(bytes, continuing: crc)
    }

    /// The member's bytes, read whole.
    ///
    /// - Throws: `.system` when a read fails or the file ends before the member does.
    public func data() throws(AssetPackError) -> Data {
        var data = Data(count: Int(length))
        var done: Int64 = 0
        while done < length {
            let got = try data.withUnsafeMutableBytes { b in
                Result { () throws(AssetPackError) in
                    try read(into: UnsafeMutableRawBufferPointer(rebasing: b[Int(done)...]), at: done)
                }
            }.get()
            guard got > 0 else {
                throw AssetPackError(Errno.ioError.with(operation: "read descriptor: the file ended inside the member"))
            }
            done += Int64(got)
        }
        return data
    }
}

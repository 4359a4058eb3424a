import Foundation
import Testing
import AssetSystem
import TestSupport

@Suite struct MappedRegionTests {
    @Test func mapsTheWholeFileAndOutlivesUnlink() throws {
        let dir = TemporaryDirectory()
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0) }
        let path = try dir.write("m", bytes)
        let region = try MappedRegion(mapping: try FileDescriptor.open(path), count: bytes.count)
        try FileSystem.unlink(path)
        #expect(Array(region.bytes) == bytes)
        region.advise(.willNeed, range: 100..<200)
    }

    /// Whether `/proc/self/maps` shows a mapping of `path`, read to its end
    /// with `read` calls (a file of size 0: under the whole suite in
    /// parallel, Foundation's `String(contentsOfFile:)` of it came back
    /// without mappings that were there).
    static func isMapped(_ path: String) throws -> Bool {
        String(decoding: try FileDescriptor.open("/proc/self/maps").readToEnd(), as: UTF8.self).contains(path)
    }

    /// A large mapping marked for the background is gone soon after its
    /// value, without the thread that dropped it unmapping it — all of it,
    /// though it is released piece by piece and its size is no multiple of
    /// a piece; a small one, or one not marked, is gone at once.
    @Test func largeMappingsCanBeReleasedInTheBackground() throws {
        let dir = TemporaryDirectory()
        let largeCount = MappedRegion.backgroundThreshold + 3 * 4096
        let large = try dir.write("large.bin", [UInt8](repeating: 7, count: largeCount))
        let small = try dir.write("small.bin", [UInt8](repeating: 7, count: MappedRegion.backgroundThreshold - 4096))
        let plain = try dir.write("plain.bin", [UInt8](repeating: 7, count: MappedRegion.backgroundThreshold))
        do {
            var region = try MappedRegion(mapping: try FileDescriptor.open(large), count: largeCount)
            region.unmapsInBackground()
            #expect(region.bytes.last == 7)
            #expect(try Self.isMapped(large))
        }
        #expect(try eventually(timeout: 30) { try !Self.isMapped(large) })
        do {
            var region = try MappedRegion(mapping: try FileDescriptor.open(small), count: MappedRegion.backgroundThreshold - 4096)
            region.unmapsInBackground()
            #expect(try Self.isMapped(small))
        }
        #expect(try !Self.isMapped(small))
        do {
            let region = try MappedRegion(mapping: try FileDescriptor.open(plain), count: MappedRegion.backgroundThreshold)
            #expect(try Self.isMapped(plain) && region.count > 0)
        }
        #expect(try !Self.isMapped(plain))
    }

    @Test func emptyFileMapsNothing() throws {
        let dir = TemporaryDirectory()
        let region = try MappedRegion(mapping: try FileDescriptor.open(dir.write("e", [])), count: 0)
        #expect(region.baseAddress == nil)
        #expect(region.bytes.isEmpty)
    }
}

@Suite struct MemoryFileTests {
    @Test func sealedFileHoldsTheBytesAndRefusesWrites() throws {
        let bytes = Array("sealed contents".utf8)
        let fd = try MemoryFile.sealed(name: "t", copying: bytes)
        #expect(try MemoryFile.seals(of: fd) & 0x0f == 0x0f)
        #expect(try fd.read(count: 100, at: 0) == bytes)
        #expect(throws: Errno.self) { try fd.write([1], at: 0) }
        // Even a writable reopen cannot change a write-sealed file.
        let writable = try FileDescriptor.open("/proc/self/fd/\(fd.rawValue)", .readWrite)
        #expect(throws: Errno.self) { try writable.write([1], at: 0) }
        #expect(throws: Errno.self) { try writable.resize(to: 1) }
    }

    /// Both ways of filling one: a buffer then `write` (up to
    /// `bufferedLimit`), and a writable mapping (above it); and empty.
    @Test(arguments: [0, 1, 4096, 16_385, MemoryFile.bufferedLimit, MemoryFile.bufferedLimit + 1, 3 << 20])
    func filledFilesHoldExactlyTheBytesSealedAndReadOnly(count: Int) throws {
        let fd = try MemoryFile.sealed(name: "t", count: count) { (buffer: UnsafeMutableRawBufferPointer) throws(Never) in
            for i in 0 ..< buffer.count { buffer[i] = UInt8(truncatingIfNeeded: i &* 31 &+ i >> 12) }
        }
        #expect(try fd.status().size == Int64(count))
        #expect(try MemoryFile.seals(of: fd) & 0x0f == 0x0f)
        #expect(fcntl(fd.rawValue, F_GETFL) & O_ACCMODE == O_RDONLY)
        #expect(lseek(fd.rawValue, 0, SEEK_CUR) == 0)
        let back = try fd.read(count: count + 1, at: 0)
        #expect(back.count == count)
        #expect(back.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset &* 31 &+ $0.offset >> 12) })
    }

    @Test func duplicatesShareTheFilePosition() throws {
        let fd = try MemoryFile.sealed(name: "t", copying: Array(0 ..< 100))
        let copy = try fd.duplicate()
        #expect(copy.rawValue != fd.rawValue)
        #expect(fcntl(copy.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(lseek(fd.rawValue, 42, SEEK_SET) == 42)
        #expect(lseek(copy.rawValue, 0, SEEK_CUR) == 42)
        let own = try fd.reopenReadOnly()
        #expect(lseek(own.rawValue, 0, SEEK_CUR) == 0)
    }

    @Test func fillErrorsArePassedThrough() {
        struct Refused: Error {}
        #expect {
            _ = try MemoryFile.sealed(name: "t", count: 10) { (_: UnsafeMutableRawBufferPointer) throws(Refused) in throw Refused() }
        } throws: { error in
            if case .fill = error as? MemoryFileError<Refused> { return true }
            return false
        }
    }
}

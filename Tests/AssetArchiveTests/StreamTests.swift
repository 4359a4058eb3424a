import AssetArchive
import AssetSystem
import Foundation
import Testing
import TestSupport

/// `ZipArchive.stream`: a member in pieces no bigger than the buffer, the
/// same bytes as `extract`, the CRC-32 checked before the last piece, a
/// consumer that stops, and pages of the mapping dropped as it goes.
@Suite struct StreamTests {
    let directory = TemporaryDirectory("stream")
    let deflatedBytes = text(lines: 20_000)  // about 1.1 MB
    let storedBytes = noise(300_001, seed: 9)

    /// Runs `body` with the archive, mapped, and its two entries.
    func withArchive(_ body: (borrowing MappedRegion, [ArchiveEntry]) throws -> Void) throws {
        let path = directory.file("s.zip")
        try ArchiveWriter.write([
            .init(path: "text.txt", source: .bytes(deflatedBytes), compression: .deflated),
            .init(path: "noise.bin", source: .bytes(storedBytes), compression: .stored),
        ], to: path)
        let fd = try FileDescriptor.open(path)
        let region = try MappedRegion(mapping: fd, count: Int(try fd.status().size))
        try body(region, try ZipArchive.parse(region.bytes, name: path, releasingPages: true).entries)
    }

    /// Streams `entry` through a buffer of `size` bytes; returns the pieces.
    func pieces(_ entry: ArchiveEntry, in region: borrowing MappedRegion, buffer size: Int,
                stopAfter limit: Int = .max) throws(ArchiveError) -> (complete: Bool, pieces: [[UInt8]]) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var behind = ReadBehind(mapping: region.bytes, window: 4096)
        var pieces: [[UInt8]] = []
        let complete = try ZipArchive.stream(entry, in: region.bytes, archive: "s.zip", through: buffer, readBehind: &behind) {
            pieces.append(Array($0))
            return pieces.count < limit
        }
        return (complete, pieces)
    }

    @Test(arguments: [1, 7, 4096, 1 << 20, 4 << 20])
    func piecesAreBoundedAndAddUpToTheMember(buffer: Int) throws {
        try withArchive { region, entries in
        for entry in entries {
            let expected = entry.path == "text.txt" ? deflatedBytes : storedBytes
            // Tiny buffers take long through a deflated megabyte: keep them to the stored member.
            if buffer < 4096 && entry.method == .deflated { continue }
            let (complete, pieces) = try self.pieces(entry, in: region, buffer: buffer)
            #expect(complete)
            #expect(pieces.allSatisfy { !$0.isEmpty && $0.count <= buffer }, "\(entry.path)")
            let joined = Array(pieces.joined())
            let same = joined == expected  // outside #expect: a failure must not diff a megabyte
            #expect(same, "\(entry.path) through \(buffer): \(joined.count) bytes")
        }
        }
    }

    @Test func aConsumerThatStopsGetsNoMore() throws {
        try withArchive { region, entries in
            for entry in entries {
                let (complete, pieces) = try self.pieces(entry, in: region, buffer: 4096, stopAfter: 2)
                #expect(!complete && pieces.count == 2, "\(entry.path)")
            }
        }
    }

    /// A recorded CRC-32 that the bytes do not have: the pieces before the
    /// last go out, the last does not, and the error names the member.
    @Test func aWrongChecksumWithholdsTheLastPiece() throws {
        try withArchive { region, entries in
        for entry in entries {
            let expected = entry.path == "text.txt" ? deflatedBytes : storedBytes
            let wrong = ArchiveEntry(path: entry.path, method: entry.method, crc32: entry.crc32 ^ 1, compressedSize: entry.compressedSize,
                                     uncompressedSize: entry.uncompressedSize, localHeaderOffset: entry.localHeaderOffset,
                                     dataOffset: entry.dataOffset)
            var delivered = 0
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
            defer { buffer.deallocate() }
            var behind = ReadBehind(mapping: region.bytes)
            #expect(throws: ArchiveError.crcMismatch(archive: "s.zip", path: entry.path, expected: entry.crc32 ^ 1, actual: entry.crc32)) {
                _ = try ZipArchive.stream(wrong, in: region.bytes, archive: "s.zip", through: buffer, readBehind: &behind) {
                    delivered += $0.count
                    return true
                }
            }
            #expect(delivered > 0 && delivered < expected.count && (expected.count - delivered) <= 65536, "\(entry.path): \(delivered)")
        }
        }
    }

    @Test func readBehindDropsOnlyWholePagesBehindTheReader() throws {
        try withArchive { region, _ in
        let page = MappedRegion.pageSize
        var behind = ReadBehind(mapping: region.bytes, window: 2 * page)
        behind.reached(page)
        #expect(behind.released == 0)   // less than a window
        behind.reached(3 * page + 100)
        #expect(behind.released == 3 * page)
        behind.reached(page)            // backwards: nothing
        #expect(behind.released == 3 * page)
        behind.finish(at: region.count)
        #expect(behind.released == region.count / MappedRegion.pageSize * MappedRegion.pageSize)
        // The bytes read back the same after their pages were dropped.
        let file = try directory.read("s.zip")
        #expect(Array(region.bytes[0 ..< 16]) == Array(file[0 ..< 16]))
        }
    }
}

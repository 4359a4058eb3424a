@testable import AssetArchive
import Testing

/// Refusals of member data by `verify` and `extract`: CRC mismatches,
/// sizes that lie either way, corrupt deflate streams. Nothing is ever
/// written past the declared size.
@Suite struct DataRefusalTests {
    /// Parses `bytes` and runs `extract` into a buffer of exactly the
    /// declared size followed by guard bytes; returns the error, if any,
    /// and whether the guard bytes are untouched.
    private func extractGuarded(_ bytes: [UInt8], member: String) throws -> (ArchiveError?, guardIntact: Bool) {
        let archive = try parse(bytes)
        let entry = try #require(archive.entries.first { $0.path == member })
        let size = Int(entry.uncompressedSize)
        var buffer = [UInt8](repeating: 0xAA, count: size + 64)
        var failure: ArchiveError?
        bytes.withUnsafeBytes { archiveBytes in
            buffer.withUnsafeMutableBytes { b in
                do throws(ArchiveError) {
                    try ZipArchive.extract(entry, from: archiveBytes, into: UnsafeMutableRawBufferPointer(rebasing: b[..<size]),
                                           archive: "t.zip")
                } catch { failure = error }
            }
        }
        return (failure, buffer[size...].allSatisfy { $0 == 0xAA })
    }

    private func verifyError(_ bytes: [UInt8], member: String) throws -> ArchiveError? {
        let archive = try parse(bytes)
        let entry = try #require(archive.entries.first { $0.path == member })
        do {
            try bytes.withUnsafeBytes { b in try ZipArchive.verify(entry, in: b, archive: "t.zip") }
            return nil
        } catch { return error as? ArchiveError }
    }

    @Test func storedCRCMismatch() throws {
        var bytes = ZipBuilder([.init("a"), .init("b", Array("hello".utf8))]).build()
        let entry = try parse(bytes).entries[1]
        bytes[Int(entry.dataOffset)] ^= 0x20  // "hello" → "Hello"
        let expected = ArchiveError.crcMismatch(
            archive: "t.zip", path: "b", expected: entry.crc32, actual: CRC32.of(Array("Hello".utf8)))
        #expect(try verifyError(bytes, member: "b") == expected)
        #expect(try extractGuarded(bytes, member: "b").0 == expected)
        #expect(throws: expected) { try extractAll(bytes) }
    }

    @Test func deflatedCRCMismatch() throws {
        var member = ZipBuilder.Member("d", text(lines: 50), method: 8)
        member.crc = 0x1234_5678
        let bytes = ZipBuilder([member]).build()
        let expected = ArchiveError.crcMismatch(archive: "t.zip", path: "d", expected: 0x1234_5678, actual: CRC32.of(text(lines: 50)))
        #expect(try verifyError(bytes, member: "d") == expected)
        #expect(try extractGuarded(bytes, member: "d").0 == expected)
    }

    @Test(arguments: [0, 1, 500, 4095])
    func inflatingPastTheDeclaredSizeStopsThere(declared: Int) throws {
        var member = ZipBuilder.Member("bomb", text(lines: 100), method: 8)  // several KiB really
        member.uncompressedSize = UInt64(declared)
        let bytes = ZipBuilder([member]).build()
        let expected = ArchiveError.sizeMismatch(archive: "t.zip", path: "bomb", declared: UInt64(declared), actual: .moreThanDeclared)
        let (error, guardIntact) = try extractGuarded(bytes, member: "bomb")
        #expect(error == expected)
        #expect(guardIntact)
        #expect(try verifyError(bytes, member: "bomb") == expected)
    }

    @Test func inflatingShortOfTheDeclaredSize() throws {
        var member = ZipBuilder.Member("short", text(lines: 10), method: 8)
        let real = UInt64(text(lines: 10).count)
        member.uncompressedSize = real + 1000
        let bytes = ZipBuilder([member]).build()
        let expected = ArchiveError.sizeMismatch(archive: "t.zip", path: "short", declared: real + 1000, actual: .fewer(real))
        #expect(try extractGuarded(bytes, member: "short").0 == expected)
        #expect(try verifyError(bytes, member: "short") == expected)
    }

    @Test func garbageDeflateStream() throws {
        var member = ZipBuilder.Member("junk", Array(repeating: 7, count: 100), method: 8)
        member.data = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        let bytes = ZipBuilder([member]).build()
        let (error, guardIntact) = try extractGuarded(bytes, member: "junk")
        guard case .corruptData(archive: "t.zip", path: "junk", detail: _)? = error else {
            Issue.record("expected corruptData, got \(String(describing: error))")
            return
        }
        #expect(guardIntact)
        #expect(try verifyError(bytes, member: "junk") == error)
    }

    @Test func deflateStreamCutShortOrFollowedByBytes() throws {
        let content = text(lines: 40)
        let stream = Deflate.raw(content)
        var cut = ZipBuilder.Member("cut", content, method: 8)
        cut.data = Array(stream.dropLast(4))
        #expect(try verifyError(ZipBuilder([cut]).build(), member: "cut")
            == .corruptData(archive: "t.zip", path: "cut", detail: "the deflate stream is cut short"))
        var padded = ZipBuilder.Member("padded", content, method: 8)
        padded.data = stream + [0, 0, 0]
        #expect(try verifyError(ZipBuilder([padded]).build(), member: "padded")
            == .corruptData(archive: "t.zip", path: "padded", detail: "3 bytes follow the end of the deflate stream"))
    }

    @Test func emptyMembersEitherWay() throws {
        var emptyStream = ZipBuilder.Member("z", [], method: 8)
        emptyStream.data = []
        let bytes = ZipBuilder([.init("s", []), .init("d", [], method: 8), emptyStream]).build()
        #expect(try extractAll(bytes) == ["s": [], "d": [], "z": []])
    }

    @Test func extractRefusesBytesFromAnotherArchive() throws {
        let bytes = ZipBuilder([.init("a", text(lines: 5))]).build()
        let entry = try parse(bytes).entries[0]
        let other = Array(bytes[..<40])
        #expect(throws: ArchiveError.outOfBounds(archive: "t.zip", path: "a", part: .data)) {
            try other.withUnsafeBytes { try ZipArchive.extract(entry, from: $0, archive: "t.zip") }
        }
    }

    @Test func handMadeEntriesWithImpossibleSizesAreRefused() {
        let bytes = ZipBuilder([.init("a")]).build()
        let lying = ArchiveEntry(path: "x", method: .stored, crc32: 0, compressedSize: 5, uncompressedSize: 6,
                                 localHeaderOffset: 0, dataOffset: 31)
        #expect(throws: ArchiveError.malformedEntry(archive: "t.zip", path: "x", problem: .storedSizes)) {
            try bytes.withUnsafeBytes { try ZipArchive.extract(lying, from: $0, archive: "t.zip") }
        }
        let bomb = ArchiveEntry(path: "y", method: .deflated, crc32: 0, compressedSize: 5, uncompressedSize: .max,
                                localHeaderOffset: 0, dataOffset: 31)
        #expect(throws: ArchiveError.malformedEntry(archive: "t.zip", path: "y", problem: .impossibleRatio)) {
            try bytes.withUnsafeBytes { try ZipArchive.extract(bomb, from: $0, archive: "t.zip") }
        }
    }
}

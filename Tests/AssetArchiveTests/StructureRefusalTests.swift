@testable import AssetArchive
import Testing
import TestSupport

/// Refusals of the archive's structure: local headers and descriptors that
/// disagree, members that overlap or overrun, end records that lie,
/// truncated files and files that are not archives.
@Suite struct StructureRefusalTests {
    private func mismatch(_ field: ArchiveError.HeaderField, _ path: String = "b") -> ArchiveError {
        .headerMismatch(archive: "t.zip", path: path, field: field)
    }

    @Test func refusesLocalHeaderDisagreements() {
        func build(_ change: (inout ZipBuilder.Member) -> Void) -> [UInt8] {
            var member = ZipBuilder.Member("b", Array("hello".utf8))
            change(&member)
            return ZipBuilder([.init("a"), member]).build()
        }
        #expect(parseError(build { $0.local.name = Array("c".utf8) }) == mismatch(.name))
        #expect(parseError(build { $0.local.name = Array("bb".utf8) }) == mismatch(.name))
        #expect(parseError(build { $0.local.method = 8 }) == mismatch(.method))
        #expect(parseError(build { $0.local.flags = 0x0008 }) == mismatch(.flags))
        #expect(parseError(build { $0.local.flags = 0x0800 }) == mismatch(.flags))
        #expect(parseError(build { $0.local.crc = 1 }) == mismatch(.crc32))
        #expect(parseError(build { $0.local.compressedSize = 4 }) == mismatch(.compressedSize))
        #expect(parseError(build { $0.local.uncompressedSize = 6 }) == mismatch(.uncompressedSize))
        #expect(parseError(build { $0.localHeaderShift = 1 }) == mismatch(.signature))
    }

    @Test(arguments: [(true, false), (false, false), (true, true), (false, true)])
    func acceptsEveryDataDescriptorForm(signed: Bool, wide: Bool) throws {
        var member = ZipBuilder.Member("streamed", text(lines: 20), method: 8)
        member.descriptor = .init(signed: signed, wide: wide)
        member.zip64 = wide
        let bytes = ZipBuilder([member, .init("after")]).build()
        #expect(try extractAll(bytes) == ["streamed": text(lines: 20), "after": Array("hello".utf8)])
    }

    @Test func refusesDataDescriptorDisagreements() {
        var member = ZipBuilder.Member("b", Array("hello".utf8))
        member.descriptor = .init(crc: 7)
        #expect(parseError(ZipBuilder([.init("a"), member]).build()) == mismatch(.crc32))
        member.descriptor = .init()
        member.local.compressedSize = 9  // a streamed header may hold zero or the truth
        #expect(parseError(ZipBuilder([.init("a"), member]).build()) == mismatch(.compressedSize))
    }

    @Test func refusesTwoRecordsForOneLocalHeader() {
        var builder = ZipBuilder([.init("a"), .init("b")])
        builder.centralOrder = [0, 1, 0]
        #expect(parseError(builder.build()) == .overlap(archive: "t.zip", path: "a", with: .member("a")))
    }

    @Test func refusesDataOverlappingTheNextMember() {
        var first = ZipBuilder.Member("a", Array("hello".utf8))
        first.compressedSize = 15
        first.uncompressedSize = 15
        #expect(parseError(ZipBuilder([first, .init("b")]).build())
            == .overlap(archive: "t.zip", path: "b", with: .member("a")))
    }

    @Test func refusesDataOverlappingTheCentralDirectory() {
        var last = ZipBuilder.Member("b", Array("hello".utf8))
        last.compressedSize = 15
        last.uncompressedSize = 15
        #expect(parseError(ZipBuilder([.init("a"), last]).build())
            == .overlap(archive: "t.zip", path: "b", with: .centralDirectory))
    }

    @Test func refusesMembersReachingPastTheEnd() {
        var data = ZipBuilder.Member("b", Array("hello".utf8))
        data.compressedSize = 1_000_000
        data.uncompressedSize = 1_000_000
        #expect(parseError(ZipBuilder([.init("a"), data]).build())
            == .outOfBounds(archive: "t.zip", path: "b", part: .data))
        var header = ZipBuilder.Member("b")
        header.localHeaderOffset = 10_000_000
        #expect(parseError(ZipBuilder([.init("a"), header]).build())
            == .outOfBounds(archive: "t.zip", path: "b", part: .localHeader))
        var huge = ZipBuilder.Member("b")
        huge.localHeaderOffset = .max - 4
        #expect(parseError(ZipBuilder([.init("a"), huge]).build())
            == .outOfBounds(archive: "t.zip", path: "b", part: .localHeader))
    }

    @Test func refusesLyingEntryCounts() {
        var more = ZipBuilder([.init("a"), .init("b")])
        more.entryCount = 3
        #expect(parseError(more.build())
            == .inconsistentDirectory(archive: "t.zip", problem: .entryCount(declared: 3, found: 2)))
        var fewer = ZipBuilder([.init("a"), .init("b")])
        fewer.entryCount = 1
        #expect(parseError(fewer.build())
            == .inconsistentDirectory(archive: "t.zip", problem: .entryCount(declared: 1, found: 2)))
        var wide = ZipBuilder([.init("a"), .init("b")])
        wide.zip64End = true
        wide.entryCount = 70_000
        #expect(parseError(wide.build())
            == .inconsistentDirectory(archive: "t.zip", problem: .entryCount(declared: 70_000, found: 2)))
    }

    @Test func refusesLyingDirectoryOffsetsAndSizes() {
        let honest = ZipBuilder([.init("a"), .init("b")]).build()
        let size = UInt64(2 * (46 + 1))
        let offset = UInt64(honest.count - 22) - size
        var pastEnd = ZipBuilder([.init("a"), .init("b")])
        pastEnd.directoryOffset = 1_000_000
        #expect(parseError(pastEnd.build()) == .inconsistentDirectory(
            archive: "t.zip", problem: .centralDirectoryBounds(offset: 1_000_000, size: size)))
        var shortSize = ZipBuilder([.init("a"), .init("b")])
        shortSize.directorySize = size - 1
        #expect(parseError(shortSize.build()) == .inconsistentDirectory(
            archive: "t.zip", problem: .centralDirectoryBounds(offset: offset, size: size - 1)))
        var shifted = ZipBuilder([.init("a"), .init("b")])
        shifted.directoryOffset = offset - 4
        shifted.directorySize = size + 4
        #expect(parseError(shifted.build()) == .inconsistentDirectory(archive: "t.zip", problem: .malformedRecord(index: 0)))
    }

    @Test func refusesSpannedArchives() {
        var builder = ZipBuilder([.init("a")])
        builder.diskNumber = 1
        #expect(parseError(builder.build()) == .inconsistentDirectory(archive: "t.zip", problem: .multipleDisks))
    }

    @Test func refusesBytesThatBelongToNothing() {
        var prefixed = ZipBuilder([.init("a")])
        prefixed.prefix = Array("#!/bin/sh stub\n".utf8)
        #expect(parseError(prefixed.build()) == .inconsistentDirectory(
            archive: "t.zip", problem: .unaccountedBytes(offset: 0, count: 15)))
        var first = ZipBuilder.Member("a")
        first.gapAfter = [0, 0, 0]
        #expect(parseError(ZipBuilder([first, .init("b")]).build()) == .inconsistentDirectory(
            archive: "t.zip", problem: .unaccountedBytes(offset: 36, count: 3)))
        #expect(parseError(ZipBuilder([.init("b"), first]).build()) == .inconsistentDirectory(
            archive: "t.zip", problem: .unaccountedBytes(offset: 72, count: 3)))
        let trailing = ZipBuilder([.init("a")]).build() + [1, 2, 3]
        #expect(parseError(trailing) == .inconsistentDirectory(
            archive: "t.zip", problem: .unaccountedBytes(offset: UInt64(trailing.count - 3), count: 3)))
    }

    @Test func readsZip64EndRecordsAndRefusesBrokenOnes() throws {
        var wide = ZipBuilder.Member("b", text(lines: 30), method: 8)
        wide.zip64 = true  // sizes and offset in ZIP64 extra fields, local and central
        #expect(try parse(ZipBuilder([.init("a"), wide]).build()).usesZip64)
        #expect(try !parse(ZipBuilder([.init("a")]).build()).usesZip64)
        var builder = ZipBuilder([.init("a"), wide])
        builder.zip64End = true
        builder.comment = Array("note".utf8)
        var bytes = builder.build()
        let archive = try parse(bytes)
        #expect(try extractAll(bytes) == ["a": Array("hello".utf8), "b": text(lines: 30)])
        #expect(archive.comment == Array("note".utf8))
        let record = bytes.count - 4 - 22 - 20 - 56
        bytes[record] ^= 0xff
        #expect(parseError(bytes) == .inconsistentDirectory(archive: "t.zip", problem: .zip64EndRecord))
    }

    @Test func findsTheEndRecordBehindAnyComment() throws {
        for comment in [[], Array("PK\u{5}\u{6} inside".utf8), [UInt8](repeating: 0x50, count: 65_535)] {
            var builder = ZipBuilder([.init("a")])
            builder.comment = comment
            #expect(try parse(builder.build()).comment == comment)
        }
    }

    @Test func refusesTruncatedFilesAtEveryCut() {
        var streamed = ZipBuilder.Member("s", text(lines: 3), method: 8)
        streamed.descriptor = .init()
        var builder = ZipBuilder([.init("dir/", []), .init("a"), streamed])
        builder.zip64End = true
        builder.comment = Array("comment".utf8)
        let bytes = builder.build()
        var wrong: [Int] = []
        for cut in 4 ..< bytes.count where parseError(Array(bytes[..<cut])) != .truncated(archive: "t.zip") {
            wrong.append(cut)
        }
        #expect(wrong.isEmpty, "cuts not reported as truncated: \(wrong)")
        #expect(parseError([0x50, 0x4b, 3]) == .notAnArchive(archive: "t.zip"))
    }

    @Test func refusesThingsThatAreNotArchives() {
        #expect(parseError([]) == .notAnArchive(archive: "t.zip"))
        #expect(parseError(Array("just some text, not a zip".utf8)) == .notAnArchive(archive: "t.zip"))
        #expect(parseError(noise(100_000)) == .notAnArchive(archive: "t.zip"))
        #expect(parseError([UInt8](repeating: 0, count: 22)) == .notAnArchive(archive: "t.zip"))
    }

    @Test func openReportsIOErrors() {
        #expect(throws: ArchiveError.io(archive: "/nonexistent/x.zip", error: .noSuchFile)) {
            try ZipArchive.open(path: "/nonexistent/x.zip")
        }
        let directory = TemporaryDirectory()
        #expect(throws: ArchiveError.io(archive: directory.path, error: .isDirectory)) {
            try ZipArchive.open(path: directory.path)
        }
    }
}

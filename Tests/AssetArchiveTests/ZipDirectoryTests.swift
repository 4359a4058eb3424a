@testable import AssetArchive
import AssetSystem
import Foundation
import Testing
import TestSupport

/// ``ZipDirectory``: the validation of ``ZipArchive/parse(_:name:)``
/// without the members held, and the walk that reads them again. The
/// refusal suites run through it (``ZipArchive/parse(_:name:)`` is a scan
/// that keeps what it is handed); these tests cover what the streaming
/// checks must get right besides: the order in which problems are reported
/// when the layout and the names are checked as the records go by, the
/// second walk of archives out of order, and the counts.
@Suite struct ZipDirectoryTests {
    private func scan(_ bytes: [UInt8]) throws(ArchiveError) -> (ZipDirectory, [ArchiveEntry]) {
        try bytes.withUnsafeBytes { b in
            Result { () throws(ArchiveError) in
                var seen: [ArchiveEntry] = []
                let directory = try ZipDirectory.scan(b, name: "t.zip", releasingPages: false) { seen.append($0) }
                return (directory, seen)
            }
        }.get()
    }

    private func walk(_ directory: ZipDirectory, _ bytes: [UInt8]) throws(ArchiveError) -> [ArchiveEntry] {
        try bytes.withUnsafeBytes { b in
            Result { () throws(ArchiveError) in
                var entries = directory.entries(in: b, releasingPages: false)
                var walked: [ArchiveEntry] = []
                while let entry = try entries.next() { walked.append(entry) }
                return walked
            }
        }.get()
    }

    @Test func theScanCountsAndTheWalkReadsWhatParseHolds() throws {
        var deflated = ZipBuilder.Member("d/c.txt", text(lines: 40), method: 8)
        deflated.zip64 = true
        let bytes = ZipBuilder([.init("d/", []), .init("d/a", Array("hello".utf8)), deflated, .init("e", [])]).build()
        let archive = try parse(bytes)
        let (directory, seen) = try scan(bytes)
        #expect(directory.memberCount == 3)
        #expect(directory.directoryCount == 1)
        #expect(directory.usesZip64 == archive.usesZip64 && directory.usesZip64)
        #expect(directory.totalSize == archive.entries.reduce(0) { $0 + $1.uncompressedSize })
        #expect(directory.storedSize == archive.entries.reduce(0) { $0 + $1.compressedSize })
        #expect(directory.nameBytes == "d/a".utf8.count + "d/c.txt".utf8.count + 1)
        #expect(seen == archive.entries)
        #expect(try walk(directory, bytes) == archive.entries)
        #expect(try walk(directory, bytes) == archive.entries, "a second walk starts from the first member")
    }

    @Test func aDirectoryOutOfFileOrderIsWalkedInItsOwnOrder() throws {
        var builder = ZipBuilder([.init("a"), .init("b"), .init("c")])
        builder.centralOrder = [2, 0, 1]
        let bytes = builder.build()
        let (directory, _) = try scan(bytes)
        #expect(try walk(directory, bytes).map(\.path) == ["c", "a", "b"])
    }

    @Test func aGapInADirectoryOutOfOrderIsFoundInFileOrder() {
        var first = ZipBuilder.Member("a")
        first.gapAfter = [0, 0, 0]
        var builder = ZipBuilder([first, .init("b")])
        builder.centralOrder = [1, 0]
        #expect(parseError(builder.build()) == .inconsistentDirectory(
            archive: "t.zip", problem: .unaccountedBytes(offset: 36, count: 3)))
    }

    @Test func aLaterRecordsOwnProblemComesBeforeALayoutProblem() {
        var first = ZipBuilder.Member("a")
        first.gapAfter = [0, 0, 0]
        var encrypted = ZipBuilder.Member("c")
        encrypted.flags = 1
        #expect(parseError(ZipBuilder([first, .init("b"), encrypted]).build()) == .encrypted(archive: "t.zip", path: "c"))
    }

    @Test func theLayoutComesBeforeTheNames() {
        var first = ZipBuilder.Member("a")
        first.gapAfter = [0, 0, 0]
        #expect(parseError(ZipBuilder([first, .init("a")]).build()) == .inconsistentDirectory(
            archive: "t.zip", problem: .unaccountedBytes(offset: 36, count: 3)))
        #expect(parseError(ZipBuilder([.init("a"), .init("A")]).build())
            == .caseCollision(archive: "t.zip", path: "A", with: "a"))
        #expect(parseError(ZipBuilder([.init("b"), .init("a"), .init("b")]).build())
            == .duplicateMember(archive: "t.zip", path: "b"))
    }

    @Test func theFirstOverlapInFileOrderIsReported() {
        var first = ZipBuilder.Member("a", Array("hello".utf8))
        first.compressedSize = 15
        first.uncompressedSize = 15
        var second = ZipBuilder.Member("b", Array("hello".utf8))
        second.compressedSize = 15
        second.uncompressedSize = 15
        #expect(parseError(ZipBuilder([first, second, .init("c")]).build())
            == .overlap(archive: "t.zip", path: "b", with: .member("a")))
    }

    @Test func aWalkOverBytesChangedSinceTheScanThrows() throws {
        var bytes = ZipBuilder([.init("a"), .init("b")]).build()
        let (directory, _) = try scan(bytes)
        // The second central record loses its signature.
        let second = directory.directoryOffset + 46 + 1
        bytes[second] = 0
        #expect(throws: ArchiveError.inconsistentDirectory(archive: "t.zip", problem: .malformedRecord(index: 1))) {
            _ = try walk(directory, bytes)
        }
        // A local header that no longer matches its record.
        var renamed = ZipBuilder([.init("a"), .init("b")]).build()
        renamed[30] = UInt8(ascii: "x")
        #expect(throws: ArchiveError.headerMismatch(archive: "t.zip", path: "a", field: .name)) {
            _ = try walk(directory, renamed)
        }
    }

    @Test func aWrittenArchiveOfManyMembersScansToItsCount() throws {
        let count = 5_000
        let members = (0 ..< count).map { ArchiveWriter.Member(path: "m/\($0)", source: .bytes([UInt8($0 & 0xff)]), compression: .stored) }
        let scratch = TemporaryDirectory("zipdirectory")
        let path = scratch.file("many.zip")
        try ArchiveWriter.write(members, to: path)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let (directory, _) = try scan(bytes)
        #expect(directory.memberCount == count)
        let walked = try walk(directory, bytes)
        #expect(walked.count == count)
        #expect(Set(walked.map(\.path)) == Set(members.map(\.path)))
    }

    /// A scan that releases pages has let go of the directory the count of
    /// its records read (all of it, before the walk) by the time it hands
    /// on the first member; one that does not has it all resident. In a
    /// directory of about 13 MB, over a window of 8 MiB. (The count also
    /// drops pages behind it as it goes; that bound on its peak is seen in
    /// the harness's `verify-deep-1m` and `install-1m` notes, not here.)
    @Test(.enabled(if: Program.available("python3")))
    func aReleasingScanKeepsLittleOfTheDirectoryResident() throws {
        let scratch = TemporaryDirectory("zipdir-resident")
        let path = scratch.file("many.zip")
        // 3,000 empty members, each with a 4,500-byte comment in its record, by Python.
        let script = """
        import sys, zipfile
        with zipfile.ZipFile(sys.argv[1], "w") as z:
            for i in range(3000):
                info = zipfile.ZipInfo("m%05d" % i)
                info.comment = b"c" * 4500
                z.writestr(info, b"")
        """
        #expect(try Program.run("python3", ["-c", script, path]).status == 0)
        let fd = try FileDescriptor.open(path)
        let size = Int(try fd.status().size)
        for releasing in [false, true] {
            let region = try MappedRegion(mapping: fd, count: size)
            var atFirst: Int?
            _ = try ZipDirectory.scan(region.bytes, name: path, releasingPages: releasing) { _ in
                if atFirst == nil { atFirst = try? ResidentMemory.kilobytes(mapping: path) }
            }
            let kib = try #require(atFirst)
            if releasing {
                #expect(kib < 9 << 10, "\(kib) KiB resident at the first member")
            } else {
                #expect(kib > 11 << 10, "\(kib) KiB resident at the first member without releasing")
            }
        }
    }

}

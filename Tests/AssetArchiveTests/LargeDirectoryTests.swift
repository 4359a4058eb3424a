import AssetArchive
import Testing
import TestSupport

/// A large central directory parses whole and in order. How fast is the
/// benchmark's business (`assetpack-bench open-and-first-read`, 1,000,000
/// members against libzip), not a timed assertion here.
@Suite struct LargeDirectoryTests {
    @Test func parses100000Entries() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("many.zip")
        let members = (0 ..< 100_000).map {
            ArchiveWriter.Member(path: "dir\($0 % 50)/file-\($0).txt", source: .bytes(Array("#\($0)".utf8)))
        }
        try ArchiveWriter.write(members, to: path)
        let archive = try ZipArchive.open(path: path)
        #expect(archive.entries.count == 100_000)
        #expect(Set(archive.entries.map(\.path)) == Set(members.map(\.path)))
    }
}

import AssetArchive
import AssetSystem
import Testing
import TestSupport

@Suite struct ParsePerformanceTests {
    /// 100,000 members parse in well under a second even in a debug build
    /// (tens of milliseconds optimized); a quadratic step would take minutes.
    @Test func parses100000EntriesQuickly() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("many.zip")
        let members = (0 ..< 100_000).map {
            ArchiveWriter.Member(path: "dir\($0 % 50)/file-\($0).txt", source: .bytes(Array("#\($0)".utf8)))
        }
        try ArchiveWriter.write(members, to: path)
        var best = Double.infinity
        var archive: ZipArchive?
        for _ in 0 ..< 3 {
            let start = Monotonic.now
            archive = try ZipArchive.open(path: path)
            best = min(best, Monotonic.now - start)
        }
        #expect(archive?.entries.count == 100_000)
        print("parsed 100,000 entries in \(Int(best * 1000)) ms")
        #expect(best < 1.5, "parsing 100,000 entries took \(best) s")
    }
}

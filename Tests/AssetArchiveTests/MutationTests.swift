import AssetArchive
import Testing
import TestSupport

/// Nothing crashes on bad input: valid archives with bytes flipped, cut or
/// inserted either parse (and then verify or fail with an `ArchiveError`)
/// or are refused with one.
@Suite struct MutationTests {
    private static func seeds() -> [[UInt8]] {
        var streamed = ZipBuilder.Member("s/streamed.txt", text(lines: 40), method: 8)
        streamed.descriptor = .init()
        var wide = ZipBuilder.Member("w.bin", noise(300), method: 0)
        wide.zip64 = true
        var zip64 = ZipBuilder([.init("dir/", []), streamed, wide, .init("d.txt", text(lines: 20), method: 8)])
        zip64.zip64End = true
        zip64.comment = Array("seed".utf8)
        return [ZipBuilder([.init("a", text(lines: 30), method: 8), .init("b", noise(200))]).build(), zip64.build()]
    }

    @Test(arguments: 0 ..< 2)
    func mutatedArchivesNeverCrash(seedIndex: Int) {
        let seed = Self.seeds()[seedIndex]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D &+ UInt64(seedIndex)
        func next(_ bound: Int) -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % UInt64(bound))
        }
        var parsed = 0
        for _ in 0 ..< 3000 {
            var bytes = seed
            switch next(4) {
            case 0, 1:
                for _ in 0 ... next(3) { bytes[next(bytes.count)] = UInt8(truncatingIfNeeded: next(256)) }
            case 2:
                bytes.removeSubrange(next(bytes.count)...)
            default:
                bytes.insert(contentsOf: [UInt8](repeating: UInt8(next(256)), count: 1 + next(8)), at: next(bytes.count))
            }
            bytes.withUnsafeBytes { b in
                guard let archive = try? ZipArchive.parse(b, name: "m.zip") else { return }
                parsed += 1
                for entry in archive.entries {
                    _ = try? ZipArchive.verify(entry, in: b, archive: "m.zip")
                    _ = try? ZipArchive.extract(entry, from: b, archive: "m.zip")
                }
            }
        }
        #expect(parsed > 0, "some mutations (in data bytes) still parse")
    }
}

import AssetArchive
import Testing

@Suite struct DescriptionTests {
    @Test func descriptionsNameArchiveMemberAndReasonOnOneLine() {
        let errors: [ArchiveError] = [
            .notAnArchive(archive: "p.zip"),
            .unsafePath(archive: "p.zip", path: "../x", reason: .parentTraversal),
            .nonRegularEntry(archive: "p.zip", path: "l", kind: .symbolicLink),
            .headerMismatch(archive: "p.zip", path: "a", field: .compressedSize),
            .overlap(archive: "p.zip", path: "b", with: .member("a")),
            .inconsistentDirectory(archive: "p.zip", problem: .entryCount(declared: 3, found: 2)),
            .crcMismatch(archive: "p.zip", path: "a", expected: 0xCBF4_3926, actual: 0x10),
            .sizeMismatch(archive: "p.zip", path: "a", declared: 10, actual: .moreThanDeclared),
            .io(archive: "p.zip", error: .noSuchFile),
            .unreadableSource(archive: "p.zip", path: "a", source: "/src/a", problem: .notRegularFile),
        ]
        for error in errors {
            let text = error.description
            #expect(text.hasPrefix("archive 'p.zip'"))
            #expect(!text.contains("\n"))
            if let path = error.path { #expect(text.contains("member '\(path)'")) }
        }
        #expect(errors[6].description.hasSuffix("CRC-32 mismatch: declared 0xcbf43926, data has 0x00000010"))
        let control = ArchiveError.unsafePath(archive: "p.zip", path: "a\u{0}b\nc", reason: .nulByte)
        #expect(control.description == "archive 'p.zip', member 'a\\x00b\\x0ac': unsafe member path: it contains a NUL byte")
    }
}

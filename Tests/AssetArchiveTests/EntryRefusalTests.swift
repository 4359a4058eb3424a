@testable import AssetArchive
import Testing

/// Refusals of single central-directory records: names, file types,
/// flags, methods, duplicates.
@Suite struct EntryRefusalTests {
    private static let unsafeNames: [([UInt8], String, ArchiveError.PathProblem)] = [
        (Array("../x".utf8), "../x", .parentTraversal),
        (Array("a/../../x".utf8), "a/../../x", .parentTraversal),
        (Array("a/..".utf8), "a/..", .parentTraversal),
        (Array("../".utf8), "../", .parentTraversal),
        (Array("/etc/x".utf8), "/etc/x", .absolute),
        (Array("/".utf8), "/", .absolute),
        (Array("C:/x".utf8), "C:/x", .absolute),
        (Array("a\\b".utf8), "a\\b", .backslash),
        ([0x61, 0x00, 0x62], "a\u{0}b", .nulByte),
        ([0x66, 0xff, 0x6f], "f\u{FFFD}o", .invalidUTF8),
        ([0x61, 0xc0, 0xaf], "a\u{FFFD}\u{FFFD}", .invalidUTF8),
        ([0xed, 0xa0, 0x80], "\u{FFFD}\u{FFFD}\u{FFFD}", .invalidUTF8),
        ([], "", .empty),
        (Array("a//b".utf8), "a//b", .emptyComponent),
        (Array("a//".utf8), "a//", .emptyComponent),
        (Array("./a".utf8), "./a", .currentDirectoryComponent),
        (Array("a/./b".utf8), "a/./b", .currentDirectoryComponent),
    ]

    @Test(arguments: unsafeNames)
    func refusesUnsafeNames(name: [UInt8], shown: String, reason: ArchiveError.PathProblem) {
        var member = ZipBuilder.Member(rawName: name)
        member.flags = 0x0800  // UTF-8: unflagged, the non-UTF-8 names would be CP437
        let bytes = ZipBuilder([.init("ok.txt"), member]).build()
        #expect(parseError(bytes) == .unsafePath(archive: "t.zip", path: shown, reason: reason))
    }

    @Test func acceptsUTF8NamesWithAndWithoutFlag() throws {
        var flagged = ZipBuilder.Member("données/日本.txt")
        flagged.flags = 0x0800
        let archive = try parse(ZipBuilder([flagged, .init("ελληνικά/κείμενο")]).build())
        #expect(archive.entries.map(\.path) == ["données/日本.txt", "ελληνικά/κείμενο"])
    }

    @Test func acceptsAndCountsDirectories() throws {
        let archive = try parse(ZipBuilder([.init("dir/", []), .init("dir/sub/", []), .init("dir/f", [1])]).build())
        #expect(archive.directoryCount == 2)
        #expect(archive.entries.map(\.path) == ["dir/f"])
    }

    @Test(arguments: [
        (UInt32(0o120777), "link", ArchiveError.EntryKind.symbolicLink),
        (0o010644, "pipe", .fifo),
        (0o020644, "tty", .characterDevice),
        (0o060644, "sda", .blockDevice),
        (0o140755, "sock", .socket),
        (0o040755, "notslash", .directory),
        (0o170644, "odd", .unknown(mode: 0o170000)),
        (0o120777, "linkdir/", .symbolicLink),
    ])
    func refusesNonRegularEntries(mode: UInt32, name: String, kind: ArchiveError.EntryKind) {
        var member = ZipBuilder.Member(name, [])
        member.externalAttributes = mode << 16
        #expect(parseError(ZipBuilder([member]).build()) == .nonRegularEntry(archive: "t.zip", path: name, kind: kind))
    }

    @Test func readsModesOnlyFromUnixHosts() throws {
        var member = ZipBuilder.Member("link")
        member.externalAttributes = 0o120777 << 16
        member.versionMadeBy = 20  // MS-DOS
        #expect(try parse(ZipBuilder([member]).build()).entries.count == 1)
    }

    @Test func acceptsInfoZipStandardInputFIFO() throws {
        var member = ZipBuilder.Member("-", Array("from a pipe".utf8))
        member.externalAttributes = 0o010600 << 16
        #expect(try parse(ZipBuilder([member]).build()).entries.map(\.path) == ["-"])
    }

    @Test func refusesDirectoryWithData() {
        #expect(parseError(ZipBuilder([.init("dir/", [1, 2])]).build())
            == .malformedEntry(archive: "t.zip", path: "dir/", problem: .directoryWithData))
    }

    @Test(arguments: [UInt16(0x0001), 0x0040, 0x2000, 0x0041])
    func refusesEncryption(flags: UInt16) {
        var member = ZipBuilder.Member("secret")
        member.flags = flags
        #expect(parseError(ZipBuilder([.init("plain"), member]).build()) == .encrypted(archive: "t.zip", path: "secret"))
    }

    @Test(arguments: [UInt16(12), 14, 93, 99, 1])
    func refusesUnsupportedMethods(method: UInt16) {
        var member = ZipBuilder.Member("packed", Array("data".utf8))
        member.method = method
        member.data = [1, 2, 3]
        #expect(parseError(ZipBuilder([member]).build())
            == .unsupportedMethod(archive: "t.zip", path: "packed", method: method))
    }

    @Test func refusesDuplicateNames() {
        #expect(parseError(ZipBuilder([.init("a"), .init("b"), .init("a")]).build())
            == .duplicateMember(archive: "t.zip", path: "a"))
        #expect(parseError(ZipBuilder([.init("d/", []), .init("d/", [])]).build())
            == .duplicateMember(archive: "t.zip", path: "d/"))
    }

    @Test func refusesCanonicallyEquivalentNames() {
        #expect(parseError(ZipBuilder([.init("caf\u{e9}"), .init("cafe\u{301}")]).build())
            == .duplicateMember(archive: "t.zip", path: "cafe\u{301}"))
    }

    @Test func refusesStoredMembersWithUnequalSizes() {
        var member = ZipBuilder.Member("s", Array("hello".utf8))
        member.uncompressedSize = 6
        #expect(parseError(ZipBuilder([member]).build())
            == .malformedEntry(archive: "t.zip", path: "s", problem: .storedSizes))
    }

    @Test func refusesImpossibleCompressionRatios() {
        var member = ZipBuilder.Member("bomb", [UInt8](repeating: 0, count: 1000), method: 8)
        member.uncompressedSize = 100_000_000
        #expect(parseError(ZipBuilder([member]).build())
            == .malformedEntry(archive: "t.zip", path: "bomb", problem: .impossibleRatio))
    }

    @Test func refusesMissingZip64Values() {
        var member = ZipBuilder.Member("big")
        member.zip64 = true
        member.centralExtra = [1, 0, 8, 0] + [UInt8](repeating: 0, count: 8)  // only one of three values
        #expect(parseError(ZipBuilder([member]).build())
            == .malformedEntry(archive: "t.zip", path: "big", problem: .extraField))
        member.centralExtra = [1, 0, 40, 0, 1, 2]  // runs past the block
        #expect(parseError(ZipBuilder([member]).build())
            == .malformedEntry(archive: "t.zip", path: "big", problem: .extraField))
    }
}

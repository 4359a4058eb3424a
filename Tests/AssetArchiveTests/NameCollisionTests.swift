@testable import AssetArchive
import Testing
import TestSupport

/// Names that would collide on a file system: canonically equivalent,
/// differing only in case, a file that is another member's directory.
@Suite struct NameCollisionTests {
    private static func members(_ names: [String]) -> [UInt8] {
        ZipBuilder(names.map { ZipBuilder.Member($0, $0.hasSuffix("/") ? [] : [1]) }).build()
    }

    @Test(arguments: [
        (["Read.me", "READ.ME"], "READ.ME", "Read.me"),
        (["dir/a.txt", "dir/A.TXT"], "dir/A.TXT", "dir/a.txt"),
        (["Dir/x", "dir/X"], "dir/X", "Dir/x"),
        (["\u{c9}t\u{e9}.txt", "\u{e9}t\u{c9}.txt"], "\u{e9}t\u{c9}.txt", "\u{c9}t\u{e9}.txt"),
        (["E\u{301}.txt", "\u{e9}.txt"], "\u{e9}.txt", "\u{c9}.txt"),
    ])
    func refusesCaseOnlyDuplicates(names: [String], path: String, other: String) {
        #expect(parseError(Self.members(names)) == .caseCollision(archive: "t.zip", path: path, with: other))
    }

    @Test(arguments: [
        (["a", "a/b"], "a", "a/b"),
        (["a/b", "a"], "a", "a/b"),
        (["x/a", "x/a/b/c"], "x/a", "x/a/b/c"),
        (["a", "a/"], "a", "a/"),
        (["a/", "a"], "a", "a/"),
        (["A", "a/b"], "A", "a/b"),
        (["a/B", "a/b/c"], "a/B", "a/b/c"),
    ])
    func refusesAFileThatIsAnotherMembersDirectory(names: [String], file: String, member: String) {
        #expect(parseError(Self.members(names)) == .fileDirectoryCollision(archive: "t.zip", file: file, member: member))
    }

    @Test func acceptsDirectoriesThatDifferInCaseAndSiblingPrefixes() throws {
        let archive = try parse(Self.members(["A/", "a/", "A/x", "a/y", "ab", "a.txt", "a-b/c"]))
        #expect(archive.entries.map(\.path) == ["A/x", "a/y", "ab", "a.txt", "a-b/c"])
    }

    /// The tables probe past entries of the same hash: with every name
    /// hashing alike, each case finds the same collision, or none.
    @Test(arguments: [
        ["Read.me", "READ.ME"], ["dir/a.txt", "dir/A.TXT"], ["Dir/x", "dir/X"], ["E\u{301}.txt", "\u{e9}.txt"],
        ["a", "a/b"], ["a/b", "a"], ["x/a", "x/a/b/c"], ["a", "a/"], ["a/", "a"], ["A", "a/b"], ["a/B", "a/b/c"],
        ["a/b", "a/c", "a/b"], ["A/", "a/", "A/x", "a/y", "ab", "a.txt", "a-b/c"], ["b/c/d", "b/c/e", "b/f", "b/c"],
    ])
    func everyNameHashingAlikeFindsTheSameCollisions(names: [String]) {
        func error(colliding: Bool) -> ArchiveError? {
            do { try NameCollisions.check(names, archive: "t.zip", collidingHashes: colliding) } catch { return error }
            return nil
        }
        #expect(error(colliding: true) == error(colliding: false))
    }

    @Test func everyNameHashingAlikeStillTellsNamesApart() throws {
        let names = (0..<300).map { "d\($0 % 7)/e\($0 % 5)/f\($0).bin" } + ["d1/e1/F1.BIN", "d3/e2"]
        #expect(throws: ArchiveError.caseCollision(archive: "t.zip", path: "d1/e1/F1.BIN", with: "d1/e1/f1.bin")) {
            try NameCollisions.check(Array(names.dropLast()), archive: "t.zip", collidingHashes: true)
        }
        #expect(throws: ArchiveError.fileDirectoryCollision(archive: "t.zip", file: "d3/e2", member: "d3/e2/f17.bin")) {
            try NameCollisions.check(Array(names.prefix(300)) + ["d3/e2"], archive: "t.zip", collidingHashes: true)
        }
        try NameCollisions.check(Array(names.prefix(300)), archive: "t.zip", collidingHashes: true)
    }

    @Test func messagesNameBothMembers() {
        #expect(ArchiveError.caseCollision(archive: "t.zip", path: "B", with: "b").description
            == "archive 't.zip', member 'B': the path differs only in case from 'b'")
        #expect(ArchiveError.fileDirectoryCollision(archive: "t.zip", file: "a", member: "a/b").description
            == "archive 't.zip', member 'a/b': the path needs 'a' to be a directory, and it is a file")
    }

    @Test func writerRefusesTheSameCollisions() {
        let directory = TemporaryDirectory()
        func writeError(_ paths: [String]) -> ArchiveError? {
            do {
                try ArchiveWriter.write(paths.map { .init(path: $0, source: .bytes([1])) }, to: directory.file("w.zip"))
                return nil
            } catch { return error }
        }
        #expect(writeError(["x.txt", "X.txt"]) == .caseCollision(archive: directory.file("w.zip"), path: "X.txt", with: "x.txt"))
        #expect(writeError(["a/b", "a"]) == .fileDirectoryCollision(archive: directory.file("w.zip"), file: "a", member: "a/b"))
    }
}

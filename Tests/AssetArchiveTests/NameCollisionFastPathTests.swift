@testable import AssetArchive
import Testing

/// The one-pass proof that sorted lowercase ASCII names hold no collision
/// never clears a list that the full check refuses, and the full check
/// still names the collisions it finds.
@Suite struct NameCollisionFastPathTests {
    func fullCheckPasses(_ names: [String]) -> Bool {
        do { try NameCollisions.check(names, archive: "t.zip", collidingHashes: false); return true } catch { return false }
    }

    @Test(arguments: [
        (["a", "a-b", "a.b", "a/x"], false),
        (["a", "a/"], false),
        (["x/y", "x/y/"], false),
        (["a/", "a/b", "b"], true),
        (["a-b", "a/b", "a/c", "ab"], true),
        (["d/a", "d/a.txt", "d/a/b"], false),
        (["b", "a"], false),          // out of order: the long way, which finds nothing
        (["A", "a"], false),          // a capital: the long way, which refuses it
        (["é", "f"], false),          // not ASCII
        (["a", "a"], false),
    ])
    func decidesOnlyWhatItCanProve(_ names: [String], _ proved: Bool) {
        #expect(NameCollisions.provablyDistinct(names) == proved, "\(names)")
        if proved { #expect(fullCheckPasses(names)) }
    }

    @Test func aFileUnderAFileIsStillNamed() {
        #expect(throws: ArchiveError.fileDirectoryCollision(archive: "t.zip", file: "a", member: "a/x")) {
            try NameCollisions.check(["a", "a-b", "a.b", "a/x"], archive: "t.zip")
        }
        #expect(throws: ArchiveError.duplicateMember(archive: "t.zip", path: "a")) {
            try NameCollisions.check(["a", "a"], archive: "t.zip")
        }
    }

    /// Random sorted lists over a small alphabet, so that prefixes,
    /// separators and the bytes around `/` meet often.
    @Test func neverClearsWhatTheFullCheckRefuses() {
        var state: UInt64 = 0x5EED
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        let alphabet = Array("ab/-.".utf8)
        var proved = 0
        for _ in 0 ..< 3000 {
            var names = Set<String>()
            for _ in 0 ..< 1 + next(8) {
                var bytes = (0 ..< 1 + next(5)).map { _ in alphabet[next(alphabet.count)] }
                while bytes.first == UInt8(ascii: "/") { bytes.removeFirst() }
                if bytes.isEmpty || bytes.contains(where: { _ in false }) { continue }
                let name = String(decoding: bytes, as: UTF8.self)
                if name.contains("//") || name.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) { continue }
                names.insert(name)
            }
            let sorted = names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            guard !sorted.isEmpty else { continue }
            if NameCollisions.provablyDistinct(sorted) {
                proved += 1
                #expect(fullCheckPasses(sorted), "\(sorted)")
            }
        }
        #expect(proved > 100)
    }
}

@testable import AssetArchive
import AssetSystem
import Testing
import TestSupport

@Suite struct WriterTests {
    let directory = TemporaryDirectory()

    private func roundTrip(_ members: [ArchiveWriter.Member], comment: [UInt8] = []) throws -> (ZipArchive, [UInt8]) {
        let path = directory.file("out.zip")
        let written = try ArchiveWriter.write(members, comment: comment, to: path)
        let bytes = try directory.read("out.zip")
        let reparsed = try parse(bytes)
        #expect(reparsed.entries == written.entries)
        return (written, bytes)
    }

    private func contents(_ bytes: [UInt8]) throws -> [String: [UInt8]] { try extractAll(bytes) }

    @Test(arguments: [ArchiveWriter.Compression.stored, .deflated, .automatic])
    func roundTripsEachCompression(compression: ArchiveWriter.Compression) throws {
        let inputs: [String: [UInt8]] = [
            "text/lines.txt": text(lines: 400), "noise.bin": noise(5000), "small.json": Array("{\"a\":1}".utf8),
        ]
        let (archive, bytes) = try roundTrip(inputs.map { .init(path: $0.key, source: .bytes($0.value), compression: compression) })
        #expect(try contents(bytes) == inputs)
        let methods = Dictionary(uniqueKeysWithValues: archive.entries.map { ($0.path, $0.method) })
        switch compression {
        case .stored: #expect(methods.values.allSatisfy { $0 == .stored })
        case .deflated: #expect(methods.values.allSatisfy { $0 == .deflated })
        case .automatic:
            #expect(methods == ["text/lines.txt": .deflated, "noise.bin": .stored, "small.json": .stored])
        }
        for entry in archive.entries { try bytes.withUnsafeBytes { try ZipArchive.verify(entry, in: $0, archive: "t.zip") } }
    }

    @Test func membersAreSortedByPathBytes() throws {
        let paths = ["b", "a/y", "a.b", "C", "a.txt", "é", "a/b/c"]
        let (archive, _) = try roundTrip(paths.map { .init(path: $0, source: .bytes(Array($0.utf8))) })
        #expect(archive.entries.map(\.path) == paths.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test func emptyMemberAndArchiveComment() throws {
        let (archive, bytes) = try roundTrip(
            [.init(path: "empty", source: .bytes([])), .init(path: "empty.z", source: .bytes([]), compression: .deflated)],
            comment: Array("a comment".utf8))
        #expect(archive.comment == Array("a comment".utf8))
        #expect(try contents(bytes) == ["empty": [], "empty.z": []])
        #expect(archive.entries.map(\.method) == [.stored, .deflated])
    }

    @Test func archiveWithNoMembers() throws {
        let (archive, bytes) = try roundTrip([])
        #expect(archive.entries.isEmpty)
        #expect(archive.directoryCount == 0)
        #expect(bytes.count == 22)
        #expect(!archive.usesZip64)
    }

    @Test func storedDataIsAligned() throws {
        let sizes = [0, 1, 15, 17, 255, 1000, 65_535, 65_536, 200_000]
        let (archive, bytes) = try roundTrip(sizes.enumerated().map { index, size in
            .init(path: String(repeating: "n", count: index + 1) + ".bin", source: .bytes(noise(size, seed: UInt64(index + 1))),
                  compression: .stored)
        })
        let pageSize = UInt64(MappedRegion.pageSize)
        for entry in archive.entries {
            #expect(entry.dataOffset % 16 == 0, "\(entry.path) at \(entry.dataOffset)")
            if entry.uncompressedSize >= 65_536 {
                #expect(entry.dataOffset % pageSize == 0, "\(entry.path) at \(entry.dataOffset)")
            }
        }
        #expect(try contents(bytes).count == sizes.count)
    }

    @Test func deterministicWhateverTheOrder() throws {
        let members: [ArchiveWriter.Member] = [
            .init(path: "z.txt", source: .bytes(text(lines: 50))),
            .init(path: "a/b.png", source: .bytes(noise(70_000))),
            .init(path: "données/日本.txt", source: .bytes(text(lines: 5))),
        ]
        try ArchiveWriter.write(members, comment: [1, 2, 3], to: directory.file("one.zip"))
        try ArchiveWriter.write(members.reversed(), comment: [1, 2, 3], to: directory.file("two.zip"))
        #expect(try directory.read("one.zip") == directory.read("two.zip"))
    }

    @Test func automaticCompressionChoices() throws {
        let compressible = text(lines: 100)
        let (archive, _) = try roundTrip([
            .init(path: "photo.PNG", source: .bytes(compressible)),
            .init(path: "clip.mp4", source: .bytes(compressible)),
            .init(path: "tiny.txt", source: .bytes(Array(compressible[..<200]))),
            .init(path: "scene.json", source: .bytes(compressible)),
            .init(path: "random.dat", source: .bytes(noise(10_000))),
            .init(path: "forced.dat", source: .bytes(noise(10_000)), compression: .deflated),
        ])
        let methods = Dictionary(uniqueKeysWithValues: archive.entries.map { ($0.path, $0.method) })
        #expect(methods == ["photo.PNG": .stored, "clip.mp4": .stored, "tiny.txt": .stored,
                            "scene.json": .deflated, "random.dat": .stored, "forced.dat": .deflated])
    }

    @Test func nonASCIINamesSetTheUTF8Flag() throws {
        let (archive, bytes) = try roundTrip([
            .init(path: "données/日本.txt", source: .bytes([1])), .init(path: "plain", source: .bytes([2])),
        ])
        let flags = Dictionary(uniqueKeysWithValues: archive.entries.map { ($0.path, bytes.u16(Int($0.localHeaderOffset) + 6)) })
        #expect(flags["données/日本.txt"]! & 0x0800 != 0)
        #expect(flags["plain"]! & 0x0800 == 0)
    }

    @Test func fileSourcesSmallAndStreamed() throws {
        let large = text(lines: 60_000)  // ~3.5 MB, streamed
        let largeNoise = noise(3 << 20)  // streamed, deflate does not pay
        let inputs: [String: [UInt8]] = ["small.txt": text(lines: 10), "large.txt": large, "large.bin": largeNoise]
        var members: [ArchiveWriter.Member] = []
        for (name, bytes) in inputs {
            members.append(.init(path: "src/" + name, source: .file(try directory.write("in/" + name, bytes))))
        }
        members.append(.init(path: "src/large-stored.txt", source: .file(directory.file("in/large.txt")), compression: .stored))
        let (archive, bytes) = try roundTrip(members)
        let extracted = try contents(bytes)
        #expect(extracted["src/small.txt"] == inputs["small.txt"])
        #expect(extracted["src/large.txt"] == large)
        #expect(extracted["src/large.bin"] == largeNoise)
        #expect(extracted["src/large-stored.txt"] == large)
        let methods = Dictionary(uniqueKeysWithValues: archive.entries.map { ($0.path, $0.method) })
        #expect(methods["src/large.txt"] == .deflated)
        #expect(methods["src/large.bin"] == .stored)
        for entry in archive.entries where entry.method == .stored && entry.uncompressedSize >= 65_536 {
            #expect(entry.dataOffset % UInt64(MappedRegion.pageSize) == 0)
        }
    }

    @Test func streamedAndInMemoryWritesAgree() throws {
        let large = text(lines: 40_000)
        let source = try directory.write("big.txt", large)
        try ArchiveWriter.write([.init(path: "big.txt", source: .file(source))], to: directory.file("file.zip"))
        try ArchiveWriter.write([.init(path: "big.txt", source: .bytes(large))], to: directory.file("bytes.zip"))
        #expect(try directory.read("file.zip") == directory.read("bytes.zip"))
    }

    @Test func replacesAnExistingArchiveAndLeavesNoTemporaryFile() throws {
        let path = directory.file("out.zip")
        try directory.write("out.zip", Array("old".utf8))
        try ArchiveWriter.write([.init(path: "a", source: .bytes([1]))], to: path)
        #expect(try extractAll(directory.read("out.zip")) == ["a": [1]])
        #expect(try FileManagerList.names(in: directory.path) == ["out.zip"])
    }

    @Test func manyMembersUseZip64Count() throws {
        let members = (0 ..< 65_536).map { ArchiveWriter.Member(path: "f/\($0)", source: .bytes([UInt8(truncatingIfNeeded: $0)])) }
        let (archive, bytes) = try roundTrip(members)
        #expect(archive.usesZip64)
        #expect(archive.entries.count == 65_536)
        let sample = try bytes.withUnsafeBytes { b in try ZipArchive.extract(archive.entries[1234], from: b, archive: "t") }
        #expect(sample.count == 1)
    }
}

@Suite struct WriterRefusalTests {
    let directory = TemporaryDirectory()

    private func writeError(_ members: [ArchiveWriter.Member], comment: [UInt8] = []) -> ArchiveError? {
        do { try ArchiveWriter.write(members, comment: comment, to: directory.file("w.zip")); return nil } catch { return error }
    }

    @Test(arguments: [
        ("../x", ArchiveError.PathProblem.parentTraversal), ("/etc/x", .absolute), ("a\\b", .backslash),
        ("a\u{0}b", .nulByte), ("", .empty), ("a//b", .emptyComponent), ("a/./b", .currentDirectoryComponent),
        ("dir/", .emptyComponent), ("C:/x", .absolute),
    ])
    func refusesUnsafePaths(path: String, reason: ArchiveError.PathProblem) {
        #expect(writeError([.init(path: path, source: .bytes([]))])
            == .unsafePath(archive: directory.file("w.zip"), path: path, reason: reason))
        #expect(!FileManagerList.exists(directory.file("w.zip")))
    }

    @Test func refusesDuplicatePaths() {
        #expect(writeError([.init(path: "a", source: .bytes([1])), .init(path: "a", source: .bytes([2]))])
            == .duplicateMember(archive: directory.file("w.zip"), path: "a"))
        #expect(writeError([.init(path: "\u{e9}", source: .bytes([1])), .init(path: "e\u{301}", source: .bytes([2]))])
            == .duplicateMember(archive: directory.file("w.zip"), path: "e\u{301}"))
    }

    @Test func refusesMissingAndNonRegularSources() throws {
        let missing = directory.file("nope")
        #expect(writeError([.init(path: "a", source: .file(missing))])
            == .unreadableSource(archive: directory.file("w.zip"), path: "a", source: missing, problem: .system(.noSuchFile)))
        #expect(writeError([.init(path: "a", source: .file(directory.path))])
            == .unreadableSource(archive: directory.file("w.zip"), path: "a", source: directory.path, problem: .notRegularFile))
        #expect(try FileManagerList.names(in: directory.path).isEmpty, "the temporary file is removed")
    }

    @Test func refusesBadComments() {
        let long = [UInt8](repeating: 65, count: 65_536)
        #expect(writeError([], comment: long) == .invalidComment(archive: directory.file("w.zip"), length: 65_536))
        #expect(writeError([], comment: [0x50, 0x4b, 5, 6]) == .invalidComment(archive: directory.file("w.zip"), length: 4))
    }
}

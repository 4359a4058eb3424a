import Foundation
import Testing
import AssetArchive
@testable import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// Piece maps: made from a pack file, encoded, parsed back, and every
/// refusal of a bad one.
@Suite struct PieceMapTests {
    let dir = TemporaryDirectory("piecemap")

    /// A pack with stored, deflated, empty and page-aligned members.
    func pack(_ name: String = "P.zip") throws -> String {
        let path = dir.file(name)
        let members: [ArchiveWriter.Member] = [
            .init(path: "text/readme.txt", source: .bytes(Array(String(repeating: "hello piece map ", count: 400).utf8)), compression: .deflated),
            .init(path: "media/big.bin", source: .bytes((0 ..< 70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }), compression: .stored),
            .init(path: "empty", source: .bytes([]), compression: .stored),
            .init(path: "small.png", source: .bytes([1, 2, 3, 4, 5]), compression: .stored),
        ]
        try ArchiveWriter.write(members, comment: PackDescription(id: "P", downloadPolicy: .onDemand, platforms: [.linux], version: 4).archiveComment,
                                to: path)
        return path
    }

    func member(_ path: String, of map: PieceMap) throws -> PieceMap.Member {
        try #require(map.members.first { $0.path == path })
    }

    func entry(for map: PieceMap) -> Catalog.Entry {
        Catalog.Entry(id: map.pack, version: map.version, size: map.size, sha256: map.sha256, downloadPolicy: .onDemand,
                      platforms: [], url: "P-\(map.sha256.prefix(12)).zip",
                      pieces: .init(url: "P-\(map.sha256.prefix(12)).zip.pieces", size: 1, sha256: String(repeating: "0", count: 64)))
    }

    @Test func aMapOfAPackDescribesEveryByteOfIt() throws {
        let path = try pack()
        let file = try dir.read("P.zip")
        let (map, glue) = try PieceMap.makeWithGlue(archivePath: path, pack: nil, version: nil)
        #expect(map == (try PieceMap.make(archivePath: path)))
        #expect(map.pack == "P" && map.version == 4 && map.size == UInt64(file.count))
        #expect(map.sha256 == file.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) })
        #expect(Set(map.members.map(\.path)) == ["text/readme.txt", "media/big.bin", "empty", "small.png"])
        #expect(map.members.map(\.offset) == map.members.map(\.offset).sorted())
        let archive = try ZipArchive.open(path: path)
        for member in map.members {
            let entry = try #require(archive.entries.first { $0.path == member.path })
            #expect(member.offset == entry.dataOffset && member.size == entry.compressedSize && member.crc32 == entry.crc32)
            #expect(member.length == entry.uncompressedSize && member.method == entry.method)
            let data = Array(file[Int(member.offset) ..< Int(member.offset + member.size)])
            #expect(member.sha256 == data.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) })
        }
        #expect(try member("text/readme.txt", of: map).method == .deflated && member("media/big.bin", of: map).offset % 4096 == 0)
        // Glue in its ranges plus the members' data is the file, byte for byte.
        var rebuilt = [UInt8](repeating: 0xee, count: file.count)
        var at = 0
        for range in map.glueRanges {
            rebuilt.replaceSubrange(Int(range.lowerBound) ..< Int(range.upperBound), with: glue[at ..< at + range.count])
            at += range.count
        }
        #expect(at == glue.count && UInt64(glue.count) == map.glue.size)
        for member in map.members {
            rebuilt.replaceSubrange(Int(member.offset) ..< Int(member.offset + member.size), with: file[Int(member.offset) ..< Int(member.offset + member.size)])
        }
        #expect(rebuilt == file)
        #expect(map.glue.sha256 == glue.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) })
        #expect(map.glue.url == "P-\(map.sha256.prefix(12)).zip.glue")
        #expect(map.glueRanges.first?.lowerBound == 0 && map.glueRanges.last?.upperBound == map.size)
    }

    @Test func encodingIsDeterministicAndParsesBackEqual() throws {
        let map = try PieceMap.make(archivePath: try pack(), pack: "Q", version: 9)
        #expect(map.pack == "Q" && map.version == 9)
        let bytes = map.encoded()
        #expect(bytes == map.encoded())
        #expect(bytes.last == 0x0a && !bytes.dropLast().contains(0x0a))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("{\"format\":1,\"glue\":{\"sha256\":"))
        #expect(text.contains("{\"crc32\":") && text.contains(",\"pack\":\"Q\",\"sha256\":"))
        let parsed = try PieceMap.parse(bytes, path: "p.pieces")
        #expect(parsed == map)
        try parsed.validate(against: entry(for: map))
        // Unknown fields are ignored, as in catalogs.
        let extended = text.replacingOccurrences(of: "{\"format\":1,", with: "{\"format\":1,\"future\":[1],")
        #expect(try PieceMap.parse(Array(extended.utf8), path: "p.pieces") == map)
    }

    /// Replaces `old` (which must be in `text`) by `new`.
    func replacing(_ old: String, _ new: String, in text: String) -> [UInt8] {
        precondition(text.contains(old), old)
        return Array(text.replacingOccurrences(of: old, with: new).utf8)
    }

    func expectProblem(_ problem: DeliveryError.PieceMapProblem, _ bytes: [UInt8], pack: String? = "P",
                       maximumMembers: Int = PieceMap.maximumMembers, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            _ = try PieceMap.parse(bytes, path: "site/P.zip.pieces", pack: nil, maximumMembers: maximumMembers)
        } throws: { error in
            guard case .badPieceMap("site/P.zip.pieces", let found, let p, let detail) = error as? DeliveryError else { return false }
            return p == problem && found == pack && !detail.isEmpty
        }
    }

    @Test func malformedJSONAndFieldsAreRefused() throws {
        let map = try PieceMap.make(archivePath: try pack())
        let text = String(decoding: map.encoded(), as: UTF8.self)
        let first = map.members[0]
        expectProblem(.notJSON, Array(text.dropLast(3).utf8), pack: nil)
        expectProblem(.notJSON, [], pack: nil)
        expectProblem(.wrongType, Array("[1]".utf8), pack: nil)
        expectProblem(.unsupportedFormat, replacing("\"format\":1", "\"format\":2", in: text), pack: nil)
        expectProblem(.missingField, replacing("\"format\":1,", "", in: text), pack: nil)
        expectProblem(.missingField, replacing(",\"pack\":\"P\"", "", in: text), pack: nil)
        expectProblem(.missingField, replacing("\"members\":[", "\"memberz\":[", in: text))
        expectProblem(.missingField, replacing("{\"crc32\":\(first.crc32),", "{", in: text))
        expectProblem(.wrongType, replacing("\"version\":4", "\"version\":\"4\"", in: text))
        let membersInObject = text.replacingOccurrences(of: "\"members\":[", with: "\"members\":{\"a\":[")
        expectProblem(.wrongType, replacing("}],\"pack\"", "}]},\"pack\"", in: membersInObject))
        let glueInArray = text.replacingOccurrences(of: "\"glue\":{", with: "\"glue\":[{")
        expectProblem(.wrongType, replacing("},\"members\"", "}],\"members\"", in: glueInArray))
        expectProblem(.badValue, replacing("\"version\":4", "\"version\":4.0", in: text))
        expectProblem(.badValue, replacing("\"version\":4", "\"version\":-4", in: text))
        expectProblem(.badValue, replacing("\"size\":\(map.size)", "\"size\":9007199254740992", in: text))
        expectProblem(.badValue, replacing("{\"crc32\":\(first.crc32),", "{\"crc32\":4294967296,", in: text))
        expectProblem(.badValue, replacing("\"method\":8", "\"method\":9", in: text))
        expectProblem(.badValue, replacing("\"sha256\":\"\(first.sha256)\"", "\"sha256\":\"\(first.sha256.uppercased())\"", in: text))
        expectProblem(.badValue, replacing("\"path\":\"empty\"", "\"path\":\"\"", in: text))
        expectProblem(.badValue, replacing("\"url\":\"\(map.glue.url)\"", "\"url\":\"../\(map.glue.url)\"", in: text))
        let stored = try member("small.png", of: map)
        expectProblem(.badValue, replacing("\"length\":\(stored.length),\"method\":0,\"offset\":\(stored.offset)",
                                           "\"length\":\(stored.length + 1),\"method\":0,\"offset\":\(stored.offset)", in: text))
    }

    @Test func layoutsThatContradictThemselvesAreRefused() throws {
        let map = try PieceMap.make(archivePath: try pack())
        var unsorted = map
        unsorted.members.swapAt(1, 2)
        expectProblem(.notSorted, unsorted.encoded())
        var overlapping = map
        overlapping.members[2].offset = map.members[1].offset + map.members[1].size - 1
        expectProblem(.overlapping, overlapping.encoded())
        var outside = map
        outside.members[3].size = map.size - map.members[3].offset + 1
        outside.members[3].length = outside.members[3].size
        expectProblem(.outsideFile, outside.encoded())
        var huge = map
        huge.members[3].offset = Catalog.maximumInteger
        expectProblem(.outsideFile, huge.encoded())
        var glue = map
        glue.glue.size += 1
        expectProblem(.glueSizeMismatch, glue.encoded())
        expectProblem(.tooManyMembers, map.encoded(), maximumMembers: 3)
        #expect(try PieceMap.parse(map.encoded(), path: "p", pack: nil, maximumMembers: 4) == map)
    }

    @Test func aMapOverTheSizeLimitIsRefusedBeforeReading() throws {
        expectProblem(.tooLarge, [UInt8](repeating: 0x20, count: PieceMap.maximumLength + 1), pack: nil)
        let reference = Catalog.PiecesReference(url: "P.zip.pieces", size: UInt64(PieceMap.maximumLength) + 1, sha256: String(repeating: "a", count: 64))
        #expect(throws: DeliveryError.self) { try PieceMap.checkSize(of: reference, url: "http://h/P.zip.pieces", pack: "P") }
        do {
            try PieceMap.checkSize(of: reference, url: "http://h/P.zip.pieces", pack: "P")
        } catch {
            guard case .badPieceMap("http://h/P.zip.pieces", "P", .tooLarge, _) = error else { Issue.record("\(error)"); return }
        }
        var fits = reference
        fits.size = UInt64(PieceMap.maximumLength)
        try PieceMap.checkSize(of: fits, url: "u", pack: "P")
    }

    @Test func fetchedBytesMustMatchTheirReference() throws {
        let bytes = Array("piece map bytes".utf8)
        let reference = Catalog.PiecesReference(url: "x", size: UInt64(bytes.count), sha256: bytes.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) })
        try PieceMap.checkBytes(bytes, match: reference, url: "u", pack: "P")
        for bad in [bytes.dropLast().map { $0 }, bytes.map { $0 == 0x70 ? 0x71 : $0 }] {
            #expect {
                try PieceMap.checkBytes(bad, match: reference, url: "u", pack: "P")
            } throws: { error in
                guard case .badPieceMap("u", "P", .referenceMismatch, _) = error as? DeliveryError else { return false }
                return true
            }
        }
    }

    @Test(arguments: [DeliveryError.PieceMapProblem.packMismatch, .versionMismatch, .sizeMismatch, .sha256Mismatch])
    func aMapOfAnotherFileIsRefused(_ problem: DeliveryError.PieceMapProblem) throws {
        let map = try PieceMap.make(archivePath: try pack())
        var entry = entry(for: map)
        switch problem {
        case .packMismatch: entry.id = "Other"
        case .versionMismatch: entry.version += 1
        case .sizeMismatch: entry.size += 1
        default: entry.sha256 = String(repeating: "0", count: 64)
        }
        #expect {
            try map.validate(against: entry)
        } throws: { error in
            guard case .badPieceMap(let url, let pack, let found, _) = error as? DeliveryError else { return false }
            return found == problem && url == entry.pieces?.url && pack == entry.id
        }
    }

    @Test func anArchiveTheReaderRefusesMakesNoMap() throws {
        try dir.write("bad.zip", Array("not a zip at all".utf8))
        #expect {
            _ = try PieceMap.make(archivePath: dir.file("bad.zip"))
        } throws: { error in
            guard case .store(.archive) = error as? DeliveryError else { return false }
            return true
        }
        #expect {
            _ = try PieceMap.make(archivePath: dir.file("missing.zip"))
        } throws: { error in
            guard case .system(let e) = error as? DeliveryError else { return false }
            return e == .noSuchFile && e.path == dir.file("missing.zip")
        }
    }

    @Test func catalogsCarryAndCheckThePiecesReference() throws {
        let sha = String(repeating: "ab", count: 32)
        let entry = Catalog.Entry(id: "P", version: 2, size: 10, sha256: sha, downloadPolicy: .onDemand, platforms: [.linux],
                                  url: "P-abababababab.zip", pieces: .init(url: "P-abababababab.zip.pieces", size: 300, sha256: sha))
        let catalog = Catalog(sequence: 1, published: CatalogTime(seconds: 1_796_117_400), expires: nil, packs: [entry])
        let text = String(decoding: catalog.encoded(), as: UTF8.self)
        #expect(text.contains("\"pieces\":{\"sha256\":\"\(sha)\",\"size\":300,\"url\":\"P-abababababab.zip.pieces\"}"))
        #expect(try Catalog.parse(catalog.encoded(), path: "c") == catalog)
        var old = catalog
        old.packs[0].pieces = nil
        #expect(try Catalog.parse(old.encoded(), path: "c").packs[0].pieces == nil)
        let cases: [(String, String, String, DeliveryError.CatalogProblem)] = [
            ("\"pieces\":{", "\"pieces\":[{", "packs[0].pieces", .wrongType),
            ("\"size\":300,", "", "packs[0].pieces.size", .missingField),
            ("\"size\":300,", "\"size\":-1,", "packs[0].pieces.size", .badSize),
            ("\"sha256\":\"\(sha)\",\"size\":300", "\"sha256\":\"abc\",\"size\":300", "packs[0].pieces.sha256", .badSHA256),
            ("\"url\":\"P-abababababab.zip.pieces\"", "\"url\":\"/etc/passwd\"", "packs[0].pieces.url", .badURL),
            ("\"url\":\"P-abababababab.zip.pieces\"", "\"url\":7", "packs[0].pieces.url", .wrongType),
        ]
        for (old, new, field, problem) in cases {
            var bad = text.replacingOccurrences(of: old, with: new)
            if new.hasSuffix("[{") { bad = bad.replacingOccurrences(of: ".pieces\"}", with: ".pieces\"}]") }
            #expect(bad != text)
            #expect {
                _ = try Catalog.parse(Array(bad.utf8), path: "c")
            } throws: { error in
                guard case .invalidCatalog("c", field, problem, _) = error as? DeliveryError else { return false }
                return true
            }
        }
    }
}

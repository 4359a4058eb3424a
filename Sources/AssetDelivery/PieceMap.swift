import Foundation
public import AssetArchive
internal import AssetJSON
import AssetStore
import AssetSystem

/// What a client needs to rebuild a published pack file from pieces: where
/// each member's data lies in the file, with what identifies it, and where
/// the rest (the *glue*) is fetched in one request.
///
/// `publish` writes it beside each pack as `<id>-<12 hex>.zip.pieces`, and
/// the glue as `<id>-<12 hex>.zip.glue`:
///
/// ```json
/// {"format":1,"glue":{"sha256":"…","size":5120,"url":"Tutorial-0123456789ab.zip.glue"},
///  "members":[{"crc32":3735928559,"length":5,"method":0,"offset":73,"path":"a.txt","sha256":"…","size":5}],
///  "pack":"Tutorial","sha256":"…","size":5198,"version":3}
/// ```
///
/// Members are sorted by `offset`; `offset` and `size` are the member's
/// *data* — its bytes as stored in the archive, after the local header;
/// `sha256` is over those stored bytes, `crc32` and `length` are the
/// archive's (of the inflated bytes). Every byte of the file outside the
/// members' data is glue (``glueRanges``): local headers, alignment padding,
/// data descriptors, the central directory, the end records. The glue file
/// holds those bytes concatenated in file order; its URL is relative to the
/// piece map's.
///
/// ``encoded()`` writes the same bytes for the same map (keys sorted,
/// compact, one final newline); ``parse(_:path:pack:)`` reads them back equal
/// and checks the map against itself, ``validate(against:)`` against the
/// catalog entry of the file.
public struct PieceMap: Sendable, Hashable {
    /// The format this version writes and reads.
    public static let format = 1
    /// The longest piece map read: 64 MiB. A client holds the map in memory,
    /// so a longer one is refused before it is read (``checkSize(of:url:pack:)``).
    public static let maximumLength = 64 << 20
    /// The most members a map may list: 10 million.
    public static let maximumMembers = 10_000_000

    /// The glue file: URL (relative to the piece map's), size, SHA-256.
    public typealias GlueReference = Catalog.PiecesReference

    /// One member's data in the file.
    public struct Member: Sendable, Hashable {
        /// The member's path in the archive.
        public var path: String
        /// Where its stored bytes start in the file.
        public var offset: UInt64
        /// How many stored bytes it has (the archive's compressed size).
        public var size: UInt64
        public var method: CompressionMethod
        /// The CRC-32 of its inflated bytes.
        public var crc32: UInt32
        /// Its inflated size.
        public var length: UInt64
        /// The SHA-256 of its stored bytes, 64 lowercase hex digits.
        public var sha256: String

        public init(path: String, offset: UInt64, size: UInt64, method: CompressionMethod, crc32: UInt32, length: UInt64, sha256: String) {
            self.path = path
            self.offset = offset
            self.size = size
            self.method = method
            self.crc32 = crc32
            self.length = length
            self.sha256 = sha256
        }

        /// The file range of its data.
        public var range: Range<UInt64> { offset ..< offset + size }
    }

    /// The pack's ID.
    public var pack: String
    /// The pack's version in the catalog.
    public var version: UInt64
    /// The file's size in bytes.
    public var size: UInt64
    /// The file's SHA-256, 64 lowercase hex digits.
    public var sha256: String
    public var glue: GlueReference
    /// Sorted by ``Member/offset``, not overlapping.
    public var members: [Member]

    public init(pack: String, version: UInt64, size: UInt64, sha256: String, glue: GlueReference, members: [Member]) {
        self.pack = pack
        self.version = version
        self.size = size
        self.sha256 = sha256
        self.glue = glue
        self.members = members
    }

    /// The file ranges the glue fills, in file order (empty ranges left
    /// out): the glue file's bytes, in order, are these ranges' bytes.
    public var glueRanges: [Range<UInt64>] {
        var ranges: [Range<UInt64>] = []
        var at: UInt64 = 0
        for member in members {
            if member.offset > at { ranges.append(at ..< member.offset) }
            at = max(at, member.offset + member.size)
        }
        if size > at { ranges.append(at ..< size) }
        return ranges
    }

    /// The map's JSON: compact, keys sorted, a final newline.
    public func encoded() -> [UInt8] {
        let root: JSONValue = [
            "format": .number(JSONNumber(Int64(Self.format))), "pack": .string(pack), "version": .number(JSONNumber(version)),
            "size": .number(JSONNumber(size)), "sha256": .string(sha256), "glue": glue.json,
            "members": .array(members.map(\.json)),
        ]
        return root.encoded(sortedKeys: true) + [0x0a]
    }

    /// The piece map and glue file names of the pack file `name`.
    public static func names(ofPackFile name: String) -> (pieces: String, glue: String) {
        (name + ".pieces", name + ".glue")
    }
}

extension PieceMap.Member {
    var json: JSONValue {
        [
            "path": .string(path), "offset": .number(JSONNumber(offset)), "size": .number(JSONNumber(size)),
            "method": .number(JSONNumber(Int64(method.rawValue))), "crc32": .number(JSONNumber(UInt64(crc32))),
            "length": .number(JSONNumber(length)), "sha256": .string(sha256),
        ]
    }
}

// MARK: - Making one from a pack file

extension PieceMap {
    /// The piece map of the pack file at `archivePath`, for the pack ID and
    /// version its recorded manifest gives (else its file name without the
    /// extension, and version 1). See ``make(archivePath:pack:version:)``.
    public static func make(archivePath: String) throws(DeliveryError) -> PieceMap {
        try make(archivePath: archivePath, pack: nil, version: nil)
    }

    /// The piece map of the pack file at `archivePath`, read with the strict
    /// archive reader: the members' data ranges are the archive entries'
    /// (`dataOffset`, `compressedSize`), each hashed; the glue is every
    /// other byte, and the glue URL is the file's published name
    /// (``Publisher/contentName(id:sha256:)``) plus `.glue`.
    ///
    /// - Parameters:
    ///   - pack: the pack's ID; `nil`: the recorded manifest's, else the
    ///     file name without its extension.
    ///   - version: the catalog version; `nil`: the recorded manifest's, else 1.
    /// - Throws: `DeliveryError.store` (`.archive`) for a file the reader
    ///   refuses, `.system` when it cannot be read.
    public static func make(archivePath: String, pack: String?, version: UInt64?) throws(DeliveryError) -> PieceMap {
        try makeWithGlue(archivePath: archivePath, pack: pack, version: version).map
    }

    /// ``make(archivePath:pack:version:)`` and the glue file's bytes.
    static func makeWithGlue(archivePath: String, pack: String?, version: UInt64?) throws(DeliveryError) -> (map: PieceMap, glue: [UInt8]) {
        let region: MappedRegion
        do {
            let fd = try FileDescriptor.open(archivePath)
            region = try MappedRegion(mapping: fd, count: Int(try fd.status().size))
        } catch {
            throw .system(error.with(operation: error.operation, path: archivePath))
        }
        region.advise(.sequential)
        let bytes = region.bytes
        let archive: ZipArchive
        do { archive = try ZipArchive.parse(bytes, name: archivePath) } catch { throw .store(.archive(error)) }
        let description: PackDescription?
        do { description = try PackDescription.decode(archiveComment: archive.comment, archive: archivePath) } catch { throw .store(error) }
        let id = pack ?? description?.id ?? ((archivePath as NSString).lastPathComponent as NSString).deletingPathExtension
        let sha256 = SHA256.hex(SHA256.hash(bytes))
        let members = archive.entries.sorted { $0.dataOffset < $1.dataOffset }.map { entry in
            let data = UnsafeRawBufferPointer(rebasing: bytes[Int(entry.dataOffset) ..< Int(entry.dataOffset + entry.compressedSize)])
            return Member(path: entry.path, offset: entry.dataOffset, size: entry.compressedSize, method: entry.method,
                          crc32: entry.crc32, length: entry.uncompressedSize, sha256: SHA256.hex(SHA256.hash(data)))
        }
        var map = PieceMap(pack: id, version: version ?? description?.version ?? 1, size: UInt64(bytes.count), sha256: sha256,
                           glue: GlueReference(url: "", size: 0, sha256: ""), members: members)
        var glue: [UInt8] = []
        for range in map.glueRanges { glue += UnsafeRawBufferPointer(rebasing: bytes[Int(range.lowerBound) ..< Int(range.upperBound)]) }
        let name = names(ofPackFile: Publisher.contentName(id: id, sha256: sha256)).glue
        map.glue = GlueReference(url: name, size: UInt64(glue.count), sha256: glue.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) })
        return (map, glue)
    }
}

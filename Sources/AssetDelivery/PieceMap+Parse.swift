import AssetArchive
internal import AssetJSON
import AssetStore

extension PieceMap {
    /// Parses piece map JSON (strict RFC 8259) and checks it against itself:
    /// members sorted by offset, not overlapping, inside the file; the glue's
    /// size the file's less the members'. Unknown fields are ignored, as in
    /// catalogs. `path` (the map's URL) names it in errors, with `pack` when
    /// given, else the map's own `pack` once read.
    ///
    /// - Throws: `DeliveryError.badPieceMap` with the problem: `.tooLarge`
    ///   (over ``maximumLength`` bytes), `.notJSON`, `.unsupportedFormat`,
    ///   `.missingField`, `.wrongType`, `.badValue`, `.tooManyMembers`,
    ///   `.notSorted`, `.overlapping`, `.outsideFile`, `.glueSizeMismatch`.
    public static func parse(_ bytes: some Collection<UInt8>, path: String, pack: String? = nil) throws(DeliveryError) -> PieceMap {
        try parse(bytes, path: path, pack: pack, maximumMembers: maximumMembers)
    }

    /// ``parse(_:path:pack:)`` with another member limit (tests).
    ///
    /// The members are read as the parser completes each one (the JSON
    /// values of the whole array are never held at once): memory holds the
    /// bytes, the members and one member's value — some twice the map's
    /// size, where the values of every member took five times it more. A
    /// member's error is kept and thrown after the fields before it in the
    /// order below, as if the whole document had been read first.
    static func parse(_ bytes: some Collection<UInt8>, path: String, pack: String?, maximumMembers: Int) throws(DeliveryError) -> PieceMap {
        var reader = PieceMapReader(url: path, pack: pack)
        guard bytes.count <= maximumLength else {
            throw reader.bad(.tooLarge, "\(bytes.count) bytes is more than the limit of \(maximumLength)")
        }
        var members: [Member] = []
        var count = 0
        var memberError: DeliveryError?
        let root: JSONValue
        do {
            root = try JSONValue.parseStrict(bytes, maximumLength: maximumLength, elementsOf: "members") { item in
                defer { count += 1 }
                // Past the limit or an error, the rest is only counted (and parsed).
                guard count < maximumMembers, memberError == nil else {
                    members = []
                    return true
                }
                var memberReader = reader
                memberReader.prefix = "members[\(count)]."
                do throws(DeliveryError) { members.append(try memberReader.member(item)) } catch { memberError = error }
                return true
            }
        } catch {
            throw reader.bad(.notJSON, "not valid JSON: \(error)")
        }
        guard let object = root.objectValue else { throw reader.bad(.wrongType, "must be a JSON object") }
        guard let format = try reader.require(object, "format").numberValue else { throw reader.bad(.wrongType, "format must be a number") }
        guard format.text == String(Self.format) else {
            throw reader.bad(.unsupportedFormat, "format \(format.text) is not supported (this version reads format \(Self.format))")
        }
        let id = try reader.string(object, "pack")
        if reader.pack == nil { reader.pack = id }
        let version = try reader.integer(object, "version")
        let size = try reader.integer(object, "size")
        let sha256 = try reader.sha256(object, "sha256")
        guard let glueObject = try reader.require(object, "glue").objectValue else { throw reader.bad(.wrongType, "glue must be an object") }
        reader.prefix = "glue."
        let glueURL = try reader.string(glueObject, "url")
        if let problem = CatalogURL.problem(glueURL) {
            throw reader.bad(.badValue, "glue.url '\(MemberPath.escapingControlCharacters(glueURL))' \(problem)")
        }
        let glue = GlueReference(url: glueURL, size: try reader.integer(glueObject, "size"), sha256: try reader.sha256(glueObject, "sha256"))
        reader.prefix = ""
        guard try reader.require(object, "members").arrayValue != nil else { throw reader.bad(.wrongType, "members must be an array") }
        guard count <= maximumMembers else {
            throw reader.bad(.tooManyMembers, "\(count) members is more than the limit of \(maximumMembers)")
        }
        if let memberError {
            // Made before the map's own `pack` was read: named now.
            guard case .badPieceMap(let url, let pack, let problem, let detail) = memberError else { throw memberError }
            throw .badPieceMap(url: url, pack: pack ?? reader.pack, problem: problem, detail: detail)
        }
        let map = PieceMap(pack: id, version: version, size: size, sha256: sha256, glue: glue, members: members)
        try map.checkLayout(reader)
        return map
    }

    /// Members sorted, apart, inside the file; the glue the rest.
    private func checkLayout(_ reader: PieceMapReader) throws(DeliveryError) {
        var previous: Member?
        var stored: UInt64 = 0
        for (i, member) in members.enumerated() {
            let (end, overflow) = member.offset.addingReportingOverflow(member.size)
            guard !overflow, end <= size else {
                throw reader.bad(.outsideFile, "members[\(i)] ('\(reader.escaped(member.path))') lies at \(member.offset) ..< \(member.offset &+ member.size), past the end of the \(size)-byte file")
            }
            if let previous {
                guard member.offset >= previous.offset else {
                    throw reader.bad(.notSorted, "members[\(i)] ('\(reader.escaped(member.path))') at \(member.offset) comes after one at \(previous.offset): members must be sorted by offset")
                }
                guard member.offset >= previous.offset + previous.size else {
                    throw reader.bad(.overlapping, "members[\(i)] ('\(reader.escaped(member.path))') at \(member.offset) overlaps '\(reader.escaped(previous.path))' at \(previous.range)")
                }
            }
            stored += member.size
            previous = member
        }
        guard glue.size == size - stored else {
            throw reader.bad(.glueSizeMismatch, "the glue is \(glue.size) bytes; the file's \(size) bytes less the members' \(stored) is \(size - stored)")
        }
    }

    /// Checks that the map describes the file of catalog entry `entry`: its
    /// pack, version, size and SHA-256. Errors name the entry's piece map
    /// URL (or the pack's URL plus `.pieces` when the entry names none).
    ///
    /// - Throws: `DeliveryError.badPieceMap` with `.packMismatch`,
    ///   `.versionMismatch`, `.sizeMismatch` or `.sha256Mismatch`.
    public func validate(against entry: Catalog.Entry) throws(DeliveryError) {
        let reader = PieceMapReader(url: entry.pieces?.url ?? Self.names(ofPackFile: entry.url).pieces, pack: entry.id)
        guard pack == entry.id else { throw reader.bad(.packMismatch, "it describes pack '\(reader.escaped(pack))'") }
        guard version == entry.version else {
            throw reader.bad(.versionMismatch, "it describes version \(version), the catalog's is \(entry.version)")
        }
        guard size == entry.size else { throw reader.bad(.sizeMismatch, "it describes a \(size)-byte file, the catalog's is \(entry.size) bytes") }
        guard sha256 == entry.sha256 else {
            throw reader.bad(.sha256Mismatch, "it describes the file with SHA-256 \(sha256), the catalog's is \(entry.sha256)")
        }
    }

    /// Refuses a reference to a piece map longer than ``maximumLength``,
    /// before anything is read. `url` is the map's resolved URL.
    ///
    /// - Throws: `DeliveryError.badPieceMap` with `.tooLarge`.
    public static func checkSize(of reference: Catalog.PiecesReference, url: String, pack: String?) throws(DeliveryError) {
        guard reference.size <= UInt64(maximumLength) else {
            throw PieceMapReader(url: url, pack: pack).bad(.tooLarge, "the catalog gives \(reference.size) bytes, more than the limit of \(maximumLength)")
        }
    }

    /// Checks fetched bytes (a piece map or its glue) against the size and
    /// SHA-256 their reference gives.
    ///
    /// - Throws: `DeliveryError.badPieceMap` with `.referenceMismatch`.
    public static func checkBytes(_ bytes: [UInt8], match reference: Catalog.PiecesReference, url: String, pack: String?) throws(DeliveryError) {
        let reader = PieceMapReader(url: url, pack: pack)
        guard UInt64(bytes.count) == reference.size else {
            throw reader.bad(.referenceMismatch, "\(bytes.count) bytes, the reference gives \(reference.size)")
        }
        let found = bytes.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) }
        guard found == reference.sha256 else {
            throw reader.bad(.referenceMismatch, "SHA-256 \(found) is not the reference's \(reference.sha256)")
        }
    }
}

/// Reads a piece map's fields, naming each in errors with its place
/// (`members[2].sha256`).
private struct PieceMapReader {
    let url: String
    var pack: String?
    var prefix = ""

    func bad(_ problem: DeliveryError.PieceMapProblem, _ detail: String) -> DeliveryError {
        .badPieceMap(url: url, pack: pack, problem: problem, detail: detail)
    }

    func escaped(_ text: String) -> String { MemberPath.escapingControlCharacters(text) }

    func require(_ object: JSONObject, _ key: String) throws(DeliveryError) -> JSONValue {
        guard let value = object[key] else { throw bad(.missingField, "\(prefix)\(key) is missing") }
        return value
    }

    func string(_ object: JSONObject, _ key: String) throws(DeliveryError) -> String {
        guard let s = try require(object, key).stringValue else { throw bad(.wrongType, "\(prefix)\(key) must be a string") }
        guard !s.isEmpty else { throw bad(.badValue, "\(prefix)\(key) must not be empty") }
        return s
    }

    /// A whole number in plain digits from 0 to `maximum`.
    func integer(_ object: JSONObject, _ key: String, maximum: UInt64 = Catalog.maximumInteger) throws(DeliveryError) -> UInt64 {
        guard let n = try require(object, key).numberValue else { throw bad(.wrongType, "\(prefix)\(key) must be a number") }
        guard n.text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let v = n.uint64Value, v <= maximum else {
            throw bad(.badValue, "\(prefix)\(key) must be a whole number from 0 to \(maximum), not \(n.text)")
        }
        return v
    }

    func sha256(_ object: JSONObject, _ key: String) throws(DeliveryError) -> String {
        let s = try string(object, key)
        guard s.utf8.count == 64, s.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            throw bad(.badValue, "\(prefix)\(key) must be 64 lowercase hex digits")
        }
        return s
    }

    func member(_ item: JSONValue) throws(DeliveryError) -> PieceMap.Member {
        guard let object = item.objectValue else { throw bad(.wrongType, "\(prefix.dropLast()) must be an object") }
        let path = try string(object, "path")
        let offset = try integer(object, "offset")
        let size = try integer(object, "size")
        let rawMethod = try integer(object, "method", maximum: UInt64(UInt16.max))
        guard let method = CompressionMethod(rawValue: UInt16(rawMethod)) else {
            throw bad(.badValue, "\(prefix)method must be 0 (stored) or 8 (deflated), not \(rawMethod)")
        }
        let crc32 = try integer(object, "crc32", maximum: UInt64(UInt32.max))
        let length = try integer(object, "length")
        if method == .stored && length != size {
            throw bad(.badValue, "\(prefix)length \(length) of a stored member must be its size \(size)")
        }
        return PieceMap.Member(path: path, offset: offset, size: size, method: method, crc32: UInt32(crc32), length: length,
                               sha256: try sha256(object, "sha256"))
    }
}

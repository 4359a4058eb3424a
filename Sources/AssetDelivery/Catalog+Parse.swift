internal import AssetJSON
import AssetArchive
import AssetStore

extension Catalog {
    /// The longest catalog read: 16 MiB (some 50,000 packs).
    public static let maximumLength = 16 << 20

    /// Parses catalog JSON (strict RFC 8259). Fields this version does not
    /// know are ignored, so a newer publisher can add some without breaking
    /// older clients; a new `format` number is how it says they must not
    /// read on. `path` names the catalog in errors.
    ///
    /// - Throws: `DeliveryError.unsupportedCatalogFormat` for a `format`
    ///   other than 1; `.invalidCatalog` naming the field and the problem.
    public static func parse(_ bytes: some Collection<UInt8>, path: String) throws(DeliveryError) -> Catalog {
        var reader = FieldReader(path: path)
        let root: JSONValue
        do {
            root = try JSONValue.parseStrict(bytes, maximumLength: maximumLength)
        } catch {
            throw .invalidCatalog(path: path, field: nil, problem: .notJSON, detail: "not valid JSON: \(error)")
        }
        guard let object = root.objectValue else {
            throw .invalidCatalog(path: path, field: nil, problem: .wrongType, detail: "must be a JSON object")
        }
        let formatValue = try reader.require(object, "format")
        guard let format = formatValue.numberValue else { throw reader.bad("format", .wrongType, "must be a number") }
        guard format.text == String(Self.format) else {
            throw .unsupportedCatalogFormat(path: path, format: format.text)
        }
        guard let sequence = try reader.integer(object, "sequence", .badSequence, from: 0) else {
            throw reader.bad("sequence", .missingField, "is missing")
        }
        let published = try reader.time(object, "published", required: true)!
        let expires = try reader.time(object, "expires", required: false)
        var channel: String?
        if object["channel"] != nil {
            let name = try reader.string(object, "channel")
            if let problem = channelProblem(name) {
                throw reader.bad("channel", .badChannel, "'\(MemberPath.escapingControlCharacters(name))': \(problem)")
            }
            channel = name
        }
        guard let list = try reader.require(object, "packs").arrayValue else {
            throw reader.bad("packs", .wrongType, "must be an array")
        }
        var packs: [Entry] = []
        var seen = Set<String>()
        for (i, item) in list.enumerated() {
            reader.prefix = "packs[\(i)]."
            let entry = try reader.entry(item)
            guard seen.insert(entry.id).inserted else {
                throw reader.bad("assetPackID", .duplicatePackID, "'\(entry.id)' is listed twice")
            }
            packs.append(entry)
        }
        return Catalog(sequence: sequence, published: published, expires: expires, packs: packs, channel: channel)
    }
}

extension JSONValue {
    /// Strict RFC 8259 JSON of at most `maximumLength` bytes: catalogs and piece maps.
    static func parseStrict(_ bytes: some Collection<UInt8>, maximumLength: Int) throws(JSONError) -> JSONValue {
        var options = ParseOptions.strict
        options.maximumLength = maximumLength
        return try parse(bytes, options: options)
    }

    /// ``parseStrict(_:maximumLength:)``, the elements of the top-level
    /// member `key`'s array handed to `handle` one by one, not kept.
    static func parseStrict(_ bytes: some Collection<UInt8>, maximumLength: Int, elementsOf key: String,
                            _ handle: (JSONValue) -> Bool) throws(JSONError) -> JSONValue {
        var options = ParseOptions.strict
        options.maximumLength = maximumLength
        func parse(_ buffer: UnsafeRawBufferPointer) -> Result<JSONValue, JSONError> {
            Result { () throws(JSONError) in try JSONValue.parse(buffer, options: options, elementsOf: key, handle) }
        }
        if let result = bytes.withContiguousStorageIfAvailable({ parse(UnsafeRawBufferPointer($0)) }) { return try result.get() }
        return try Array(bytes).withUnsafeBytes { parse($0) }.get()
    }
}

/// Reads a catalog's fields, naming each in errors with its place
/// (`packs[2].sha256`).
private struct FieldReader {
    let path: String
    var prefix = ""

    func bad(_ field: String, _ problem: DeliveryError.CatalogProblem, _ detail: String) -> DeliveryError {
        .invalidCatalog(path: path, field: prefix + field, problem: problem, detail: detail)
    }

    func require(_ object: JSONObject, _ key: String) throws(DeliveryError) -> JSONValue {
        guard let value = object[key] else { throw bad(key, .missingField, "is missing") }
        return value
    }

    func string(_ object: JSONObject, _ key: String) throws(DeliveryError) -> String {
        guard let s = try require(object, key).stringValue else { throw bad(key, .wrongType, "must be a string") }
        return s
    }

    /// A whole number written as plain digits (not `1.0` or `1e3`) from
    /// `from` to ``Catalog/maximumInteger``; `nil` when absent.
    func integer(_ object: JSONObject, _ key: String, _ problem: DeliveryError.CatalogProblem, from low: UInt64) throws(DeliveryError) -> UInt64? {
        guard let value = object[key] else { return nil }
        guard let n = value.numberValue else { throw bad(key, .wrongType, "must be a number") }
        guard n.text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let v = n.uint64Value,
              v >= low, v <= Catalog.maximumInteger else {
            throw bad(key, problem, "must be a whole number from \(low) to \(Catalog.maximumInteger), not \(n.text)")
        }
        return v
    }

    func time(_ object: JSONObject, _ key: String, required: Bool) throws(DeliveryError) -> CatalogTime? {
        guard let value = object[key] else {
            if required { throw bad(key, .missingField, "is missing") }
            return nil
        }
        guard let text = value.stringValue else { throw bad(key, .wrongType, "must be a string") }
        guard let time = CatalogTime(rfc3339: text) else {
            throw bad(key, .badTimestamp, "'\(MemberPath.escapingControlCharacters(text))' is not an RFC 3339 UTC time (2026-12-01T09:30:00Z)")
        }
        return time
    }

    func entry(_ item: JSONValue) throws(DeliveryError) -> Catalog.Entry {
        guard let object = item.objectValue else { throw bad("", .wrongType, "must be an object") }
        let id = try string(object, "assetPackID")
        do { try PackID.validate(id) } catch {
            let why = if case .invalidPackID(_, let reason) = error { reason.text } else { error.description }
            throw bad("assetPackID", .invalidPackID, "'\(MemberPath.escapingControlCharacters(id))': \(why)")
        }
        guard let version = try integer(object, "version", .badVersion, from: 1) else {
            throw bad("version", .missingField, "is missing")
        }
        guard let size = try integer(object, "size", .badSize, from: 0) else { throw bad("size", .missingField, "is missing") }
        let sha256 = try self.sha256(object, "sha256")
        let policy = try self.policy(try require(object, "downloadPolicy"))
        var platforms: [Platform] = []
        if let value = object["platforms"] {
            guard let list = value.arrayValue else { throw bad("platforms", .wrongType, "must be an array of strings") }
            for (i, name) in list.enumerated() {
                guard let p = name.stringValue.flatMap(Platform.init(rawValue:)) else {
                    throw bad("platforms[\(i)]", .badValue, "must be one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                platforms.append(p)
            }
        }
        let url = try self.url(object, "url")
        var pieces: Catalog.PiecesReference?
        if let value = object["pieces"] {
            guard let reference = value.objectValue else { throw bad("pieces", .wrongType, "must be an object") }
            pieces = try self.pieces(reference)
        }
        return Catalog.Entry(id: id, version: version, size: size, sha256: sha256, downloadPolicy: policy,
                             platforms: platforms, url: url, pieces: pieces)
    }

    /// 64 lowercase hex digits.
    func sha256(_ object: JSONObject, _ key: String) throws(DeliveryError) -> String {
        let sha256 = try string(object, key)
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            throw bad(key, .badSHA256, "must be 64 lowercase hex digits")
        }
        return sha256
    }

    /// A relative or http(s) URL.
    func url(_ object: JSONObject, _ key: String) throws(DeliveryError) -> String {
        let url = try string(object, key)
        if let problem = CatalogURL.problem(url) {
            throw bad(key, .badURL, "'\(MemberPath.escapingControlCharacters(url))' \(problem)")
        }
        return url
    }

    /// An entry's `pieces`: `{"sha256":…,"size":…,"url":…}`, each required.
    func pieces(_ object: JSONObject) throws(DeliveryError) -> Catalog.PiecesReference {
        var reader = self
        reader.prefix += "pieces."
        let url = try reader.url(object, "url")
        guard let size = try reader.integer(object, "size", .badSize, from: 0) else { throw reader.bad("size", .missingField, "is missing") }
        return Catalog.PiecesReference(url: url, size: size, sha256: try reader.sha256(object, "sha256"))
    }

    func policy(_ value: JSONValue) throws(DeliveryError) -> DownloadPolicy {
        let field = "downloadPolicy"
        guard let object = value.objectValue else { throw bad(field, .wrongType, "must be an object") }
        guard object.count == 1, let (kind, body) = object.first else {
            throw bad(field, .badValue, "must hold exactly one of essential, prefetch, onDemand")
        }
        switch kind {
        case "onDemand":
            return .onDemand
        case "essential", "prefetch":
            guard let list = body["installationEventTypes"]?.arrayValue, !list.isEmpty else {
                throw bad("\(field).\(kind).installationEventTypes", .badValue, "must be a non-empty array")
            }
            var events = Set<InstallationEventType>()
            for (i, name) in list.enumerated() {
                guard let e = name.stringValue.flatMap(InstallationEventType.init(rawValue:)) else {
                    throw bad("\(field).\(kind).installationEventTypes[\(i)]", .badValue, "must be firstInstallation or subsequentUpdate")
                }
                events.insert(e)
            }
            return kind == "essential" ? .essential(events) : .prefetch(events)
        default:
            throw bad("\(field).\(kind)", .badValue, "unknown policy (expected essential, prefetch or onDemand)")
        }
    }
}

public import AssetStore
internal import AssetJSON

/// A published directory's `catalog.json`: what packs there are, in which
/// version, and the size and SHA-256 a downloader must find.
///
/// ```json
/// {"channel":"default","expires":"2026-12-08T09:30:00Z","format":1,
///  "packs":[{"assetPackID":"Tutorial","downloadPolicy":{"prefetch":{"installationEventTypes":["firstInstallation"]}},
///            "platforms":["linux"],"sha256":"…64 hex…","size":48213,"url":"Tutorial-0123456789ab.zip","version":3}],
///  "published":"2026-12-01T09:30:00Z","sequence":17}
/// ```
///
/// ``encoded()`` writes the same bytes for the same catalog (keys sorted,
/// compact, one final newline); ``parse(_:path:)`` reads them back equal.
public struct Catalog: Sendable, Hashable {
    /// The format this version writes and reads.
    public static let format = 1
    /// The largest sequence number, size and version: 2^53 − 1, the largest
    /// integer every JSON reader holds exactly.
    public static let maximumInteger: UInt64 = (1 << 53) - 1

    /// One pack of the catalog.
    public struct Entry: Sendable, Hashable {
        public var id: String
        /// Grows with the pack's content; compared as a number.
        public var version: UInt64
        /// The pack file's size in bytes.
        public var size: UInt64
        /// The pack file's SHA-256, 64 lowercase hex digits.
        public var sha256: String
        public var downloadPolicy: DownloadPolicy
        public var platforms: [Platform]
        /// Relative to the catalog's URL (`Tutorial-0123456789ab.zip`), or
        /// absolute `http://` / `https://`.
        public var url: String
        /// The pack file's piece map (``PieceMap``), which lets a client that
        /// has members of it installed fetch only the rest; `nil` in catalogs
        /// of publishers that write none.
        public var pieces: PiecesReference?

        public init(id: String, version: UInt64, size: UInt64, sha256: String, downloadPolicy: DownloadPolicy,
                    platforms: [Platform], url: String, pieces: PiecesReference? = nil) {
            self.id = id
            self.version = version
            self.size = size
            self.sha256 = sha256
            self.downloadPolicy = downloadPolicy
            self.platforms = platforms
            self.url = url
            self.pieces = pieces
        }
    }

    /// A file published beside a pack: an entry's piece map
    /// (`"pieces":{"sha256":…,"size":…,"url":…}`), or the glue file a piece
    /// map names.
    public struct PiecesReference: Sendable, Hashable {
        /// Relative to the URL of the file that names it (the catalog's for
        /// `pieces`, the piece map's for its glue), or absolute `http://` /
        /// `https://`.
        public var url: String
        /// The file's size in bytes.
        public var size: UInt64
        /// The file's SHA-256, 64 lowercase hex digits.
        public var sha256: String

        public init(url: String, size: UInt64, sha256: String) {
            self.url = url
            self.size = size
            self.sha256 = sha256
        }
    }

    /// The channel the catalog is (`default`, `beta`): in the signed bytes,
    /// so that a client that asked for one channel refuses another's
    /// catalog signed by the same key; `nil` in catalogs of publishers that
    /// wrote none, which clients refuse (``CatalogVerifier``).
    public var channel: String?
    /// Grows with every publish; a client refuses a lower one.
    public var sequence: UInt64
    public var published: CatalogTime
    /// After this, clients refuse the catalog; `nil`: never.
    public var expires: CatalogTime?
    /// The packs, as the catalog lists them (``Publisher`` sorts by ID).
    public var packs: [Entry]

    public init(sequence: UInt64, published: CatalogTime, expires: CatalogTime?, packs: [Entry], channel: String? = nil) {
        self.sequence = sequence
        self.published = published
        self.expires = expires
        self.packs = packs
        self.channel = channel
    }

    /// The channel `publish` names when told none, and clients ask for when
    /// configured with none.
    public static let defaultChannel = "default"

    /// What is wrong with `name` as a channel name, or `nil`: the pack-ID
    /// rules (1–128 of `A-Z a-z 0-9 . _ -`, starting with a letter or digit).
    public static func channelProblem(_ name: String) -> String? {
        do { try PackID.validate(name) } catch {
            if case .invalidPackID(_, let reason) = error { return reason.text }
            return error.description
        }
        return nil
    }

    /// The entry for `id`.
    public func entry(withID id: String) -> Entry? { packs.first { $0.id == id } }

    /// The catalog's JSON: compact, keys sorted, a final newline.
    public func encoded() -> [UInt8] {
        var members: [(String, JSONValue)] = [
            ("format", .number(JSONNumber(Int64(Self.format)))),
            ("sequence", .number(JSONNumber(sequence))),
            ("published", .string(published.description)),
            ("packs", .array(packs.map(\.json))),
        ]
        if let expires { members.append(("expires", .string(expires.description))) }
        if let channel { members.append(("channel", .string(channel))) }
        return JSONValue.object(JSONObject(uniqueKeysWithValues: members)).encoded(sortedKeys: true) + [0x0a]
    }
}

extension Catalog.Entry {
    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("assetPackID", .string(id)), ("version", .number(JSONNumber(version))), ("size", .number(JSONNumber(size))),
            ("sha256", .string(sha256)), ("downloadPolicy", downloadPolicy.json),
            ("platforms", .array(platforms.map { .string($0.rawValue) })), ("url", .string(url)),
        ]
        if let pieces { members.append(("pieces", pieces.json)) }
        return .object(JSONObject(uniqueKeysWithValues: members))
    }
}

extension Catalog.PiecesReference {
    var json: JSONValue {
        ["url": .string(url), "size": .number(JSONNumber(size)), "sha256": .string(sha256)]
    }
}

extension DownloadPolicy {
    /// Apple's `downloadPolicy` object: `{"prefetch":{"installationEventTypes":[…]}}` or `{"onDemand":{}}`.
    var json: JSONValue {
        switch self {
        case .onDemand:
            return ["onDemand": [:]]
        case .essential, .prefetch:
            let body: JSONValue = ["installationEventTypes": .array(installationEventTypes.map { .string($0.rawValue) })]
            return .object(JSONObject(uniqueKeysWithValues: [(name, body)]))
        }
    }
}

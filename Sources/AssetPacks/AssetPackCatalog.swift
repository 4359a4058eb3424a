public import Foundation
import AssetDelivery

/// A published directory's `catalog.json`: the packs there are, each with
/// its version, size, SHA-256, download policy, platforms and URL, under a
/// sequence number that grows with every publish and an optional expiry.
/// The format is in docs/publishing.md.
///
/// Parsing a catalog does not make it trusted: a client passes the bytes
/// and their signature to ``AssetPackCatalogVerifier``, which checks the
/// signature, expiry and sequence first. A pack's bytes are then trusted
/// through its entry's ``Entry/size`` and ``Entry/sha256``.
public struct AssetPackCatalog: Sendable, Hashable {
    /// One pack of the catalog.
    public struct Entry: Sendable, Hashable {
        public let id: String
        /// Grows with the pack's contents; compared as a number.
        public let version: UInt64
        /// The pack file's size in bytes: a download of another size is refused.
        public let size: UInt64
        /// The pack file's SHA-256, 64 lowercase hex digits: a download that
        /// hashes otherwise is refused.
        public let sha256: String
        public let downloadPolicy: AssetPack.DownloadPolicy
        public let platforms: [AssetPack.Platform]
        /// Relative to the catalog (`Tutorial-0123456789ab.zip`) or an
        /// absolute `http(s)://` URL.
        public let url: String
        /// The pack file's piece map, which lets an update fetch only the
        /// members not installed (docs/publishing.md); `nil` when the
        /// publisher wrote none.
        public let pieces: PiecesReference?

        public init(id: String, version: UInt64, size: UInt64, sha256: String, downloadPolicy: AssetPack.DownloadPolicy,
                    platforms: [AssetPack.Platform], url: String, pieces: PiecesReference? = nil) {
            self.id = id
            self.version = version
            self.size = size
            self.sha256 = sha256
            self.downloadPolicy = downloadPolicy
            self.platforms = platforms
            self.url = url
            self.pieces = pieces
        }

        /// ``url`` resolved against the catalog's own URL.
        public func url(relativeTo catalogURL: URL) -> URL? {
            URL(string: url, relativeTo: catalogURL)?.absoluteURL
        }
    }

    /// Where an entry's piece map is, and what it must check out as.
    public struct PiecesReference: Sendable, Hashable {
        /// Relative to the catalog, or an absolute `http(s)://` URL.
        public let url: String
        /// Its size in bytes.
        public let size: UInt64
        /// Its SHA-256, 64 lowercase hex digits.
        public let sha256: String

        public init(url: String, size: UInt64, sha256: String) {
            self.url = url
            self.size = size
            self.sha256 = sha256
        }
    }

    /// The catalog format this version reads and writes.
    public static let format = Catalog.format
    /// The channel `publish` names unless told, and clients ask for unless told.
    public static let defaultChannel = Catalog.defaultChannel

    /// The channel the catalog is (`default`, `beta`), in its signed bytes;
    /// `nil` for a catalog of a publisher that wrote none, which clients
    /// refuse.
    public let channel: String?
    /// Grows with every publish; a client refuses a lower one.
    public let sequence: UInt64
    /// When it was published (whole seconds).
    public let published: Date
    /// After this, clients refuse it; `nil`: never.
    public let expires: Date?
    /// The packs, sorted by ID as `publish` writes them.
    public let packs: [Entry]

    /// A catalog; times are kept to the whole second.
    public init(sequence: UInt64, published: Date, expires: Date?, packs: [Entry], channel: String? = nil) {
        self.channel = channel
        self.sequence = sequence
        self.published = Date(CatalogTime(published))
        self.expires = expires.map { Date(CatalogTime($0)) }
        self.packs = packs
    }

    init(_ catalog: Catalog) {
        channel = catalog.channel
        sequence = catalog.sequence
        published = Date(catalog.published)
        expires = catalog.expires.map(Date.init)
        packs = catalog.packs.map {
            Entry(id: $0.id, version: $0.version, size: $0.size, sha256: $0.sha256,
                  downloadPolicy: AssetPack.DownloadPolicy($0.downloadPolicy), platforms: $0.platforms.map(AssetPack.Platform.init),
                  url: $0.url, pieces: $0.pieces.map { PiecesReference(url: $0.url, size: $0.size, sha256: $0.sha256) })
        }
    }

    var engine: Catalog {
        Catalog(sequence: sequence, published: CatalogTime(published), expires: expires.map(CatalogTime.init),
                packs: packs.map {
                    Catalog.Entry(id: $0.id, version: $0.version, size: $0.size, sha256: $0.sha256,
                                  downloadPolicy: $0.downloadPolicy.engine, platforms: $0.platforms.map(\.engine), url: $0.url,
                                  pieces: $0.pieces.map { Catalog.PiecesReference(url: $0.url, size: $0.size, sha256: $0.sha256) })
                }, channel: channel)
    }

    /// The entry for `id`, if the catalog lists it.
    public func entry(withID id: String) -> Entry? { packs.first { $0.id == id } }

    /// Parses catalog JSON. Unknown fields are ignored (a newer publisher
    /// may add some); `source` names the catalog in errors.
    ///
    /// - Throws: `.unsupportedCatalogFormat` for a `format` other than 1;
    ///   `.invalidCatalog` naming the ``AssetPackError/field`` and, in
    ///   ``AssetPackError/reason``, the problem.
    public static func parse(_ data: Data, source: String) throws(AssetPackError) -> AssetPackCatalog {
        AssetPackCatalog(try delivery { () throws(DeliveryError) in try Catalog.parse(data, path: source) })
    }

    /// The catalog's JSON: the same bytes for the same catalog (compact,
    /// keys sorted, one final newline), which ``parse(_:source:)`` reads
    /// back equal. The entries are written as they are ordered.
    public func encoded() -> Data {
        Data(engine.encoded())
    }
}

extension CatalogTime {
    /// The whole second at or before `date`.
    init(_ date: Date) {
        let s = date.timeIntervalSince1970.rounded(.down)
        self.init(seconds: s >= 9.2e18 ? .max : s <= -9.2e18 ? .min : Int64(s))
    }
}

extension Date {
    init(_ time: CatalogTime) {
        self.init(timeIntervalSince1970: TimeInterval(time.seconds))
    }
}

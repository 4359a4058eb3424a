import AssetArchive
import AssetStore
import AssetSystem

/// Fetches a catalog (`catalog.json` and `catalog.json.sig` beside it) over
/// HTTP, checks it with ``CatalogVerifier`` (for the channel asked for),
/// and caches what it accepted in
/// the container, `<container>/catalog/<first 16 hex digits of the URL's
/// SHA-256>/`:
///
/// ```
/// url               the catalog's URL, for people
/// catalog.json      the accepted bytes
/// catalog.json.sig  their signature, when there was one
/// etag              the server's ETag for catalog.json (an entity-tag only)
/// ```
///
/// A fetch sends the cached ETag as `If-None-Match`; a `304` answers from
/// the cache. When the server cannot be reached, the cache answers (still
/// checked: its signature, its expiry). A catalog the verifier refuses
/// leaves the cache as it was. `etag` is written last and removed first, so
/// an update cut short is never revalidated: the next fetch gets the whole
/// catalog again. The directory and its files are reached without following
/// a symlink, and the cache is kept within its limits (``CatalogCache``).
public final class CatalogFetcher {
    /// Where a fetched catalog came from.
    public enum Origin: Sendable, Equatable {
        /// The server sent it (`200`).
        case server
        /// The server said it had not changed (`304`).
        case notModified
        /// The server could not be reached; `detail` says why.
        case cacheWhileOffline(detail: String)
    }

    public let catalogURL: String
    public let verifier: CatalogVerifier
    public let options: Downloader.Options
    /// The cache directory of this catalog URL (its path, for messages).
    public let cacheDirectory: String
    /// The container's catalog cache.
    public let cache: CatalogCache
    private let client: HTTPClient

    /// The largest catalog or signature read, in bytes.
    public static let maximumSize = 16 << 20

    /// - Throws: `.caFileRefused` when the CA file cannot be used;
    ///   `.catalogUnavailable` (`.transport`) when libcurl cannot start.
    public init(catalogURL: String, publicKey: PublicKey?, channel: String = Catalog.defaultChannel, store: AssetStore,
                options: Downloader.Options = Downloader.Options()) throws(DeliveryError) {
        self.catalogURL = catalogURL
        self.verifier = CatalogVerifier(publicKey: publicKey, stateDirectory: store.container.trustPath, channel: channel)
        self.options = options
        self.cache = CatalogCache(store: store, limits: options.catalogCache)
        self.cacheDirectory = store.catalogDirectory.path(of: CatalogCache.name(for: catalogURL))
        do { client = try HTTPClient(configuration: options.http) } catch {
            throw error.caFileRefusal(options.http) ?? .catalogUnavailable(url: catalogURL, problem: .transport, detail: error.message)
        }
    }

    /// The URL of `entry`'s pack file: its `url` resolved against the
    /// catalog's directory, or as it is when absolute.
    public func url(of entry: Catalog.Entry) -> String { Self.resolve(entry.url, against: catalogURL) }

    /// `url` relative to the directory of `base` (query and fragment
    /// dropped), or `url` itself when it is absolute.
    public static func resolve(_ url: String, against base: String) -> String {
        if CatalogURL.isAbsolute(url) { return url }
        let plain = base.prefix { $0 != "?" && $0 != "#" }
        guard let slash = plain.lastIndex(of: "/") else { return url }
        return plain[...slash] + url
    }

    /// The URL of the catalog's signature: `.sig` appended to the path of
    /// the catalog's URL, its query kept after it
    /// (`…/catalog.json?t=1` → `…/catalog.json.sig?t=1`); a fragment,
    /// which is never sent, is dropped.
    public var signatureURL: String { Self.signatureURL(of: catalogURL) }

    /// ``signatureURL`` of the catalog at `url`.
    public static func signatureURL(of url: String) -> String {
        let withoutFragment = url.prefix { $0 != "#" }
        let path = withoutFragment.prefix { $0 != "?" }
        return path + ".sig" + withoutFragment.dropFirst(path.count)
    }

    /// Fetches the catalog, revalidating the cached copy.
    ///
    /// - Throws: the verifier's errors for a catalog it refuses (the cache
    ///   unchanged); `.catalogUnavailable` when the server cannot be reached
    ///   and nothing is cached (`.retriesExhausted`), or answers with an
    ///   error status (`.notFound`, `.refused`); `.system`.
    public func fetch(now: CatalogTime) throws(DeliveryError) -> (catalog: Catalog, origin: Origin) {
        client.deadline = options.maximumTime.map { HTTPClient.Deadline(seconds: $0) }
        let cached = cachedFiles()
        let fetched: (status: Int, etag: String?, bytes: [UInt8])
        do {
            fetched = try get(catalogURL, ifNoneMatch: cached?.etag)
        } catch let failure where failure.isTransient {
            guard let cached else {
                throw .catalogUnavailable(url: catalogURL, problem: .retriesExhausted(attempts: options.maximumAttempts), detail: failure.message)
            }
            let catalog = try verifier.accept(catalog: cached.catalog, signature: cached.signature, source: catalogURL, now: now)
            touch()
            return (catalog, .cacheWhileOffline(detail: failure.status.map { "HTTP \($0)" } ?? failure.message))
        } catch {
            throw .catalogUnavailable(url: catalogURL, problem: error.problem, detail: error.message)
        }
        if fetched.status == 304, let cached {
            let catalog = try verifier.accept(catalog: cached.catalog, signature: cached.signature, source: catalogURL, now: now)
            touch()
            return (catalog, .notModified)
        }
        var signature: [UInt8]?
        do {
            signature = try get(signatureURL, ifNoneMatch: nil).bytes
        } catch let failure where failure.kind == .httpStatus && failure.status == 404 {
            signature = nil
        } catch {
            throw .catalogUnavailable(url: signatureURL, problem: error.problem, detail: error.message)
        }
        let catalog = try verifier.accept(catalog: fetched.bytes, signature: signature, source: catalogURL, now: now)
        try store(fetched.bytes, signature: signature, etag: fetched.etag)
        return (catalog, .server)
    }

    /// The cached catalog, checked as a fetched one is; `nil` when there is none.
    public func cachedCatalog(now: CatalogTime) throws(DeliveryError) -> Catalog? {
        guard let cached = cachedFiles() else { return nil }
        return try verifier.accept(catalog: cached.catalog, signature: cached.signature, source: catalogURL, now: now)
    }

    /// GETs `url` into memory, retrying transient failures as downloads do.
    private func get(_ url: String, ifNoneMatch: String?) throws(HTTPClient.Failure) -> (status: Int, etag: String?, bytes: [UInt8]) {
        var attempt = 0
        while true {
            attempt += 1
            var bytes: [UInt8] = []
            do {
                let head = try client.get(url, ifNoneMatch: ifNoneMatch) { _, piece in
                    guard bytes.count + piece.count <= Self.maximumSize else { return false }
                    bytes.append(contentsOf: piece)
                    return true
                }
                return (head.status, head.etag, bytes)
            } catch let failure where failure.isTransient && attempt < options.maximumAttempts {
                Monotonic.sleep(options.backoff(after: attempt))
            } catch let failure where failure.kind == .aborted {
                throw HTTPClient.Failure(kind: .other, status: nil, message: "more than \(Self.maximumSize) bytes")
            }
        }
    }

    private struct CachedFiles {
        var catalog: [UInt8]
        var signature: [UInt8]?
        var etag: String?
    }

    private func cachedFiles() -> CachedFiles? {
        guard let catalog = try? read("catalog.json") else { return nil }
        // Only an entity-tag goes back to the server (one an older version stored may be anything).
        let etag = (try? read("etag")).map { String(decoding: $0, as: UTF8.self) }.flatMap { HTTPValidator.isEntityTag($0) ? $0 : nil }
        return CachedFiles(catalog: catalog, signature: try? read("catalog.json.sig"), etag: etag)
    }

    /// The cached file `name`; `nil` when the cache has none (or it cannot
    /// be read: a symlink, a FIFO, too long — the cache is then refetched).
    private func read(_ name: String) throws(StoreError) -> [UInt8] {
        guard let bytes = try CatalogCache.read(name, in: try cache.entry(for: catalogURL, creating: false)) else {
            throw .system(Errno.noSuchFile.with(operation: "open", path: cacheDirectory + "/" + name))
        }
        return bytes
    }

    /// Marks this URL's cache entry used (``CatalogCache/touch(_:)``) and
    /// prunes the others.
    private func touch() {
        if let entry = try? cache.entry(for: catalogURL, creating: false) { cache.touch(entry) }
        cache.prune(keeping: CatalogCache.name(for: catalogURL))
    }

    private func store(_ catalog: [UInt8], signature: [UInt8]?, etag: String?) throws(DeliveryError) {
        let entry = try storing(cache.entry(for: catalogURL, creating: true))
        try storing(entry.withDescriptor { (directory) throws(Errno) in
            let anchor = DirectoryAnchor.descriptor(directory.rawValue)
            try? FileSystem.unlink("etag", relativeTo: anchor)
            try AtomicFile.replace("url", in: directory, path: cacheDirectory, contents: Array((catalogURL + "\n").utf8))
            if let signature {
                try AtomicFile.replace("catalog.json.sig", in: directory, path: cacheDirectory, contents: signature)
            } else {
                try? FileSystem.unlink("catalog.json.sig", relativeTo: anchor)
            }
            try AtomicFile.replace("catalog.json", in: directory, path: cacheDirectory, contents: catalog)
            if let etag { try AtomicFile.replace("etag", in: directory, path: cacheDirectory, contents: Array(etag.utf8)) }
        })
        cache.prune(keeping: CatalogCache.name(for: catalogURL))
    }
}

extension HTTPClient.Failure {
    /// What a failure that retrying does not mend means for a download.
    var problem: DeliveryError.DownloadProblem {
        if let deadline, kind == .tooSlow || kind == .deadlineExceeded { return .timedOut(deadline) }
        switch (kind, status) {
        case (.httpStatus, let status?) where status == 404 || status == 410: return .notFound(status: status)
        case (.httpStatus, let status?) where !isTransient: return .refused(status: status)
        default: return .transport
        }
    }

    /// The refusal of the CA file of `configuration`, when that is what
    /// this failure (of making a client) is.
    func caFileRefusal(_ configuration: HTTPClient.Configuration) -> DeliveryError? {
        caFileProblem.map { .caFileRefused(path: configuration.caFile ?? "", problem: $0) }
    }
}

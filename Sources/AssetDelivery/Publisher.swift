import Foundation
import AssetArchive
import AssetStore
import AssetSystem

/// `assetpack publish`: puts checked packs under content-addressed names in
/// a directory and rewrites its catalog (and signature) atomically.
///
/// The order of the work, so that a reader of the directory (a static HTTP
/// server, a CDN, an object store synced from it) always sees a consistent
/// set: packs first (each via a temporary file, flushed, renamed), each
/// followed by its glue and piece map (``PieceMap``: `<pack file>.glue`,
/// `<pack file>.pieces`, written the same way); then the signature file,
/// which holds the new catalog's signature and the previous catalog's; then
/// `catalog.json`; pruning last. All under an OFD lock on `.publish.lock`,
/// so two publishers take turns.
public enum Publisher {
    public static let catalogName = "catalog.json"
    public static let signatureName = "catalog.json.sig"
    public static let lockName = ".publish.lock"

    /// How to publish.
    public struct Options: Sendable {
        /// Signs the catalog; required when the directory's catalog is signed.
        public var signingKey: SigningKey?
        /// Gives the packs of this publish absolute URLs under this one.
        public var baseURL: String?
        /// Removes pack files (`<id>-<12 hex>.zip`) the new catalog does not
        /// name, with their piece maps and glue.
        public var prune: Bool
        /// When clients stop accepting the catalog; `nil`: never.
        public var expires: CatalogTime?
        /// The catalog's `published` time.
        public var now: CatalogTime
        /// How long to wait for another publisher's lock.
        public var lockTimeout: Double
        /// The catalog's channel. `nil`: the directory's catalog's, or
        /// ``Catalog/defaultChannel`` for a new catalog (or one written
        /// before channels). A channel other than the catalog's is refused.
        public var channel: String?

        public init(signingKey: SigningKey? = nil, baseURL: String? = nil, prune: Bool = false, expires: CatalogTime? = nil,
                    now: CatalogTime, lockTimeout: Double = 60, channel: String? = nil) {
            self.signingKey = signingKey
            self.baseURL = baseURL
            self.prune = prune
            self.expires = expires
            self.now = now
            self.lockTimeout = lockTimeout
            self.channel = channel
        }
    }

    /// What a publish did to one pack or file.
    public struct Change: Sendable, Hashable {
        public enum Kind: String, Sendable, Hashable {
            /// A new pack or a new version of one is in the catalog.
            case published
            /// The catalog already had this pack in this version.
            case unchanged
            /// A pack file the catalog no longer names was removed.
            case pruned
        }

        public let kind: Kind
        /// The pack's ID (for pruned files, the ID in the file's name).
        public let pack: String
        /// The version in the catalog (`nil` for pruned files).
        public let version: UInt64?
        /// The file's name in the directory.
        public let file: String
    }

    /// The new catalog and what changed.
    public struct Report: Sendable {
        public let catalog: Catalog
        public let changes: [Change]
    }

    /// `<id>-<first 12 hex digits of the SHA-256>.zip`.
    public static func contentName(id: String, sha256: String) -> String {
        "\(id)-\(sha256.prefix(12)).zip"
    }

    /// The pack ID of a content-addressed name, or `nil` when `name` is not one.
    public static func packID(ofContentName name: String) -> String? {
        guard name.hasSuffix(".zip") else { return nil }
        let stem = name.dropLast(4)
        let hex = stem.suffix(12)
        guard stem.count > 13, hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
              stem.dropLast(12).last == "-" else { return nil }
        let id = String(stem.dropLast(13))
        return (try? PackID.validate(id)) == nil ? nil : id
    }

    /// Publishes the pack files at `paths` to `directory` (made if missing).
    ///
    /// Every pack is checked as `inspect` checks it. Packs of the catalog
    /// that are not among `paths` stay as they are. A pack's version is the
    /// one its manifest recorded, else the catalog's when its bytes are the
    /// same, else the catalog's plus one (1 for a new pack).
    ///
    /// - Throws: `DeliveryError.store` for a pack that does not check clean
    ///   (naming the file) or a lock timeout; `.publishRefused` for two packs
    ///   with one ID, a version going backwards or reused with other bytes, a
    ///   catalog signed by another key, a signed catalog and no key, or a
    ///   channel that is not the catalog's (or not a channel name);
    ///   `.invalidCatalog` / `.unsupportedCatalogFormat` /
    ///   `.catalogSignatureInvalid` for a catalog or signature in
    ///   `directory` that cannot be read; `.system`.
    public static func publish(_ paths: [String], to directory: String, options: Options) throws(DeliveryError) -> Report {
        let baseURL = try checkedBaseURL(options.baseURL, directory: directory)
        if let channel = options.channel, let problem = Catalog.channelProblem(channel) {
            throw .publishRefused(path: directory, pack: nil, problem: .badArgument,
                                  detail: "channel '\(MemberPath.escapingControlCharacters(channel))': \(problem)")
        }
        let dir: FileDescriptor
        do {
            try FileSystem.createDirectories(directory)
            dir = try FileDescriptor.open(directory, [.readOnly, .directory])
        } catch {
            throw .system(error.with(operation: error.operation, path: directory))
        }
        let anchor = DirectoryAnchor.descriptor(dir.rawValue)
        let lockPath = directory + "/" + lockName
        let lock: FileLock
        do {
            lock = try FileLock(name: lockName, relativeTo: anchor, path: lockPath, wait: .seconds(options.lockTimeout))
        } catch {
            switch error {
            case .timedOut(let t): throw .store(.lockTimeout(t.named("the publishing lock")))
            case .system(let e): throw .system(e)
            }
        }

        let previous = try PublishedFiles.read(in: anchor, directory: directory)
        let keptLine = try previous.signatureLineToKeep(for: options.signingKey, directory: directory)
        let channel = try self.channel(options.channel, after: previous.catalog, directory: directory)
        let packs = try checkedPacks(paths, directory: directory)

        var entries = Dictionary(uniqueKeysWithValues: (previous.catalog?.packs ?? []).map { ($0.id, $0) })
        var changes: [Change] = []
        for pack in packs {
            let (version, changed) = try self.version(of: pack, after: entries[pack.id], directory: directory)
            let name = contentName(id: pack.id, sha256: pack.sha256)
            try PublishedFiles.place(pack.path, as: name, sha256: pack.sha256, size: pack.size, in: dir, directory: directory)
            var pieces = try PublishedFiles.placePieces(of: name, pack: pack.id, version: version, sha256: pack.sha256,
                                                        in: dir, directory: directory)
            if let baseURL { pieces.url = baseURL + "/" + pieces.url }
            entries[pack.id] = Catalog.Entry(
                id: pack.id, version: version, size: pack.size, sha256: pack.sha256,
                downloadPolicy: pack.description?.downloadPolicy ?? .onDemand, platforms: pack.description?.platforms ?? [],
                url: baseURL.map { $0 + "/" + name } ?? name, pieces: pieces)
            changes.append(Change(kind: changed ? .published : .unchanged, pack: pack.id, version: version, file: name))
        }

        let sequence = (previous.catalog?.sequence ?? 0) + 1
        guard sequence <= Catalog.maximumInteger else {
            throw .publishRefused(path: directory, pack: nil, problem: .badArgument,
                                  detail: "the catalog's sequence number is the largest a catalog can hold")
        }
        let catalog = Catalog(sequence: sequence, published: options.now,
                              expires: options.expires, packs: entries.values.sorted { $0.id < $1.id }, channel: channel)
        let bytes = catalog.encoded()
        do {
            if let key = options.signingKey {
                let lines = CatalogSignature(signing: bytes, with: key).lines + (keptLine.map { [$0] } ?? [])
                try AtomicFile.replace(signatureName, in: dir, path: directory, contents: CatalogSignature(lines: lines).encoded)
            }
            try AtomicFile.replace(catalogName, in: dir, path: directory, contents: bytes)
        } catch {
            throw .system(error)
        }
        if options.prune {
            changes += try PublishedFiles.prune(keeping: catalog, in: dir, directory: directory)
        }
        _ = consume lock
        return Report(catalog: catalog, changes: changes)
    }

    /// The new catalog's channel: the one asked for, which must be the
    /// directory's catalog's when that names one — a catalog's channel is
    /// what its clients ask for, and changing it would refuse them all —
    /// else the catalog's, else ``Catalog/defaultChannel``.
    private static func channel(_ asked: String?, after previous: Catalog?, directory: String) throws(DeliveryError) -> String {
        guard let current = previous?.channel else { return asked ?? Catalog.defaultChannel }
        if let asked, asked != current {
            throw .publishRefused(path: directory, pack: nil, problem: .channelChanged,
                                  detail: "the catalog is channel '\(current)', not '\(asked)': publish another channel to a directory of its own")
        }
        return current
    }

    /// The base URL without a trailing `/`, refused unless it is http(s).
    private static func checkedBaseURL(_ url: String?, directory: String) throws(DeliveryError) -> String? {
        guard var url else { return nil }
        while url.hasSuffix("/") { url.removeLast() }
        guard CatalogURL.isAbsolute(url), CatalogURL.problem(url + "/x.zip") == nil else {
            throw .publishRefused(path: directory, pack: nil, problem: .badArgument,
                                  detail: "base URL '\(url)' is not an http:// or https:// URL")
        }
        return url
    }

    /// A pack file checked for publishing.
    struct CheckedPack {
        let path: String
        let id: String
        let sha256: String
        let size: UInt64
        let description: PackDescription?
    }

    /// Every pack checked clean, no two with one ID.
    private static func checkedPacks(_ paths: [String], directory: String) throws(DeliveryError) -> [CheckedPack] {
        var packs: [CheckedPack] = []
        for path in paths {
            let file: PackFile
            do { file = try PackFile.validate(path: path, limits: .defaults) } catch { throw .store(error) }
            let id = file.description?.id ?? file.defaultID
            do { try PackID.validate(id) } catch { throw .store(error) }
            if let other = packs.first(where: { $0.id == id }) {
                throw .publishRefused(path: directory, pack: id, problem: .duplicatePackID,
                                      detail: "\(other.path) and \(path) are both pack '\(id)'; publish one version of a pack at a time")
            }
            packs.append(CheckedPack(path: path, id: id, sha256: SHA256.hex(file.sha256), size: file.size, description: file.description))
        }
        return packs
    }

    /// The version `pack` gets, and whether it is new to the catalog.
    private static func version(of pack: CheckedPack, after old: Catalog.Entry?,
                                directory: String) throws(DeliveryError) -> (UInt64, Bool) {
        let same = old?.sha256 == pack.sha256
        guard let recorded = pack.description?.version else {
            guard let old else { return (1, true) }
            if same { return (old.version, false) }
            guard old.version < Catalog.maximumInteger else {
                throw .publishRefused(path: directory, pack: pack.id, problem: .versionReused,
                                      detail: "the catalog's version \(old.version) is the largest a catalog can hold")
            }
            return (old.version + 1, true)
        }
        guard let old else { return (recorded, true) }
        if recorded < old.version {
            throw .publishRefused(path: directory, pack: pack.id, problem: .versionBackwards,
                                  detail: "\(pack.path) is version \(recorded), older than the catalog's \(old.version)")
        }
        if recorded == old.version && !same {
            throw .publishRefused(path: directory, pack: pack.id, problem: .versionReused,
                                  detail: "\(pack.path) is version \(recorded), which the catalog has with other contents; raise the manifest's version")
        }
        return (recorded, !(recorded == old.version))
    }
}

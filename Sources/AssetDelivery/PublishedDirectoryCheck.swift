import AssetArchive
import AssetStore
import AssetSystem

/// `assetpack verify-published`: every file of a published directory
/// checked against its catalog.
public enum PublishedDirectoryCheck {
    /// One problem found.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        public enum Severity: String, Sendable, Hashable {
            /// The directory would fail a client.
            case error
            /// Worth a look (a stray file, a pack not checked), not a failure.
            case warning
        }

        public let severity: Severity
        /// The file concerned, relative to the directory.
        public let file: String
        /// The pack concerned, when one is.
        public let pack: String?
        public let message: String

        public var description: String { "\(severity.rawValue): \(file): " + (pack.map { "pack '\($0)': " } ?? "") + message }
    }

    /// The catalog checked, if it could be read, and every finding.
    public struct Report: Sendable {
        public let catalog: Catalog?
        public let findings: [Finding]
        /// Whether no finding is an error.
        public var isClean: Bool { !findings.contains { $0.severity == .error } }
    }

    /// Checks `directory`: the catalog parses; the signature verifies by
    /// `key` (required when a key is given); each entry with a relative URL
    /// has its file, of the catalog's size and SHA-256, checking clean as
    /// `inspect` does, with the entry's pack ID inside; its piece map
    /// (``PieceMap``) and glue are there, of the sizes and SHA-256s their
    /// references give, and are exactly what `publish` makes of the pack file
    /// (so every range and member SHA-256 is right); files the catalog does
    /// not name are warnings, as are entries at absolute URLs (not fetched)
    /// and entries without a piece map (clients download them whole).
    ///
    /// - Throws: `DeliveryError.system` only when the directory cannot be opened.
    public static func check(_ directory: String, key: PublicKey?) throws(DeliveryError) -> Report {
        let dir: FileDescriptor
        do { dir = try FileDescriptor.open(directory, [.readOnly, .directory]) } catch {
            throw .system(error.with(operation: error.operation, path: directory))
        }
        let anchor = DirectoryAnchor.descriptor(dir.rawValue)
        var findings: [Finding] = []
        func error(_ file: String, _ pack: String?, _ message: String) { findings.append(Finding(severity: .error, file: file, pack: pack, message: message)) }

        let catalogPath = directory + "/" + Publisher.catalogName
        let bytes: [UInt8]
        let catalog: Catalog
        do {
            guard let read = try PublishedFiles.readIfPresent(Publisher.catalogName, in: anchor, path: catalogPath, limit: Catalog.maximumLength) else {
                error(Publisher.catalogName, nil, "missing")
                return Report(catalog: nil, findings: findings)
            }
            bytes = read
            catalog = try Catalog.parse(bytes, path: catalogPath)
        } catch let e {
            error(Publisher.catalogName, nil, e.description)
            return Report(catalog: nil, findings: findings)
        }
        if let key {
            do throws(DeliveryError) {
                guard let signature = try PublishedFiles.readIfPresent(Publisher.signatureName, in: anchor, path: catalogPath + ".sig",
                                                                       limit: CatalogSignature.maximumLength) else {
                    throw DeliveryError.catalogUnsigned(path: catalogPath)
                }
                try CatalogSignature.parse(signature, path: catalogPath + ".sig").check(bytes, by: key, path: catalogPath)
            } catch let e {
                error(Publisher.signatureName, nil, e.description)
            }
        }
        var named: Set<String> = [Publisher.catalogName, Publisher.signatureName, Publisher.lockName]
        for entry in catalog.packs {
            if CatalogURL.isAbsolute(entry.url) {
                findings.append(Finding(severity: .warning, file: entry.url, pack: entry.id, message: "at an absolute URL: not checked"))
                continue
            }
            var files = [entry.url]
            if let pieces = entry.pieces, !CatalogURL.isAbsolute(pieces.url) { files += [pieces.url, PieceMap.names(ofPackFile: entry.url).glue] }
            for file in files { named.insert(String(file.split(separator: "/").first ?? "")) }
            if let problem = problem(of: entry, in: anchor, directory: directory) {
                error(entry.url, entry.id, problem)
                continue
            }
            guard let pieces = entry.pieces else {
                findings.append(Finding(severity: .warning, file: entry.url, pack: entry.id, message: "no piece map: clients download it whole"))
                continue
            }
            if CatalogURL.isAbsolute(pieces.url) {
                findings.append(Finding(severity: .warning, file: pieces.url, pack: entry.id, message: "at an absolute URL: not checked"))
                continue
            }
            findings += PieceMapCheck(entry: entry, pieces: pieces, directory: directory).findings(in: anchor)
        }
        for name in FileSystem.names(in: anchor).sorted() where !named.contains(name) {
            findings.append(Finding(severity: .warning, file: MemberPath.escapingControlCharacters(name), pack: nil,
                                    message: "stray file: the catalog does not name it"))
        }
        return Report(catalog: catalog, findings: findings)
    }

    /// What is wrong with an entry's file, or `nil`.
    private static func problem(of entry: Catalog.Entry, in anchor: DirectoryAnchor, directory: String) -> String? {
        let path = directory + "/" + entry.url
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(entry.url, [.readOnly, .noFollow], relativeTo: anchor) } catch {
            return error == .noSuchFile ? "missing" : error.description
        }
        let size: Int64
        do { size = try fd.status().size } catch { return error.description }
        guard UInt64(size) == entry.size else { return "is \(size) bytes, the catalog says \(entry.size)" }
        let file: PackFile
        do { file = try PackFile.validate(descriptor: fd, path: path, limits: .defaults) } catch { return error.description }
        let sha256 = SHA256.hex(file.sha256)
        guard sha256 == entry.sha256 else { return "SHA-256 is \(sha256), the catalog says \(entry.sha256)" }
        let id = file.description?.id ?? file.defaultID
        guard id == entry.id else { return "the file is pack '\(id)'" }
        return nil
    }
}

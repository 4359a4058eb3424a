import AssetArchive
import AssetSystem

/// The files of a published directory, as `publish` reads and writes them.
struct PublishedFiles {
    /// The directory's catalog and signature, when it has them.
    var catalog: Catalog?
    var catalogBytes: [UInt8] = []
    var signature: CatalogSignature?

    /// Reads `catalog.json` and `catalog.json.sig` in the open directory.
    ///
    /// - Throws: what parsing them throws, `.system`.
    static func read(in anchor: DirectoryAnchor, directory: String) throws(DeliveryError) -> PublishedFiles {
        var files = PublishedFiles()
        let catalogPath = directory + "/" + Publisher.catalogName
        if let bytes = try readIfPresent(Publisher.catalogName, in: anchor, path: catalogPath, limit: Catalog.maximumLength) {
            files.catalog = try Catalog.parse(bytes, path: catalogPath)
            files.catalogBytes = bytes
        }
        let signaturePath = directory + "/" + Publisher.signatureName
        if let bytes = try readIfPresent(Publisher.signatureName, in: anchor, path: signaturePath, limit: CatalogSignature.maximumLength) {
            files.signature = try CatalogSignature.parse(bytes, path: signaturePath)
        }
        return files
    }

    /// The file's bytes, `nil` when there is none.
    static func readIfPresent(_ name: String, in anchor: DirectoryAnchor, path: String, limit: Int) throws(DeliveryError) -> [UInt8]? {
        do {
            guard try FileDescriptor.status(of: name, relativeTo: anchor, followingLinks: false) != nil else { return nil }
        } catch {
            throw .system(error)
        }
        return try KeyFile.read(name, limit: limit, relativeTo: anchor)
    }

    /// The previous catalog's signature line by `key`, to keep beside the
    /// new one (when it verifies the previous catalog).
    ///
    /// - Throws: `.publishRefused` when the catalog is signed and `key` is
    ///   `nil` (`.signatureRequired`) or signed only by other keys
    ///   (`.signedByOtherKey`).
    func signatureLineToKeep(for key: SigningKey?, directory: String) throws(DeliveryError) -> CatalogSignature.Line? {
        guard let signature, catalog != nil else { return nil }
        guard let key else {
            throw .publishRefused(path: directory, pack: nil, problem: .signatureRequired,
                                  detail: "the catalog is signed (\(signature.keyIDs.joined(separator: ", "))); give its key with --sign")
        }
        let mine = signature.lines.filter { $0.keyID == key.publicKey.keyID }
        guard !mine.isEmpty else {
            throw .publishRefused(path: directory, pack: nil, problem: .signedByOtherKey,
                                  detail: "the catalog is signed by key \(signature.keyIDs.joined(separator: ", ")), not by \(key.publicKey.keyID)")
        }
        return catalogBytes.withUnsafeBytes { bytes in mine.first { key.publicKey.verifies($0.signature, of: bytes) } }
    }

    /// Puts the pack at `source` into the directory as `name`, unless a
    /// file of that name already has its bytes: copied to a temporary file,
    /// hashed again (it must be the SHA-256 checked), flushed, renamed.
    static func place(_ source: String, as name: String, sha256: String, size: UInt64,
                      in dir: borrowing FileDescriptor, directory: String) throws(DeliveryError) {
        let anchor = DirectoryAnchor.descriptor(dir.rawValue)
        let target = directory + "/" + name
        do {
            if let status = try FileDescriptor.status(of: name, relativeTo: anchor, followingLinks: false),
               status.isRegularFile, UInt64(status.size) == size,
               try hash(try FileDescriptor.open(name, [.readOnly, .noFollow], relativeTo: anchor), size: size) == sha256 {
                return
            }
            let temporary = AtomicFile.temporaryName(for: name)
            let input = try FileDescriptor.open(source)
            let output = try FileDescriptor.open(temporary, [.readWrite, .create, .exclusive, .noFollow], permissions: 0o644, relativeTo: anchor)
            do {
                try output.copy(count: Int64(size), from: input, at: 0, to: 0)
                guard try hash(output, size: size) == sha256 else {
                    try? FileSystem.unlink(temporary, relativeTo: anchor)
                    throw DeliveryError.publishRefused(path: directory, pack: nil, problem: .packChanged,
                                                       detail: "\(source) changed while it was published; publish it again")
                }
                try output.sync()
            } catch let error as Errno {
                try? FileSystem.unlink(temporary, relativeTo: anchor)
                throw error.with(operation: error.operation, path: target)
            }
            try AtomicFile.commit(temporary, as: name, in: dir, path: directory)
        } catch let error as DeliveryError {
            throw error
        } catch let error as Errno {
            throw .system(error)
        } catch {
            throw .system(Errno.ioError.with(operation: "\(error)", path: target))
        }
    }

    /// Writes the glue and the piece map of the pack file `name` (placed in
    /// the directory, with SHA-256 `sha256`) beside it, glue first, each
    /// unless a file of its name already has its bytes; returns the
    /// reference to the piece map for the catalog, its URL relative.
    ///
    /// - Throws: `.publishRefused` (`.packChanged`) when the file is not the
    ///   one checked; what making the map throws; `.system`.
    static func placePieces(of name: String, pack: String, version: UInt64, sha256: String,
                            in dir: borrowing FileDescriptor, directory: String) throws(DeliveryError) -> Catalog.PiecesReference {
        let (map, glue) = try PieceMap.makeWithGlue(archivePath: directory + "/" + name, pack: pack, version: version)
        guard map.sha256 == sha256 else {
            throw .publishRefused(path: directory, pack: pack, problem: .packChanged,
                                  detail: "\(name) changed while it was published; publish it again")
        }
        let names = PieceMap.names(ofPackFile: name)
        let bytes = map.encoded()
        do {
            try replaceUnlessEqual(names.glue, contents: glue, in: dir, directory: directory)
            try replaceUnlessEqual(names.pieces, contents: bytes, in: dir, directory: directory)
        } catch {
            throw .system(error)
        }
        return Catalog.PiecesReference(url: names.pieces, size: UInt64(bytes.count),
                                       sha256: bytes.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) })
    }

    /// ``AtomicFile/replace(_:in:path:contents:permissions:)``, unless the
    /// regular file `name` already holds exactly `contents`.
    private static func replaceUnlessEqual(_ name: String, contents: [UInt8], in dir: borrowing FileDescriptor, directory: String) throws(Errno) {
        let anchor = DirectoryAnchor.descriptor(dir.rawValue)
        if let status = try FileDescriptor.status(of: name, relativeTo: anchor, followingLinks: false),
           status.isRegularFile, status.size == Int64(contents.count),
           try FileDescriptor.open(name, [.readOnly, .noFollow], relativeTo: anchor).read(count: contents.count, at: 0) == contents {
            return
        }
        try AtomicFile.replace(name, in: dir, path: directory, contents: contents)
    }

    /// The SHA-256 (hex) of the first `size` bytes of `fd`.
    static func hash(_ fd: borrowing FileDescriptor, size: UInt64) throws(Errno) -> String {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < size {
            let want = Int(min(UInt64(buffer.count), size - offset))
            let got = try buffer.withUnsafeMutableBytes { b in
                Result { () throws(Errno) in try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]), at: Int64(offset)) }
            }.get()
            if got == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            offset += UInt64(got)
        }
        return SHA256.hex(hasher.finalize())
    }

    /// Removes the directory's pack files (`<id>-<12 hex>.zip`) that
    /// `catalog` does not name, and the piece maps and glue
    /// (`<id>-<12 hex>.zip.pieces`, `.zip.glue`) of pack files it does not name.
    static func prune(keeping catalog: Catalog, in dir: borrowing FileDescriptor, directory: String) throws(DeliveryError) -> [Publisher.Change] {
        let anchor = DirectoryAnchor.descriptor(dir.rawValue)
        let named = Set(catalog.packs.map { String($0.url.split(separator: "/").last ?? "") })
        var changes: [Publisher.Change] = []
        do {
            for name in try FileSystem.contents(of: anchor, path: directory).sorted() where !named.contains(name) {
                guard let id = Publisher.packID(ofContentName: packFileName(of: name)), !named.contains(packFileName(of: name)),
                      try FileDescriptor.status(of: name, relativeTo: anchor, followingLinks: false)?.isRegularFile == true else { continue }
                try FileSystem.unlink(name, relativeTo: anchor)
                changes.append(Publisher.Change(kind: .pruned, pack: id, version: nil, file: name))
            }
            if !changes.isEmpty { try dir.sync() }
        } catch {
            throw .system(error.with(operation: error.operation, path: directory))
        }
        return changes
    }

    /// The pack file a piece map or glue file belongs to (`name` without
    /// `.pieces` / `.glue`); any other name as it is.
    static func packFileName(of name: String) -> String {
        for suffix in [".pieces", ".glue"] where name.hasSuffix(suffix) { return String(name.dropLast(suffix.count)) }
        return name
    }
}

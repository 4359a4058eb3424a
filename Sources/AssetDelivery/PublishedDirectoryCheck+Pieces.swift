import AssetArchive
import AssetSystem

/// `verify-published`'s check of one entry's piece map and glue, against
/// the catalog's reference and against the pack file they describe (whose
/// own check passed).
struct PieceMapCheck {
    let entry: Catalog.Entry
    let pieces: Catalog.PiecesReference
    let directory: String

    typealias Finding = PublishedDirectoryCheck.Finding

    private func error(_ file: String, _ message: String) -> Finding {
        Finding(severity: .error, file: MemberPath.escapingControlCharacters(file), pack: entry.id, message: message)
    }

    /// Every problem found: a missing or unreadable file, a size or SHA-256
    /// not its reference's, a map that does not parse or validate, a map or
    /// glue that is not what the pack file makes.
    func findings(in anchor: DirectoryAnchor) -> [Finding] {
        let map: PieceMap
        do {
            guard let bytes = try read(pieces.url, limit: PieceMap.maximumLength, in: anchor) else { return [error(pieces.url, "missing")] }
            try PieceMap.checkBytes(bytes, match: pieces, url: pieces.url, pack: entry.id)
            map = try PieceMap.parse(bytes, path: pieces.url, pack: entry.id)
            try map.validate(against: entry)
        } catch let e {
            return [error(pieces.url, e.description)]
        }
        let made: (map: PieceMap, glue: [UInt8])
        do {
            made = try PieceMap.makeWithGlue(archivePath: directory + "/" + entry.url, pack: entry.id, version: entry.version)
        } catch let e {
            return [error(entry.url, e.description)]
        }
        var findings: [Finding] = []
        if let difference = Self.difference(map, made.map) { findings.append(error(pieces.url, difference)) }
        if CatalogURL.isAbsolute(map.glue.url) {
            findings.append(Finding(severity: .warning, file: map.glue.url, pack: entry.id, message: "at an absolute URL: not checked"))
            return findings
        }
        // Relative to the piece map's URL.
        let glueURL = pieces.url.lastIndex(of: "/").map { String(pieces.url[...$0]) + map.glue.url } ?? map.glue.url
        do {
            guard let glue = try read(glueURL, limit: Int(clamping: map.glue.size), in: anchor) else {
                findings.append(error(glueURL, "missing"))
                return findings
            }
            try PieceMap.checkBytes(glue, match: map.glue, url: glueURL, pack: entry.id)
            if glue != made.glue { findings.append(error(glueURL, "is not the bytes between the pack file's members")) }
        } catch let e {
            findings.append(error(glueURL, e.description))
        }
        return findings
    }

    /// The file's bytes, or `nil` when there is none.
    private func read(_ name: String, limit: Int, in anchor: DirectoryAnchor) throws(DeliveryError) -> [UInt8]? {
        try PublishedFiles.readIfPresent(name, in: anchor, path: directory + "/" + name, limit: limit)
    }

    /// How the published map differs from the one the pack file makes, or
    /// `nil` when it does not.
    static func difference(_ published: PieceMap, _ made: PieceMap) -> String? {
        guard published != made else { return nil }
        if published.members.count != made.members.count {
            return "lists \(published.members.count) members, the pack file has \(made.members.count)"
        }
        for (i, (p, m)) in zip(published.members, made.members).enumerated() where p != m {
            let what = p.path != m.path ? "path '\(MemberPath.escapingControlCharacters(p.path))', the pack file's is '\(MemberPath.escapingControlCharacters(m.path))'"
                : p.range != m.range ? "range \(p.range), the pack file's is \(m.range)"
                : p.sha256 != m.sha256 ? "SHA-256 \(p.sha256), the pack file's is \(m.sha256)"
                : "method, CRC-32 or length other than the pack file's"
            return "members[\(i)] has \(what)"
        }
        if published.glue != made.glue {
            return "its glue reference (\(published.glue.url), \(published.glue.size) bytes, \(published.glue.sha256)) is not the pack file's (\(made.glue.url), \(made.glue.size) bytes, \(made.glue.sha256))"
        }
        return "it differs from the one the pack file makes"
    }
}

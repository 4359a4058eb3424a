import Foundation
import AssetSystem
import AssetArchive
import AssetStore

extension AssetPackManifest {
    /// The archive members the file selectors select below `root`: every
    /// selected regular file once, named by its path relative to `root`,
    /// sorted. Symbolic links to files are followed (the pack stores the
    /// file's bytes); directories reached through a link are not entered.
    /// When several selectors select one file, the last explicit
    /// `compression` wins.
    ///
    /// - Throws: `.invalidManifest` naming the selector when a
    ///   path leaves `root`, does not exist, is of the wrong kind, or a
    ///   directory selects no files.
    func members(root: String, manifestPath: String) throws(AssetPackError) -> [ArchiveWriter.Member] {
        let fm = FileManager.default
        var chosen: [String: ArchiveWriter.Member] = [:]
        func bad(_ field: String, _ reason: String) -> AssetPackError {
            .manifest(manifestPath, field: field, reason: .invalidSelection, reason)
        }
        func add(_ relative: String, _ compression: Compression) {
            if let existing = chosen[relative], compression == .automatic {
                chosen[relative] = existing
                return
            }
            chosen[relative] = ArchiveWriter.Member(path: relative, source: .file(root + "/" + relative), compression: compression.engine)
        }
        for (i, selector) in fileSelectors.enumerated() {
            switch selector {
            case .file(let raw, let compression):
                let field = "fileSelectors[\(i)].file"
                let relative = try Self.normalize(raw, field: field, bad: bad)
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: root + "/" + relative, isDirectory: &isDir) else {
                    throw bad(field, "'\(raw)' does not exist under \(root)")
                }
                guard !isDir.boolValue else { throw bad(field, "'\(raw)' is a directory; use a directory selector") }
                guard Self.isRegularFile(root + "/" + relative) else { throw bad(field, "'\(raw)' is not a regular file") }
                add(relative, compression)
            case .directory(let raw, let compression):
                let field = "fileSelectors[\(i)].directory"
                let relative = try Self.normalize(raw, field: field, bad: bad)
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: root + "/" + relative, isDirectory: &isDir) else {
                    throw bad(field, "'\(raw)' does not exist under \(root)")
                }
                guard isDir.boolValue else { throw bad(field, "'\(raw)' is not a directory; use a file selector") }
                var found = 0
                for file in Self.regularFiles(below: root + "/" + relative) {
                    add(relative == "." ? file : relative + "/" + file, compression)
                    found += 1
                }
                guard found > 0 else { throw bad(field, "'\(raw)' holds no files") }
            }
        }
        return chosen.values.sorted { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }
    }

    /// Turns a selector path into a clean relative path: no leading `/`, no
    /// `.` or empty components, no `..`, no backslash. `.` alone stays `.`.
    static func normalize(_ raw: String, field: String, bad: (String, String) -> AssetPackError) throws(AssetPackError) -> String {
        guard !raw.hasPrefix("/") else { throw bad(field, "'\(raw)' must be relative to the manifest's directory") }
        guard !raw.contains("\\"), !raw.contains("\0") else { throw bad(field, "'\(raw)' has a backslash or NUL") }
        var parts: [Substring] = []
        for part in raw.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            guard part != ".." else { throw bad(field, "'\(raw)' leads outside the manifest's directory") }
            parts.append(part)
        }
        return parts.isEmpty ? "." : parts.joined(separator: "/")
    }

    static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// Relative paths of the regular files below `directory`, recursively,
    /// following links to files but not to directories.
    static func regularFiles(below directory: String) -> [String] {
        var result: [String] = []
        var pending = [""]
        while let relative = pending.popLast() {
            let dir = relative.isEmpty ? directory : directory + "/" + relative
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            for name in names.sorted() {
                let rel = relative.isEmpty ? name : relative + "/" + name
                var lst = stat()
                guard lstat(directory + "/" + rel, &lst) == 0 else { continue }
                switch lst.st_mode & S_IFMT {
                case S_IFDIR: pending.append(rel)
                case S_IFREG: result.append(rel)
                case S_IFLNK where isRegularFile(directory + "/" + rel): result.append(rel)
                default: continue
                }
            }
        }
        return result
    }

    /// A manifest to start from, as `assetpack template` prints it.
    public static let template = """
        {
            // A unique ID: letters, digits, '.', '_' and '-'.
            "assetPackID": "com.example.Tutorial",
            // One of "essential", "prefetch" (each with installationEventTypes)
            // or "onDemand": {}.
            "downloadPolicy": {
                "prefetch": {
                    "installationEventTypes": ["firstInstallation", "subsequentUpdate"]
                }
            },
            // Paths are relative to this file's directory (or --root).
            "fileSelectors": [
                { "file": "Videos/Introduction.m4v" },
                { "directory": "Levels" }
            ],
            "platforms": ["linux", "iOS", "macOS"]
        }

        """
}

extension AssetPackManifest.Compression {
    var engine: ArchiveWriter.Compression {
        switch self {
        case .automatic: return .automatic
        case .stored: return .stored
        case .deflated: return .deflated
        }
    }
}

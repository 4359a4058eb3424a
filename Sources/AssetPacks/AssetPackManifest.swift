import Foundation
public import AssetStore
public import AssetArchive
internal import AssetJSON

/// A pack's manifest, in Apple's format (JSON; `//` and `/* */` comments
/// and trailing commas allowed):
///
/// ```json
/// {
///   "assetPackID": "Tutorial",
///   "downloadPolicy": { "prefetch": { "installationEventTypes": ["firstInstallation"] } },
///   "fileSelectors": [ { "file": "Videos/Intro.m4v" }, { "directory": "Levels" } ],
///   "platforms": ["iOS", "linux"]
/// }
/// ```
///
/// `downloadPolicy` holds exactly one of `essential`, `prefetch` (each with
/// `installationEventTypes`) or `onDemand` (`{}`). A file selector may add
/// `"compression": "stored"` or `"deflated"` to override the packager's choice.
public struct AssetPackManifest: Sendable, Hashable {
    /// Selects files for a pack, relative to the manifest's root.
    public enum FileSelector: Sendable, Hashable {
        /// One file.
        case file(String, compression: ArchiveWriter.Compression)
        /// Every regular file below a directory, recursively.
        case directory(String, compression: ArchiveWriter.Compression)
    }

    public var assetPackID: String
    public var downloadPolicy: DownloadPolicy
    public var fileSelectors: [FileSelector]
    public var platforms: [Platform]

    public init(assetPackID: String, downloadPolicy: DownloadPolicy, fileSelectors: [FileSelector], platforms: [Platform]) {
        self.assetPackID = assetPackID
        self.downloadPolicy = downloadPolicy
        self.fileSelectors = fileSelectors
        self.platforms = platforms
    }

    /// What the pack records about itself (ID, policy, platforms).
    public var packDescription: PackDescription {
        PackDescription(id: assetPackID, downloadPolicy: downloadPolicy, platforms: platforms)
    }

    /// Reads and checks the manifest at `path`.
    ///
    /// - Throws: `StoreError.invalidManifest` naming the file, the field
    ///   (such as `fileSelectors[2].directory`) and what is wrong with it;
    ///   `.system` when the file cannot be read.
    public static func load(path: String) throws(StoreError) -> AssetPackManifest {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let e = error as NSError
            if e.domain == NSCocoaErrorDomain && e.code == NSFileReadNoSuchFileError {
                throw .system(Errno(2, operation: "open", path: path))
            }
            throw .invalidManifest(path: path, field: "", reason: "cannot be read: \(e.localizedDescription)")
        }
        return try parse(data, path: path)
    }

    /// Parses manifest JSON. `path` names the manifest in errors.
    public static func parse(_ data: Data, path: String) throws(StoreError) -> AssetPackManifest {
        func bad(_ field: String, _ reason: String) -> StoreError {
            .invalidManifest(path: path, field: field, reason: reason)
        }
        let root: Any
        do {
            root = try JSONValue.parse(data, options: .jsonWithComments).plain
        } catch {
            throw bad("", "not valid JSON: \(error)")
        }
        guard let object = root as? [String: Any] else { throw bad("", "must be a JSON object") }
        let known: Set<String> = ["assetPackID", "downloadPolicy", "fileSelectors", "platforms"]
        for key in object.keys.sorted() where !known.contains(key) {
            throw bad(key, "unknown field (expected assetPackID, downloadPolicy, fileSelectors, platforms)")
        }

        guard let id = object["assetPackID"] else { throw bad("assetPackID", "is missing") }
        guard let id = id as? String else { throw bad("assetPackID", "must be a string") }
        do { try PackID.validate(id) } catch {
            if case .invalidPackID(_, let reason) = error { throw bad("assetPackID", "'\(id)': \(reason)") }
            throw error
        }

        let policy = try parsePolicy(object["downloadPolicy"], bad: bad)
        let selectors = try parseSelectors(object["fileSelectors"], bad: bad)

        var platforms: [Platform] = []
        if let value = object["platforms"] {
            guard let list = value as? [Any] else { throw bad("platforms", "must be an array of strings") }
            for (i, item) in list.enumerated() {
                guard let name = item as? String, let p = Platform(rawValue: name) else {
                    throw bad("platforms[\(i)]", "must be one of \(Platform.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if !platforms.contains(p) { platforms.append(p) }
            }
        }
        return AssetPackManifest(assetPackID: id, downloadPolicy: policy, fileSelectors: selectors, platforms: platforms)
    }

    private static func parsePolicy(_ value: Any?, bad: (String, String) -> StoreError) throws(StoreError) -> DownloadPolicy {
        guard let value else { throw bad("downloadPolicy", "is missing") }
        guard let policy = value as? [String: Any] else { throw bad("downloadPolicy", "must be an object") }
        guard policy.count == 1, let (kind, body) = policy.first else {
            throw bad("downloadPolicy", "must hold exactly one of essential, prefetch, onDemand")
        }
        let field = "downloadPolicy.\(kind)"
        switch kind {
        case "onDemand":
            guard let body = body as? [String: Any] else { throw bad(field, "must be an object ({})") }
            if let extra = body.keys.sorted().first { throw bad("\(field).\(extra)", "unknown field") }
            return .onDemand
        case "essential", "prefetch":
            guard let body = body as? [String: Any] else { throw bad(field, "must be an object") }
            for key in body.keys.sorted() where key != "installationEventTypes" {
                throw bad("\(field).\(key)", "unknown field")
            }
            guard let list = body["installationEventTypes"] else {
                throw bad("\(field).installationEventTypes", "is missing")
            }
            guard let names = list as? [Any], !names.isEmpty else {
                throw bad("\(field).installationEventTypes", "must be a non-empty array")
            }
            var events = Set<InstallationEventType>()
            for (i, name) in names.enumerated() {
                guard let name = name as? String, let e = InstallationEventType(rawValue: name) else {
                    throw bad("\(field).installationEventTypes[\(i)]", "must be firstInstallation or subsequentUpdate")
                }
                events.insert(e)
            }
            return kind == "essential" ? .essential(events) : .prefetch(events)
        default:
            throw bad("downloadPolicy.\(kind)", "unknown policy (expected essential, prefetch or onDemand)")
        }
    }

    private static func parseSelectors(_ value: Any?, bad: (String, String) -> StoreError) throws(StoreError) -> [FileSelector] {
        guard let value else { throw bad("fileSelectors", "is missing") }
        guard let list = value as? [Any] else { throw bad("fileSelectors", "must be an array") }
        guard !list.isEmpty else { throw bad("fileSelectors", "selects nothing: add a file or directory selector") }
        var selectors: [FileSelector] = []
        for (i, item) in list.enumerated() {
            let field = "fileSelectors[\(i)]"
            guard let object = item as? [String: Any] else { throw bad(field, "must be an object") }
            for key in object.keys.sorted() where !["file", "directory", "compression"].contains(key) {
                throw bad("\(field).\(key)", "unknown field (expected file or directory, and optionally compression)")
            }
            var compression = ArchiveWriter.Compression.automatic
            if let c = object["compression"] {
                switch c as? String {
                case "stored": compression = .stored
                case "deflated": compression = .deflated
                case "automatic": compression = .automatic
                default: throw bad("\(field).compression", "must be stored, deflated or automatic")
                }
            }
            switch (object["file"], object["directory"]) {
            case (let file?, nil):
                guard let file = file as? String, !file.isEmpty else { throw bad("\(field).file", "must be a non-empty string") }
                selectors.append(.file(file, compression: compression))
            case (nil, let dir?):
                guard let dir = dir as? String, !dir.isEmpty else { throw bad("\(field).directory", "must be a non-empty string") }
                selectors.append(.directory(dir, compression: compression))
            case (nil, nil):
                throw bad(field, "needs a file or a directory")
            default:
                throw bad(field, "has both file and directory; use one selector for each")
            }
        }
        return selectors
    }
}

public import Foundation
import AssetArchive
import AssetJSON
import AssetStore
import AssetSystem

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
/// An optional `"version"` (a whole number from 1, an extension of Apple's
/// format) is recorded in the pack and becomes its version in a catalog
/// (`assetpack publish`).
public struct AssetPackManifest: Sendable, Hashable {
    /// Selects files for a pack, relative to the manifest's root.
    public enum FileSelector: Sendable, Hashable {
        /// One file.
        case file(String, compression: Compression)
        /// Every regular file below a directory, recursively.
        case directory(String, compression: Compression)
    }

    /// How the selected files are kept in the pack.
    public enum Compression: String, Sendable, Hashable, CaseIterable {
        /// Stored for already-compressed media (by extension) and for small
        /// files; otherwise deflated, unless deflate saves less than 3 %.
        case automatic
        /// Always stored (readable zero-copy, descriptors are archive ranges).
        case stored
        /// Always deflated.
        case deflated
    }

    public var assetPackID: String
    public var downloadPolicy: AssetPack.DownloadPolicy
    public var fileSelectors: [FileSelector]
    public var platforms: [AssetPack.Platform]
    /// The pack's version in a catalog, when the manifest gives one (1 to
    /// 2^53 − 1); else `assetpack publish` numbers versions itself.
    public var version: UInt64?

    public init(assetPackID: String, downloadPolicy: AssetPack.DownloadPolicy, fileSelectors: [FileSelector],
                platforms: [AssetPack.Platform], version: UInt64? = nil) {
        self.assetPackID = assetPackID
        self.downloadPolicy = downloadPolicy
        self.fileSelectors = fileSelectors
        self.platforms = platforms
        self.version = version
    }

    /// What the pack records about itself (ID, policy, platforms, version).
    var packDescription: PackDescription {
        PackDescription(id: assetPackID, downloadPolicy: downloadPolicy.engine, platforms: platforms.map(\.engine), version: version)
    }

    /// Reads and checks the manifest at `path`.
    ///
    /// - Throws: `.invalidManifest` naming the file, the field (such as
    ///   `fileSelectors[2].directory`) or the line and column, and what is
    ///   wrong; `.system` when the file cannot be opened.
    public static func load(path: String) throws(AssetPackError) -> AssetPackManifest {
        let bytes: [UInt8]
        do {
            let fd = try FileDescriptor.open(path)
            guard try fd.status().isRegularFile else {
                throw AssetPackError.manifest(path, reason: .unreadableManifest, "not a regular file")
            }
            bytes = try fd.readToEnd()
        } catch let error as Errno {
            throw AssetPackError(error.with(operation: "read manifest", path: path))
        } catch let error as AssetPackError {
            throw error
        } catch {
            throw AssetPackError.manifest(path, reason: .unreadableManifest, "\(error)")
        }
        return try parse(Data(bytes), path: path)
    }

    /// Parses manifest JSON. `path` names the manifest in errors.
    public static func parse(_ data: Data, path: String) throws(AssetPackError) -> AssetPackManifest {
        func bad(_ field: String, _ reason: String) -> AssetPackError {
            .manifest(path, field: field, reason: .invalidField, reason)
        }
        let root: Any
        do {
            root = try JSONValue.parse(data, options: .jsonWithComments).plain
        } catch {
            throw AssetPackError.manifest(path, reason: .invalidJSON, line: error.line, column: error.column,
                                          "not valid JSON: \(error.message)")
        }
        guard let object = root as? [String: Any] else { throw AssetPackError.manifest(path, reason: .invalidField, "must be a JSON object") }
        let known: Set<String> = ["assetPackID", "downloadPolicy", "fileSelectors", "platforms", "version"]
        for key in object.keys.sorted() where !known.contains(key) {
            throw bad(key, "unknown field (expected assetPackID, downloadPolicy, fileSelectors, platforms, version)")
        }

        guard let id = object["assetPackID"] else { throw bad("assetPackID", "is missing") }
        guard let id = id as? String else { throw bad("assetPackID", "must be a string") }
        do { try PackID.validate(id) } catch {
            if case .invalidPackID(_, let reason) = error { throw bad("assetPackID", "'\(id)': \(reason.text)") }
            throw AssetPackError(error)
        }

        let policy = try parsePolicy(object["downloadPolicy"], bad: bad)
        let selectors = try parseSelectors(object["fileSelectors"], bad: bad)

        var platforms: [AssetPack.Platform] = []
        if let value = object["platforms"] {
            guard let list = value as? [Any] else { throw bad("platforms", "must be an array of strings") }
            for (i, item) in list.enumerated() {
                guard let name = item as? String, let p = AssetPack.Platform(rawValue: name) else {
                    throw bad("platforms[\(i)]", "must be one of \(AssetPack.Platform.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                if !platforms.contains(p) { platforms.append(p) }
            }
        }
        var version: UInt64?
        if let value = object["version"] {
            // The plain text: `1.0` and `1e3` are integers to JSONNumber, not versions here.
            guard let number = value as? JSONNumber, number.text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let v = number.uint64Value, v >= 1, v <= PackDescription.maximumVersion else {
                throw bad("version", "must be a whole number from 1 to \(PackDescription.maximumVersion)")
            }
            version = v
        }
        return AssetPackManifest(assetPackID: id, downloadPolicy: policy, fileSelectors: selectors, platforms: platforms, version: version)
    }

    private static func parsePolicy(_ value: Any?, bad: (String, String) -> AssetPackError) throws(AssetPackError) -> AssetPack.DownloadPolicy {
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
            var events = Set<AssetPack.InstallationEventType>()
            for (i, name) in names.enumerated() {
                guard let name = name as? String, let e = AssetPack.InstallationEventType(rawValue: name) else {
                    throw bad("\(field).installationEventTypes[\(i)]", "must be firstInstallation or subsequentUpdate")
                }
                events.insert(e)
            }
            return kind == "essential" ? .essential(events) : .prefetch(events)
        default:
            throw bad("downloadPolicy.\(kind)", "unknown policy (expected essential, prefetch or onDemand)")
        }
    }

    private static func parseSelectors(_ value: Any?, bad: (String, String) -> AssetPackError) throws(AssetPackError) -> [FileSelector] {
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
            var compression = Compression.automatic
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

extension AssetPackError {
    /// An invalid manifest at `path`: `field` at fault when known, `detail`
    /// what is wrong with it.
    static func manifest(_ path: String, field: String? = nil, reason: Reason, line: Int? = nil, column: Int? = nil,
                         _ detail: String) -> AssetPackError {
        var place = path
        if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        let message = field.map { $0.isEmpty ? "\(place): \(detail)" : "\(place): \($0): \(detail)" } ?? "\(place): \(detail)"
        return AssetPackError(.invalidManifest, reason: reason, path: path, field: field, line: line, column: column, message: message)
    }
}

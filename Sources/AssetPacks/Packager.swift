import Foundation
public import AssetStore
public import AssetArchive

/// Builds pack files from manifests.
public enum Packager {
    /// Packages the files `manifest` selects below `root` into a pack at
    /// `output`, recording the manifest's ID, policy and platforms in the
    /// archive comment. The same inputs always give the same bytes.
    ///
    /// - Parameters:
    ///   - root: the directory selector paths are relative to; by default
    ///     the manifest's own directory.
    /// - Returns: the written archive, parsed.
    /// - Throws: `StoreError.invalidManifest` for manifest and selection
    ///   errors, `.archive` when writing fails.
    @discardableResult
    public static func package(manifestAt manifestPath: String, root: String? = nil, output: String) throws(StoreError) -> ZipArchive {
        let manifest = try AssetPackManifest.load(path: manifestPath)
        let base = root ?? (URL(fileURLWithPath: manifestPath).deletingLastPathComponent().path)
        return try package(manifest, root: base, manifestPath: manifestPath, output: output)
    }

    /// Packages an already parsed manifest. See ``package(manifestAt:root:output:)``.
    @discardableResult
    public static func package(_ manifest: AssetPackManifest, root: String, manifestPath: String, output: String) throws(StoreError) -> ZipArchive {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDir), isDir.boolValue else {
            throw .invalidManifest(path: manifestPath, field: "", reason: "root directory \(root) does not exist")
        }
        let members = try manifest.members(root: root, manifestPath: manifestPath)
        do {
            return try ArchiveWriter.write(members, comment: manifest.packDescription.archiveComment, to: output)
        } catch {
            throw .archive(error)
        }
    }
}

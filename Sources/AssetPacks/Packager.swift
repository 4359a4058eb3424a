import Foundation
import AssetSystem
import AssetArchive
import AssetStore

/// Builds pack files from manifests.
public enum Packager {
    /// Packages the files `manifest` selects below `root` into a pack at
    /// `output`, recording the manifest's ID, policy and platforms in the
    /// archive comment. The same inputs always give the same bytes. The pack
    /// is written beside `output` and renamed into place, so `output` is
    /// never half written.
    ///
    /// - Parameters:
    ///   - root: the directory selector paths are relative to; by default
    ///     the manifest's own directory.
    ///   - progress: called as the files' bytes are packed.
    /// - Returns: the written pack, checked.
    /// - Throws: `.invalidManifest` for manifest and selection errors,
    ///   `.badArchive` or `.system` when writing fails.
    @discardableResult
    public static func package(manifestAt manifestPath: String, root: String? = nil, output: String,
                               progress: (@Sendable (AssetPackProgress) -> Void)? = nil) throws(AssetPackError) -> AssetPackFile {
        let manifest = try AssetPackManifest.load(path: manifestPath)
        let base = root ?? (URL(fileURLWithPath: manifestPath).deletingLastPathComponent().path)
        return try package(manifest, root: base, manifestPath: manifestPath, output: output, progress: progress)
    }

    /// Packages an already parsed manifest; `manifestPath` names it in
    /// errors. See ``package(manifestAt:root:output:progress:)``.
    @discardableResult
    public static func package(_ manifest: AssetPackManifest, root: String, manifestPath: String, output: String,
                               progress: (@Sendable (AssetPackProgress) -> Void)? = nil) throws(AssetPackError) -> AssetPackFile {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDir), isDir.boolValue else {
            throw .manifest(manifestPath, reason: .invalidSelection, "root directory \(root) does not exist")
        }
        let members = try manifest.members(root: root, manifestPath: manifestPath)
        do {
            _ = try ArchiveWriter.write(members, comment: manifest.packDescription.archiveComment, to: output)
        } catch {
            throw AssetPackError(error)
        }
        return try AssetPackFile.inspect(at: output)
    }
}

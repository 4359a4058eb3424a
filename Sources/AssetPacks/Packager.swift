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
    ///   - progress: called as the files' bytes are packed (`.packaging`),
    ///     then as the written pack is checked (`.validating`, `.hashing`).
    /// - Returns: the written pack, read back and checked.
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
            let report = progress.map { progress in
                { (done: UInt64, total: UInt64) in
                    progress(AssetPackProgress(phase: .packaging, unit: .bytes, completed: done, total: total))
                }
            }
            _ = try ArchiveWriter.write(members, comment: manifest.packDescription.archiveComment, to: output, progress: report)
        } catch {
            throw AssetPackError(error)
        }
        // What was written is read back as any pack is: the strict reader
        // checks every member, so a pack this returns is one that installs.
        return try AssetPackFile.inspect(at: output, progress: progress)
    }
}

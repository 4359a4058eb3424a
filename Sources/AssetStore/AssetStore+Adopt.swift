import AssetSystem

extension AssetStore {
    /// Installs a finished download by adopting its file: no copy, and no
    /// second SHA-256.
    ///
    /// `staging/<stagingName>` (a `.download` whose journal entry the
    /// caller wrote) becomes the archive itself: it is locked, hard-linked
    /// as an `.install` staging file, synced, and from there installed as
    /// ``install(packAt:id:catalogVersion:source:progress:)`` installs a
    /// copy — ZIP structure, the members' declared sizes against
    /// ``limits()``, every member's CRC-32, the recorded manifest and ID are
    /// all checked; only the whole file's SHA-256 is taken from the caller,
    /// who computed it over exactly the bytes it wrote and checked it
    /// against the catalog. The index transaction that switches the pack in
    /// also deletes the pack's journal entry naming this file; the
    /// `.download` name is unlinked after that commit. So a process killed at
    /// any instant leaves either the download, whole and resumable (its
    /// journal entry and file), or the pack installed.
    ///
    /// When the same archive is already installed nothing changes
    /// (`.unchanged`); then, and when this throws, the `.download` file and
    /// its journal entry stay as they were, for the caller to discard.
    ///
    /// - Parameters:
    ///   - stagingName: the download's file name in `staging/`: one
    ///     component ending in `.download`.
    ///   - verifiedSHA256: the 32-byte SHA-256 of the file's bytes.
    ///   - id: the pack ID; a pack that records its ID must record this one.
    ///   - catalogVersion: the version the catalog gave, recorded.
    ///   - source: where the pack came from (its URL), recorded for people.
    ///   - progress: as for `install(packAt:)`, without the copying and
    ///     hashing phases.
    /// - Throws: `StoreError.notAFile` for a name that is not such a
    ///   component or a file that is not a regular file,
    ///   `.symlinkInContainer`, `.system` (`ENOENT` for a missing file),
    ///   and everything `install(packAt:)` throws for the archive.
    @discardableResult
    public func install(
        adopting stagingName: String, verifiedSHA256: [UInt8], id: String, catalogVersion: String?, source: String,
        progress: ((InstallProgress) -> Void)? = nil
    ) throws(StoreError) -> InstallOutcome {
        precondition(verifiedSHA256.count == 32, "install(adopting:) needs the 32-byte SHA-256 of the download")
        let containerLock = try lockContainer(.shared)
        CrashPoint.hit("install.locked-container")
        try reclaimLeftovers()
        let staged = try StagedFile(adopting: stagingName, in: layout.staging, label: id, wait: lockWait,
                                    groupShared: layout.isGroupShared)
        CrashPoint.hit("adopt.linked")
        do { try staged.descriptor.sync() } catch { throw .system(error.with(operation: "fsync", path: staged.path)) }
        CrashPoint.hit("adopt.synced")
        return try install(staged, path: layout.staging.path(of: stagingName), requestedID: id, verifiedSHA256: verifiedSHA256,
                           catalogVersion: catalogVersion, source: source, progress: progress, holding: containerLock)
    }
}

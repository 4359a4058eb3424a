import Foundation
@_exported public import AssetStore
@_exported public import AssetSystem

/// Manages the asset packs of one group container, in the spirit of Apple's
/// `AssetPackManager`.
///
/// A manager is `Sendable`: share one across threads and tasks. Several
/// processes (an app and its downloader, a launcher and a game) may each have
/// a manager on the same container; they see each other's installs.
///
/// Reads are synchronous and take no lock: they run in an index snapshot and
/// return bytes that point straight into the installed archive.
public final class AssetPackManager: Sendable {
    /// The storage engine underneath.
    public let store: AssetStore

    /// A manager for `container` (by default the default group's).
    ///
    /// - Throws: `StoreError` when the container cannot be created or its
    ///   index opened.
    public init(container: GroupContainer = .default(), options: AssetStore.Options = AssetStore.Options()) throws(StoreError) {
        store = try AssetStore(container: container, options: options)
    }

    /// The container this manager works in.
    public var container: GroupContainer { store.container }

    /// The installed pack with this ID.
    ///
    /// - Throws: `StoreError.assetPackNotFound` when it is not installed.
    public func assetPack(withID id: String) throws(StoreError) -> AssetPack {
        guard let record = try store.packRecord(id) else { throw .assetPackNotFound(id) }
        return AssetPack(record)
    }

    /// Every installed pack, sorted by ID.
    public func allAssetPacks() throws(StoreError) -> [AssetPack] {
        try store.allPackRecords().map(AssetPack.init)
    }

    /// What ``installPack(at:id:)`` did.
    public struct InstallResult: Sendable {
        public let pack: AssetPack
        public let change: InstallChange
    }

    /// Installs a local pack file, replacing the installed version of the
    /// same pack atomically (a byte-identical file changes nothing).
    ///
    /// - Parameter id: the ID for a plain ZIP that records no manifest
    ///   (default: the file name without its extension).
    /// - Throws: `StoreError.archive` for a malformed or damaged file
    ///   (nothing installed changes), `.invalidPackID`, `.lockTimeout`.
    @discardableResult
    public func installPack(at path: String, id: String? = nil) throws(StoreError) -> InstallResult {
        let outcome = try store.install(packAt: path, id: id)
        return InstallResult(pack: AssetPack(outcome.record), change: outcome.change)
    }

    /// Installs a local pack file. See ``installPack(at:id:)``.
    @discardableResult
    public func install(packAt url: URL, id: String? = nil) throws(StoreError) -> AssetPack {
        try installPack(at: url.path, id: id).pack
    }

    /// The bytes of the file at `path` in the pack `id`, or in whichever
    /// installed pack holds it when `id` is nil.
    ///
    /// Stored files are not copied: the `Data` points into a shared read-only
    /// mapping of the archive. Deflated files are inflated and checked.
    ///
    /// - Throws: `.assetPackNotFound(id)`, `.fileNotFound(path)`,
    ///   `.ambiguousPath` when `id` is nil and several packs hold `path`.
    public func contents(at path: String, searchingInAssetPackWithID id: String? = nil) throws(StoreError) -> Data {
        try store.contents(at: path, inPack: id)
    }

    /// A read-only descriptor (with offset and length) of the file at `path`.
    /// See ``AssetStore/descriptor(for:inPack:options:)``.
    public func descriptor(
        for path: String, searchingInAssetPackWithID id: String? = nil, options: DescriptorOptions = []
    ) throws(StoreError) -> AssetDescriptor {
        try store.descriptor(for: path, inPack: id, options: options)
    }

    /// The files of pack `id`, sorted by path; with `directory`, only those below it.
    public func members(inAssetPackWithID id: String, under directory: String? = nil) throws(StoreError) -> [AssetMember] {
        try store.members(ofPack: id, under: directory).map(AssetMember.init)
    }

    /// Removes pack `id` and frees its space. Bytes and descriptors already
    /// handed out stay readable.
    ///
    /// - Throws: `.assetPackNotFound(id)` when it is not installed.
    public func remove(assetPackWithID id: String) throws(StoreError) {
        try store.remove(pack: id)
    }
}

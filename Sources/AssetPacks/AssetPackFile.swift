import Foundation
import AssetSystem
import AssetArchive
import AssetStore

/// A pack file checked end to end, as `assetpack inspect` shows it: its ZIP
/// structure, the sizes its members declare against
/// ``AssetPackManager/Limits``, every member's data (CRC-32; deflated members
/// inflated to exactly their declared size), its SHA-256 and its recorded
/// manifest.
public struct AssetPackFile: Sendable, Hashable {
    /// One member of the archive.
    public struct Member: Sendable, Hashable {
        public let path: String
        public let method: AssetMember.Method
        /// Its size in bytes.
        public let size: UInt64
        /// Its size inside the archive.
        public let storedSize: UInt64
        public let crc32: UInt32
        /// Where its data starts in the file (page-aligned for large stored
        /// members of packs this project writes).
        public let dataOffset: UInt64
    }

    /// The path it was read from.
    public let path: String
    /// Its size in bytes.
    public let size: UInt64
    /// SHA-256 of the whole file, 64 lowercase hex digits.
    public let sha256: String
    /// Whether the file records a manifest (a pack this project wrote); a
    /// plain ZIP does not.
    public let recordsManifest: Bool
    /// The ID it installs under: the recorded one, else the file name
    /// without its extension.
    public let id: String
    public let downloadPolicy: AssetPack.DownloadPolicy
    public let platforms: [AssetPack.Platform]
    /// The version its manifest gave (recorded in the pack), if any.
    public let version: UInt64?
    /// Whether the archive uses ZIP64 records.
    public let usesZip64: Bool
    /// The members, in archive order.
    public let members: [Member]

    /// The sum of the members' sizes.
    public var totalSize: UInt64 { members.reduce(0) { $0 + $1.size } }

    /// Checks the pack file at `path`.
    ///
    /// - Parameters:
    ///   - limits: what its deflated members may declare, checked before any
    ///     is inflated, as an install would (default: the defaults); `nil`
    ///     checks none.
    ///   - progress: called as members are checked (`.validating`) and the
    ///     file is hashed (`.hashing`).
    /// - Throws: `.badArchive` with the first problem found,
    ///   `.limitExceeded` naming the member over a limit, `.notAFile`,
    ///   `.invalidRecordedManifest`, `.system`.
    public static func inspect(
        at path: String, limits: AssetPackManager.Limits? = .defaults,
        progress: (@Sendable (AssetPackProgress) -> Void)? = nil
    ) throws(AssetPackError) -> AssetPackFile {
        let report = progress.map { progress in { (p: InstallProgress) in progress(AssetPackProgress(p)) } }
        return AssetPackFile(try engine { () throws(StoreError) in
            try PackFile.validate(path: path, limits: limits.map(PackLimits.init), progress: report)
        })
    }

    init(_ file: PackFile) {
        path = file.path
        size = file.size
        sha256 = SHA256.hex(file.sha256)
        recordsManifest = file.description != nil
        id = file.description?.id ?? file.defaultID
        downloadPolicy = AssetPack.DownloadPolicy(file.description?.downloadPolicy ?? .onDemand)
        platforms = (file.description?.platforms ?? []).map(AssetPack.Platform.init)
        version = file.description?.version
        usesZip64 = file.archive.usesZip64
        members = file.archive.entries.map {
            Member(path: $0.path, method: AssetMember.Method($0.method), size: $0.uncompressedSize,
                   storedSize: $0.compressedSize, crc32: $0.crc32, dataOffset: $0.dataOffset)
        }
    }
}

import Foundation
public import AssetStore

/// An installed asset pack, as Apple's `AssetPack` describes one.
public struct AssetPack: Sendable, Hashable, Identifiable {
    /// The pack's ID.
    public let id: String
    /// The catalog's version, or the local generation number.
    public let version: String
    public let downloadPolicy: DownloadPolicy
    public let platforms: [Platform]
    /// Size of the archive on disk.
    public let archiveSize: UInt64
    /// Number of files.
    public let memberCount: UInt64
    /// Sum of the files' sizes.
    public let totalSize: UInt64
    public let installDate: Date
    /// SHA-256 of the archive, hex.
    public let sha256: String

    init(_ record: PackRecord) {
        id = record.id
        version = record.version
        downloadPolicy = record.downloadPolicy
        platforms = record.platforms
        archiveSize = record.archiveSize
        memberCount = record.memberCount
        totalSize = record.totalSize
        installDate = record.installDate
        sha256 = record.sha256.map { String(format: "%02x", $0) }.joined()
    }
}

/// A file in an installed pack.
public struct AssetMember: Sendable, Hashable {
    public let pack: String
    public let path: String
    public let size: UInt64
    /// Its size inside the archive.
    public let storedSize: UInt64
    /// Whether it is deflated in the archive (so reads inflate it).
    public let isCompressed: Bool

    init(_ info: MemberInfo) {
        pack = info.pack
        path = info.path
        size = info.size
        storedSize = info.storedSize
        isCompressed = info.method == .deflated
    }
}

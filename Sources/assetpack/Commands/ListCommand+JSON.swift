import Foundation
import AssetPacks

extension ListCommand {
    /// An installed pack, as `ls --json` and `install --json` print it.
    struct PackJSON: Encodable {
        let id: String
        let version: String
        let downloadPolicy: String
        let installationEventTypes: [String]
        let platforms: [String]
        let memberCount: UInt64
        let totalSize: UInt64
        let archiveSize: UInt64
        let sha256: String
        let installDate: Date
        /// What `install` did (installed, replaced, unchanged); absent in `ls`.
        let change: String?

        init(_ p: AssetPack, change: String? = nil) {
            id = p.id
            version = p.version
            downloadPolicy = p.downloadPolicy.name
            installationEventTypes = p.downloadPolicy.installationEventTypes.map(\.rawValue)
            platforms = p.platforms.map(\.rawValue)
            memberCount = p.memberCount
            totalSize = p.totalSize
            archiveSize = p.archiveSize
            sha256 = p.sha256
            installDate = p.installDate
            self.change = change
        }
    }

    /// A member of an installed pack, as `ls <pack-id> --json` prints it.
    struct MemberJSON: Encodable {
        let path: String
        let size: UInt64
        let storedSize: UInt64
        /// `deflated` or `stored`.
        let method: String

        init(_ m: AssetMember) {
            path = m.path
            size = m.size
            storedSize = m.storedSize
            method = m.method.rawValue
        }
    }
}

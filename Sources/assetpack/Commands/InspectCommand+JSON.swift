import AssetPacks
import AssetArchive

extension InspectCommand {
    /// A checked pack file, as `inspect --json` prints it.
    struct PackFileJSON: Encodable {
        let path: String
        let size: UInt64
        let sha256: String
        let zip64: Bool
        let members: [MemberJSON]
        /// The recorded ID, or the one a plain ZIP installs under.
        let assetPackID: String
        let downloadPolicy: String?
        let installationEventTypes: [String]?
        let platforms: [String]?
        /// `false` for a plain ZIP without a recorded manifest; absent otherwise.
        let recordedManifest: Bool?

        init(_ report: PackFile) {
            path = report.path
            size = report.size
            sha256 = SHA256.hex(report.sha256)
            zip64 = report.archive.usesZip64
            members = report.archive.entries.map(MemberJSON.init)
            let d = report.description
            assetPackID = d?.id ?? report.defaultID
            downloadPolicy = d?.downloadPolicy.name
            installationEventTypes = d?.downloadPolicy.installationEventTypes.map(\.rawValue)
            platforms = d?.platforms.map(\.rawValue)
            recordedManifest = d == nil ? false : nil
        }
    }

    /// One member of the archive.
    struct MemberJSON: Encodable {
        let path: String
        /// `deflated` or `stored`.
        let method: String
        let size: UInt64
        let storedSize: UInt64
        /// Eight lower-case hex digits, zero-padded.
        let crc32: String
        let dataOffset: UInt64

        init(_ e: ArchiveEntry) {
            path = e.path
            method = e.method == .stored ? "stored" : "deflated"
            size = e.uncompressedSize
            storedSize = e.compressedSize
            crc32 = InspectCommand.hex8(e.crc32)
            dataOffset = e.dataOffset
        }
    }

    /// `0x0a1b2c3d` as `0a1b2c3d`: eight hex digits, leading zeros kept.
    static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

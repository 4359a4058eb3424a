import AssetPacks

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
        /// The version the manifest recorded; absent when it gave none.
        let version: UInt64?
        /// `false` for a plain ZIP without a recorded manifest; absent otherwise.
        let recordedManifest: Bool?

        init(_ file: AssetPackFile) {
            path = file.path
            size = file.size
            sha256 = file.sha256
            zip64 = file.usesZip64
            members = file.members.map(MemberJSON.init)
            assetPackID = file.id
            let recorded = file.recordsManifest
            downloadPolicy = recorded ? file.downloadPolicy.name : nil
            installationEventTypes = recorded ? file.downloadPolicy.installationEventTypes.map(\.rawValue) : nil
            platforms = recorded ? file.platforms.map(\.rawValue) : nil
            version = file.version
            recordedManifest = recorded ? nil : false
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

        init(_ m: AssetPackFile.Member) {
            path = m.path
            method = m.method.rawValue
            size = m.size
            storedSize = m.storedSize
            crc32 = InspectCommand.hex8(m.crc32)
            dataOffset = m.dataOffset
        }
    }

    /// `0x0a1b2c3d` as `0a1b2c3d`: eight hex digits, leading zeros kept.
    static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

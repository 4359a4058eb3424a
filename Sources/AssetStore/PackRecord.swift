import Foundation
import AssetIndex

/// An installed pack version: the `packs` database's value.
public struct PackRecord: Sendable, Hashable {
    /// The pack's ID (the record's key).
    public var id: String
    /// Names the archive file of this version (`packs/<id>.<key hex>.zip`).
    public var archiveKey: UInt64
    /// The archive's size in bytes.
    public var archiveSize: UInt64
    /// The archive's SHA-256.
    public var sha256: [UInt8]
    /// 1 for the first install, incremented by every replacement.
    public var generation: UInt64
    /// The version the catalog gave, when the pack came from one.
    public var catalogVersion: String?
    public var downloadPolicy: DownloadPolicy
    public var platforms: [Platform]
    /// Regular-file members.
    public var memberCount: UInt64
    /// Sum of the members' sizes.
    public var totalSize: UInt64
    /// When this version was installed, to the millisecond (as recorded).
    public var installDate: Date
    /// Where the archive was installed from (a path or URL), for people.
    public var source: String

    /// The version to show: the catalog's, else the generation number.
    public var version: String { catalogVersion ?? String(generation) }

    /// The archive's file name inside `packs/`.
    public var archiveName: String { IndexSchema.archiveName(pack: id, archiveKey: archiveKey) }

    public init(id: String, archiveKey: UInt64, archiveSize: UInt64, sha256: [UInt8], generation: UInt64,
                catalogVersion: String?, downloadPolicy: DownloadPolicy, platforms: [Platform],
                memberCount: UInt64, totalSize: UInt64, installDate: Date, source: String) {
        self.id = id
        self.archiveKey = archiveKey
        self.archiveSize = archiveSize
        self.sha256 = sha256
        self.generation = generation
        self.catalogVersion = catalogVersion
        self.downloadPolicy = downloadPolicy
        self.platforms = platforms
        self.memberCount = memberCount
        self.totalSize = totalSize
        self.installDate = installDate
        self.source = source
    }

    private static let formatVersion: UInt8 = 1

    /// The record's bytes: a format byte, then fixed fields, then
    /// length-prefixed strings, all little-endian.
    var encoded: [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.u8(Self.formatVersion)
        w.u64(archiveKey)
        w.u64(archiveSize)
        w.bytes(sha256)
        w.u64(generation)
        w.string(catalogVersion ?? "")
        w.u8(catalogVersion == nil ? 0 : 1)
        switch downloadPolicy {
        case .essential: w.u8(1)
        case .prefetch: w.u8(2)
        case .onDemand: w.u8(3)
        }
        var events: UInt8 = 0
        for e in downloadPolicy.installationEventTypes { events |= e == .firstInstallation ? 1 : 2 }
        w.u8(events)
        w.string(platforms.map(\.rawValue).joined(separator: ","))
        w.u64(memberCount)
        w.u64(totalSize)
        w.i64(Int64((installDate.timeIntervalSince1970 * 1000).rounded()))
        w.string(source)
        return w.bytes
    }

    /// Decodes the record of pack `id`.
    ///
    /// - Throws: `StoreError.corruptRecord` when the bytes are not a record.
    init(id: String, decoding bytes: UnsafeRawBufferPointer) throws(StoreError) {
        var r = ByteReader(bytes)
        func bad(_ why: String) -> StoreError { .corruptRecord(pack: id, member: nil, reason: .undecodable(why)) }
        guard let format = r.u8(), format == Self.formatVersion else { throw bad("unknown record format") }
        guard let archiveKey = r.u64(), let archiveSize = r.u64(), let sha = r.array(count: 32),
              let generation = r.u64(), let catalog = r.string(), let hasCatalog = r.u8(),
              let policyKind = r.u8(), let eventBits = r.u8(), let platformList = r.string(),
              let memberCount = r.u64(), let totalSize = r.u64(), let millis = r.i64(),
              let source = r.string(), r.isAtEnd
        else { throw bad("record is truncated or too long") }
        var events = Set<InstallationEventType>()
        if eventBits & 1 != 0 { events.insert(.firstInstallation) }
        if eventBits & 2 != 0 { events.insert(.subsequentUpdate) }
        let policy: DownloadPolicy
        switch policyKind {
        case 1: policy = .essential(events)
        case 2: policy = .prefetch(events)
        case 3: policy = .onDemand
        default: throw bad("unknown download policy \(policyKind)")
        }
        var platforms: [Platform] = []
        for name in platformList.split(separator: ",") {
            guard let p = Platform(rawValue: String(name)) else { throw bad("unknown platform '\(name)'") }
            platforms.append(p)
        }
        self.init(id: id, archiveKey: archiveKey, archiveSize: archiveSize, sha256: sha, generation: generation,
                  catalogVersion: hasCatalog == 1 ? catalog : nil, downloadPolicy: policy, platforms: platforms,
                  memberCount: memberCount, totalSize: totalSize,
                  installDate: Date(timeIntervalSince1970: Double(millis) / 1000), source: source)
    }
}

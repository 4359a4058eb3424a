public import Foundation
import AssetSystem
import AssetArchive
import AssetStore

/// An installed asset pack, as Apple's `AssetPack` describes one.
public struct AssetPack: Sendable, Hashable, Identifiable {
    /// When a pack is downloaded, as in Apple's manifest format.
    public enum DownloadPolicy: Sendable, Hashable {
        /// Installed with the program: downloads block the given installation events.
        case essential(Set<InstallationEventType>)
        /// Downloaded in the background after the given installation events.
        case prefetch(Set<InstallationEventType>)
        /// Downloaded only when a program asks for it.
        case onDemand

        /// `essential`, `prefetch` or `onDemand`, as the manifest spells it.
        public var name: String {
            switch self {
            case .essential: return "essential"
            case .prefetch: return "prefetch"
            case .onDemand: return "onDemand"
            }
        }

        /// The installation events of an essential or prefetch policy,
        /// sorted; empty for on-demand.
        public var installationEventTypes: [InstallationEventType] {
            switch self {
            case .essential(let e), .prefetch(let e): return e.sorted { $0.rawValue < $1.rawValue }
            case .onDemand: return []
            }
        }
    }

    /// The installation events after which essential and prefetch packs download.
    public enum InstallationEventType: String, Sendable, Hashable, CaseIterable {
        case firstInstallation
        case subsequentUpdate
    }

    /// The platforms a pack is for: Apple's names, plus `linux`.
    public enum Platform: String, Sendable, Hashable, CaseIterable {
        case iOS, macOS, tvOS, visionOS, watchOS, linux
    }

    /// The pack's ID.
    public let id: String
    /// The catalog's version, or the local generation number.
    public let version: String
    public let downloadPolicy: DownloadPolicy
    /// The platforms the pack is for; empty means every platform, as in
    /// Apple's manifests (``supports(_:)``).
    public let platforms: [Platform]
    /// Size of the archive on disk, in bytes.
    public let archiveSize: UInt64
    /// Number of files.
    public let memberCount: UInt64
    /// Sum of the files' sizes, in bytes.
    public let totalSize: UInt64
    public let installDate: Date
    /// SHA-256 of the archive, 64 lowercase hex digits.
    public let sha256: String
    /// Where the pack stands between the catalog and the container.
    public internal(set) var status: Status

    /// Where a pack stands, as Apple's `AssetPack.Status`: installed or not,
    /// and against the catalog, when the manager has one.
    public struct Status: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The catalog has it and it is not installed.
        public static let downloadAvailable = Status(rawValue: 1 << 0)
        /// It is installed and the catalog has another version.
        public static let updateAvailable = Status(rawValue: 1 << 1)
        /// It is installed as the catalog has it.
        public static let upToDate = Status(rawValue: 1 << 2)
        /// It is installed in another version than the catalog's.
        public static let outOfDate = Status(rawValue: 1 << 3)
        /// It is installed and the catalog no longer lists it.
        public static let obsolete = Status(rawValue: 1 << 4)
        /// A download of it is under way or was cut short (the journal has it).
        public static let downloading = Status(rawValue: 1 << 5)
        /// It is installed.
        public static let downloaded = Status(rawValue: 1 << 6)
    }

    /// Whether the pack is for `platform`: its ``platforms`` name it, or
    /// are empty — an empty list means every platform, as in Apple's
    /// manifests. Installation events and updates download only packs
    /// for `linux`.
    public func supports(_ platform: Platform) -> Bool {
        platform.engine.isIncluded(in: platforms.map(\.engine))
    }

    /// Checks that `id` is one a pack may have: 1 to 128 bytes of
    /// `A-Z a-z 0-9 . _ -`, starting with a letter or digit — the rule every
    /// pack ID in a manifest, a catalog, the index and a file name of the
    /// container follows.
    ///
    /// - Throws: `.invalidPackID` with the rule it breaks as its ``AssetPackError/reason``.
    public static func validate(id: String) throws(AssetPackError) {
        try engine { () throws(StoreError) in try PackID.validate(id) }
    }

    init(_ record: PackRecord) {
        id = record.id
        version = record.version
        downloadPolicy = DownloadPolicy(record.downloadPolicy)
        platforms = record.platforms.map(Platform.init)
        archiveSize = record.archiveSize
        memberCount = record.memberCount
        totalSize = record.totalSize
        installDate = record.installDate
        sha256 = SHA256.hex(record.sha256)
        status = .downloaded
    }
}

/// A file in an installed pack.
public struct AssetMember: Sendable, Hashable {
    /// How a member is kept in its archive.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        /// As is: reads point into the archive, descriptors are ranges of it.
        case stored
        /// Deflated: reads inflate it.
        case deflated
    }

    /// The pack that holds it.
    public let pack: String
    /// Its path in the pack.
    public let path: String
    /// Its size in bytes.
    public let size: UInt64
    /// Its size inside the archive.
    public let storedSize: UInt64
    public let method: Method
    /// The CRC-32 of its bytes.
    public let crc32: UInt32

    /// Whether it is deflated in the archive (so reads inflate it).
    public var isCompressed: Bool { method == .deflated }

    /// `path` made safe to print on a terminal or in a log: control
    /// characters escaped (C0 and DEL as `\xNN`, so ESC is `\x1b`; C1 as
    /// `\u{NN}`), and the bidirectional formatting characters and line and
    /// paragraph separators as `\u{NNNN}` (`\u{202e}`), so a name cannot
    /// move the cursor, retitle the window or show its letters reordered.
    /// Member paths cannot hold a backslash, so an escape is never confused
    /// with the name's own characters. JSON needs no such help.
    public static func printable(_ path: String) -> String {
        MemberPath.escapingControlCharacters(path)
    }

    init(_ info: MemberInfo) {
        pack = info.pack
        path = info.path
        size = info.size
        storedSize = info.storedSize
        method = Method(info.method)
        crc32 = info.crc32
    }
}

// MARK: Between the engine's vocabulary and the public one

extension AssetMember.Method {
    init(_ method: CompressionMethod) {
        self = method == .deflated ? .deflated : .stored
    }
}

extension AssetPack.DownloadPolicy {
    init(_ policy: DownloadPolicy) {
        func events(_ e: Set<InstallationEventType>) -> Set<AssetPack.InstallationEventType> {
            Set(e.map(AssetPack.InstallationEventType.init))
        }
        switch policy {
        case .essential(let e): self = .essential(events(e))
        case .prefetch(let e): self = .prefetch(events(e))
        case .onDemand: self = .onDemand
        }
    }

    /// The engine's form.
    var engine: DownloadPolicy {
        func events(_ e: Set<AssetPack.InstallationEventType>) -> Set<InstallationEventType> {
            Set(e.map(\.engine))
        }
        switch self {
        case .essential(let e): return .essential(events(e))
        case .prefetch(let e): return .prefetch(events(e))
        case .onDemand: return .onDemand
        }
    }
}

extension AssetPack.InstallationEventType {
    init(_ event: InstallationEventType) {
        switch event {
        case .firstInstallation: self = .firstInstallation
        case .subsequentUpdate: self = .subsequentUpdate
        }
    }

    var engine: InstallationEventType {
        switch self {
        case .firstInstallation: return .firstInstallation
        case .subsequentUpdate: return .subsequentUpdate
        }
    }
}

extension AssetPack.Platform {
    init(_ platform: Platform) {
        switch platform {
        case .iOS: self = .iOS
        case .macOS: self = .macOS
        case .tvOS: self = .tvOS
        case .visionOS: self = .visionOS
        case .watchOS: self = .watchOS
        case .linux: self = .linux
        }
    }

    var engine: Platform {
        switch self {
        case .iOS: return .iOS
        case .macOS: return .macOS
        case .tvOS: return .tvOS
        case .visionOS: return .visionOS
        case .watchOS: return .watchOS
        case .linux: return .linux
        }
    }
}

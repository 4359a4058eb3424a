/// What ``AssetStore/verify(options:)`` found, and with `repair`, what it did.
public struct VerificationReport: Sendable {
    /// How bad a finding is.
    public enum Severity: String, Sendable, Comparable {
        /// Unexpected but harmless (an unknown file in `staging/`).
        case warning
        /// Left behind by a crash, expected by the protocol, reclaimed by the
        /// next writer: not damage.
        case reclaimable
        /// Damage: something in the index or `packs/` that should not be.
        case error

        private var rank: Int { self == .warning ? 0 : self == .reclaimable ? 1 : 2 }
        public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
    }

    /// One problem: a stable code, its severity, and the pack and object
    /// (member path or file name) it concerns.
    public struct Finding: Sendable, Hashable {
        public let code: FindingCode
        public let pack: String?
        public let object: String?
        public let message: String
        public var severity: Severity { code.severity }
    }

    /// One repair: what was (or, in a dry run, would be) done about findings.
    public struct Repair: Sendable, Hashable {
        /// The codes it addresses.
        public let codes: [FindingCode]
        public let pack: String?
        /// What it does, for people: "quarantined packs/x.zip as quarantine/…".
        public let action: String
        /// Whether it was carried out (false in a dry run, or when it failed).
        public let done: Bool
    }

    public internal(set) var findings: [Finding] = []
    public internal(set) var repairs: [Repair] = []
    /// With repair (not a dry run): what a second verify still found.
    public internal(set) var remaining: [Finding] = []
    public internal(set) var packsChecked = 0
    public internal(set) var membersChecked = 0
    /// Bytes hashed and checksummed (with `deep`).
    public internal(set) var bytesChecked: UInt64 = 0

    /// Whether any finding is an error.
    public var hasErrors: Bool { findings.contains { $0.severity == .error } }

    mutating func add(_ code: FindingCode, pack: String?, object: String?, _ message: String) {
        findings.append(Finding(code: code, pack: pack, object: object, message: message))
    }
}

/// The stable codes of verify's findings.
public enum FindingCode: String, Sendable, Hashable, CaseIterable {
    // The index.
    case schemaMissing = "index.schema-missing"
    case indexUnfinished = "index.unfinished"
    case staleReader = "lmdb.stale-reader"
    // Packs and their archives.
    case packRecordDamaged = "pack.record-damaged"
    case archiveMissing = "pack.archive-missing"
    case archiveSize = "pack.archive-size"
    case archiveDamaged = "pack.archive-damaged"
    case archiveSHA256 = "pack.archive-sha256"
    case packRecordMismatch = "pack.record-mismatch"
    // Members.
    case memberRecordDamaged = "member.record-damaged"
    case memberOutOfBounds = "member.out-of-bounds"
    case memberRecordMismatch = "member.record-mismatch"
    case memberExtra = "member.extra"
    case memberMissing = "member.missing"
    case memberCRC = "member.crc-mismatch"
    case memberOrphan = "member.orphan"
    // The path index.
    case pathsMismatch = "paths.mismatch"
    case pathsMissing = "paths.missing"
    case pathsExtra = "paths.extra"
    // Files.
    case archiveOrphan = "archive.orphan"
    case archiveUncommitted = "archive.uncommitted"
    case stagingLeftover = "staging.leftover"
    case stagingUnknown = "staging.unknown"
    case cacheLeftover = "cache.leftover"
    case journalMissingStaging = "journal.missing-staging"
    case journalOrphanDownload = "journal.orphan-download"
    case lockOrphan = "lock.orphan"
    case lockOldLayout = "lock.old-layout"
    // The layout.
    case layoutSymlink = "layout.symlink"

    public var severity: VerificationReport.Severity {
        switch self {
        case .indexUnfinished, .staleReader, .archiveUncommitted, .stagingLeftover, .cacheLeftover,
             .journalMissingStaging, .journalOrphanDownload, .lockOrphan, .lockOldLayout:
            return .reclaimable
        case .stagingUnknown:
            return .warning
        default:
            return .error
        }
    }
}

/// What ``AssetStore/verify(options:)`` checks and does.
public struct VerificationOptions: Sendable {
    /// Also check every archive's SHA-256 and every member's CRC-32
    /// (inflating deflated ones).
    public var deep = false
    /// Only these packs (all, and the container-wide checks, when empty).
    public var packs: [String] = []
    /// Fix what can be fixed without losing installed data.
    public var repair = false
    /// With `repair`: say what would be done, do nothing.
    public var dryRun = false
    /// Called now and then with bytes (deep) or members done, and the total.
    public var progress: (@Sendable (_ done: UInt64, _ total: UInt64) -> Void)?

    public init(deep: Bool = false, packs: [String] = [], repair: Bool = false, dryRun: Bool = false,
                progress: (@Sendable (_ done: UInt64, _ total: UInt64) -> Void)? = nil) {
        self.deep = deep
        self.packs = packs
        self.repair = repair
        self.dryRun = dryRun
        self.progress = progress
    }
}

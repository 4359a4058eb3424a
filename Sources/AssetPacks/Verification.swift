import AssetStore
import AssetSystem

/// ``AssetPackManager/verify(_:)``: an fsck for the container — what it
/// checks, what it found and what repair did. docs/verify.md describes every
/// finding code and repair.
public enum Verification {
    /// What to check and do.
    public struct Options: Sendable {
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
        public var progress: (@Sendable (AssetPackProgress) -> Void)?

        public init(deep: Bool = false, packs: [String] = [], repair: Bool = false, dryRun: Bool = false,
                    progress: (@Sendable (AssetPackProgress) -> Void)? = nil) {
            self.deep = deep
            self.packs = packs
            self.repair = repair
            self.dryRun = dryRun
            self.progress = progress
        }
    }

    /// How bad a finding is.
    public enum Severity: String, Sendable, Hashable, Comparable {
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

    /// The stable codes of findings; the raw value is the code as printed.
    public enum Code: String, Sendable, Hashable, CaseIterable {
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

        /// How bad a finding with this code is. (Every public code is an
        /// engine code by its raw value; a test checks each one.)
        public var severity: Severity { FindingCode(rawValue: rawValue).map { Severity($0.severity) } ?? .error }
    }

    /// One problem: its code, and the pack and object (member path or file
    /// name) it concerns.
    public struct Finding: Sendable, Hashable {
        public let code: Code
        public let pack: String?
        public let object: String?
        public let message: String
        public var severity: Severity { code.severity }
    }

    /// One repair: what was (or, in a dry run, would be) done about findings.
    public struct Repair: Sendable, Hashable {
        /// The codes it addresses.
        public let codes: [Code]
        public let pack: String?
        /// What it does, for people: "quarantined packs/x.zip as quarantine/…".
        public let action: String
        /// Whether it was carried out (false in a dry run, or when it failed).
        public let done: Bool
    }

    /// What a verification found and did.
    public struct Report: Sendable {
        public let findings: [Finding]
        public let repairs: [Repair]
        /// With repair (not a dry run): what a second pass still found.
        public let remaining: [Finding]
        public let packsChecked: Int
        public let membersChecked: Int
        /// Bytes hashed and checksummed (with `deep`).
        public let bytesChecked: UInt64

        /// Whether any finding is an error.
        public var hasErrors: Bool { findings.contains { $0.severity == .error } }
    }
}

// MARK: From the engine's report

extension Verification.Report {
    init(_ r: VerificationReport) {
        findings = r.findings.map(Verification.Finding.init)
        repairs = r.repairs.map { Verification.Repair(codes: $0.codes.map(Verification.Code.init), pack: $0.pack, action: $0.action, done: $0.done) }
        remaining = r.remaining.map(Verification.Finding.init)
        packsChecked = r.packsChecked
        membersChecked = r.membersChecked
        bytesChecked = r.bytesChecked
    }
}

extension Verification.Finding {
    init(_ f: VerificationReport.Finding) {
        self.init(code: Verification.Code(f.code), pack: f.pack, object: f.object, message: f.message)
    }
}

extension Verification.Severity {
    init(_ s: VerificationReport.Severity) {
        switch s {
        case .warning: self = .warning
        case .reclaimable: self = .reclaimable
        case .error: self = .error
        }
    }
}

extension Verification.Code {
    init(_ code: FindingCode) {
        switch code {
        case .schemaMissing: self = .schemaMissing
        case .indexUnfinished: self = .indexUnfinished
        case .staleReader: self = .staleReader
        case .packRecordDamaged: self = .packRecordDamaged
        case .archiveMissing: self = .archiveMissing
        case .archiveSize: self = .archiveSize
        case .archiveDamaged: self = .archiveDamaged
        case .archiveSHA256: self = .archiveSHA256
        case .packRecordMismatch: self = .packRecordMismatch
        case .memberRecordDamaged: self = .memberRecordDamaged
        case .memberOutOfBounds: self = .memberOutOfBounds
        case .memberRecordMismatch: self = .memberRecordMismatch
        case .memberExtra: self = .memberExtra
        case .memberMissing: self = .memberMissing
        case .memberCRC: self = .memberCRC
        case .memberOrphan: self = .memberOrphan
        case .pathsMismatch: self = .pathsMismatch
        case .pathsMissing: self = .pathsMissing
        case .pathsExtra: self = .pathsExtra
        case .archiveOrphan: self = .archiveOrphan
        case .archiveUncommitted: self = .archiveUncommitted
        case .stagingLeftover: self = .stagingLeftover
        case .stagingUnknown: self = .stagingUnknown
        case .cacheLeftover: self = .cacheLeftover
        case .journalMissingStaging: self = .journalMissingStaging
        case .journalOrphanDownload: self = .journalOrphanDownload
        case .lockOrphan: self = .lockOrphan
        case .lockOldLayout: self = .lockOldLayout
        case .layoutSymlink: self = .layoutSymlink
        }
    }
}

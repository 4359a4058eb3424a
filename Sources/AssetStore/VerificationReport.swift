/// What ``AssetStore/verify(options:)`` found.
public struct VerificationReport: Sendable {
    /// How bad a finding is.
    public enum Severity: String, Sendable, Comparable {
        /// Left behind by a crash, expected by the protocol, reclaimed by the
        /// next writer: not damage.
        case reclaimable
        /// Damage: something in the index or `packs/` that should not be.
        case error

        public static func < (a: Severity, b: Severity) -> Bool { a == .reclaimable && b == .error }
    }

    /// One problem, with a stable code (such as `member.crc-mismatch`).
    public struct Finding: Sendable, Hashable {
        public let code: String
        public let severity: Severity
        /// The pack it concerns, if any.
        public let pack: String?
        /// The member path or file name it concerns, if any.
        public let object: String?
        public let message: String

        public init(code: String, severity: Severity, pack: String?, object: String?, message: String) {
            self.code = code
            self.severity = severity
            self.pack = pack
            self.object = object
            self.message = message
        }
    }

    public internal(set) var findings: [Finding] = []
    public internal(set) var packsChecked = 0
    public internal(set) var membersChecked = 0
    /// Bytes read to check CRCs and hashes (with `deep`).
    public internal(set) var bytesChecked: UInt64 = 0

    /// Whether any finding is an error.
    public var hasErrors: Bool { findings.contains { $0.severity == .error } }

    mutating func add(_ code: String, _ severity: Severity = .error, pack: String?, object: String?, _ message: String) {
        findings.append(Finding(code: code, severity: severity, pack: pack, object: object, message: message))
    }
}

/// What ``AssetStore/verify(options:)`` checks.
public struct VerificationOptions: Sendable {
    /// Also check every member's CRC-32 (inflating deflated ones) and each
    /// archive's SHA-256.
    public var deep = false
    /// Only these packs (all when empty).
    public var packs: [String] = []
    public init(deep: Bool = false, packs: [String] = []) {
        self.deep = deep
        self.packs = packs
    }
}

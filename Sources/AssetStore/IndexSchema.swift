/// The index's layout: named databases, key formats and the schema version.
///
/// | database  | key                     | value                               |
/// |-----------|-------------------------|-------------------------------------|
/// | `meta`    | `schema`                | schema version, u32 LE              |
/// | `meta`    | `limits`                | ``PackLimits`` (format 1, 4 × u64 LE), when set |
/// | `packs`   | pack ID                 | ``PackRecord``                      |
/// | `members` | pack ID, `\0`, path     | ``MemberRecord`` (48 bytes)         |
/// | `paths`   | path                    | pack IDs holding it, `\0`-separated, sorted |
/// | `journal` | pack ID                 | download journal entry              |
///
/// Keys sort byte-wise, so a pack's members are contiguous and a directory
/// prefix (`pack\0dir/`) is a range scan.
enum IndexSchema {
    /// The version this build writes and reads.
    static let version: UInt32 = 1

    static let meta = "meta"
    static let packs = "packs"
    static let members = "members"
    static let paths = "paths"
    static let journal = "journal"

    static let schemaKey = Array("schema".utf8)
    static let limitsKey = Array("limits".utf8)

    /// The longest key LMDB stores (its default `MDB_MAXKEYSIZE`).
    static let maximumKeyLength = 511

    /// Why a member path cannot be indexed under pack `pack`, or `nil`.
    static func keyProblem(pack: String, path: String) -> StoreError.PathProblem? {
        let length = pack.utf8.count + 1 + path.utf8.count
        guard length > maximumKeyLength else { return nil }
        return .tooLongToIndex(maximum: maximumKeyLength - 1 - pack.utf8.count)
    }

    /// `packID \0 path` as bytes.
    static func memberKey(pack: String, path: String) -> [UInt8] {
        var key = Array(pack.utf8)
        key.append(0)
        key.append(contentsOf: path.utf8)
        return key
    }

    /// `packID \0`: the prefix of every member key of a pack.
    static func memberPrefix(pack: String) -> [UInt8] {
        var key = Array(pack.utf8)
        key.append(0)
        return key
    }

    /// The archive file name of a pack version, inside `packs/`.
    static func archiveName(pack: String, archiveKey: UInt64) -> String {
        pack + "." + hex(archiveKey) + ".zip"
    }

    /// Parses an archive file name back into its pack ID and key; `nil` if it
    /// is not of the form `ID.<16 hex digits>.zip`.
    static func parseArchiveName(_ name: String) -> (pack: String, archiveKey: UInt64)? {
        guard name.hasSuffix(".zip") else { return nil }
        let stem = name.dropLast(4)
        guard let dot = stem.lastIndex(of: "."), stem.distance(from: dot, to: stem.endIndex) == 17,
              let key = UInt64(stem[stem.index(after: dot)...], radix: 16) else { return nil }
        return (String(stem[..<dot]), key)
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

public import AssetArchive
public import AssetIndex
public import AssetSystem

/// Every error the storage engine reports. Each case names the pack, member
/// or path it concerns, and every reason is a value that can be matched;
/// `description` is one line a person can act on.
///
/// The public module turns these into `AssetPackError`, which adds the
/// errors of manifests, downloads and the descriptor daemon and gives every
/// case a stable number.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No pack with this ID is installed.
    case assetPackNotFound(String)
    /// No member at this path (in this pack, when one was named).
    case fileNotFound(path: String, pack: String?)
    /// A path-only lookup matched members of several packs.
    case ambiguousPath(String, packs: [String])
    /// A pack ID that no pack may have, or that disagrees with the pack file.
    case invalidPackID(String, reason: PackIDProblem)
    /// A member path that the index cannot hold.
    case invalidPath(String, reason: PathProblem)
    /// The archive is malformed or its data is damaged.
    case archive(ArchiveError)
    /// The index failed.
    case index(LMDBError)
    /// A system call failed.
    case system(Errno)
    /// The recorded manifest inside the pack is unreadable.
    case invalidRecordedManifest(archive: String, reason: String)
    /// A lock could not be taken before the wait ended: which lock, how
    /// long, who held it.
    case lockTimeout(LockTimeout)
    /// The source given to install is not a regular file.
    case notAFile(String)
    /// There is no container at `path` (and the store was told not to make
    /// one): `missing` is the first part of its layout that is not there.
    case noContainer(path: String, missing: String)
    /// The container's index has a schema this version cannot read.
    case unsupportedSchema(found: UInt32, supported: UInt32, path: String)
    /// A stored record is damaged.
    case corruptRecord(pack: String, member: String?, reason: RecordProblem)
    /// The archive recorded for a pack is missing or changed on disk.
    case archiveMissing(pack: String, path: String)
    /// A pack file (at install or inspection), or an installed archive's
    /// member (at a read), is over the container's ``PackLimits``:
    /// `archive` is the file, `pack` the installed pack a read concerns,
    /// `member` the member (`nil` when the pack as a whole is over).
    case limitExceeded(archive: String, pack: String?, member: String?, problem: LimitProblem)
    /// A symlink is where a file or directory of the container's layout
    /// belongs (`path`); it is never followed.
    case symlinkInContainer(path: String)

    /// Why a pack ID is refused.
    public indirect enum PackIDProblem: Sendable, Equatable {
        /// The ID is the empty string.
        case empty
        /// The ID is longer than ``PackID/maximumLength`` bytes.
        case tooLong
        /// The ID does not start with an ASCII letter or digit.
        case badFirstCharacter
        /// The ID has a character outside `A-Z a-z 0-9 . _ -`.
        case badCharacter
        /// The pack file records another ID.
        case differsFromRecorded(String)
        /// The ID was taken from the file name (the pack records none) and
        /// has this problem.
        case derivedFromFileName(PackIDProblem)
    }

    /// Why a member path is refused.
    public enum PathProblem: Sendable, Equatable {
        /// The pack ID and the path together exceed the index's key size;
        /// `maximum` is the longest path in bytes that this pack ID allows.
        case tooLongToIndex(maximum: Int)
    }

    /// Which of the ``PackLimits`` a member or pack exceeds, with the values.
    public enum LimitProblem: Sendable, Equatable {
        /// A deflated member declares `size` bytes, more than `maximum`.
        case memberTooLarge(size: UInt64, maximum: UInt64)
        /// A deflated member declares `size` bytes from `storedSize` bytes of
        /// deflate: more than `maximum` to 1.
        case compressionRatioTooHigh(size: UInt64, storedSize: UInt64, maximum: UInt64)
        /// The pack's deflated members declare `size` bytes in all, more
        /// than `maximum`.
        case packTooLarge(size: UInt64, maximum: UInt64)
    }

    /// What is wrong with a stored record.
    public enum RecordProblem: Sendable, Equatable {
        /// The record's bytes cannot be decoded (`detail` says how).
        case undecodable(String)
        /// The member's data lies outside its archive.
        case dataOutsideArchive
        /// The member record's sizes or method are impossible.
        case impossibleSizes
    }

    public var description: String {
        switch self {
        case .assetPackNotFound(let id):
            return "asset pack '\(id)' is not installed"
        case .fileNotFound(let path, let pack?):
            return "no file '\(path)' in asset pack '\(pack)'"
        case .fileNotFound(let path, nil):
            return "no file '\(path)' in any installed asset pack"
        case .ambiguousPath(let path, let packs):
            return "'\(path)' is in several asset packs (\(packs.map { "'\($0)'" }.joined(separator: ", "))); name one"
        case .invalidPackID(let id, let reason):
            return "invalid asset pack ID '\(id)': \(reason.text)"
        case .invalidPath(let path, .tooLongToIndex(let maximum)):
            return "invalid path '\(path)': \(path.utf8.count) bytes is too long to index (at most \(maximum) bytes with this pack ID)"
        case .archive(let e):
            return e.description
        case .index(let e):
            return "index: \(e)"
        case .system(let e):
            return e.description
        case .invalidRecordedManifest(let archive, let reason):
            return "\(archive): recorded manifest is invalid: \(reason)"
        case .lockTimeout(let t):
            return t.description
        case .notAFile(let path):
            return "\(path): not a regular file"
        case .noContainer(let path, let missing):
            return "no asset pack container at \(path) (\(missing) is missing)"
        case .unsupportedSchema(let found, let supported, let path):
            return "\(path): index schema version \(found) is not supported (this build reads \(supported))"
        case .corruptRecord(let pack, let member?, let reason):
            return "index record of '\(member)' in asset pack '\(pack)' is damaged: \(reason.text)"
        case .corruptRecord(let pack, nil, let reason):
            return "index record of asset pack '\(pack)' is damaged: \(reason.text)"
        case .archiveMissing(let pack, let path):
            return "archive of asset pack '\(pack)' is missing: \(path)"
        case .limitExceeded(let archive, _, let member?, let problem):
            return "\(archive): member '\(member)' \(problem.text)"
        case .limitExceeded(let archive, _, nil, let problem):
            return "\(archive): \(problem.text)"
        case .symlinkInContainer(let path):
            return "\(path) is a symbolic link, which the container does not follow (assetpack verify --repair moves it to quarantine)"
        }
    }
}

extension StoreError {
    /// The store's error for an index error: `.lockTimeout` for a lock of
    /// the index's own that was held too long (the map-length lock), else
    /// `.index`.
    static func fromIndex(_ error: LMDBError) -> StoreError {
        if let t = error.lockTimeout { return .lockTimeout(t) }
        return .index(error)
    }

    /// The store's error for a lock not taken: `.lockTimeout` naming the
    /// lock as `what` says, `.symlinkInContainer` for a symlink (`ELOOP`
    /// under `O_NOFOLLOW`), `.system` naming `path` for the rest.
    static func fromLock(_ error: LockError, what: String, path: String) -> StoreError {
        switch error {
        case .timedOut(let t): return .lockTimeout(t.named(what))
        case .system(let e): return LayoutDirectory.storeError(e, path: path)
        }
    }

    /// What to report when no pack `id` is installed: `.invalidPackID` when
    /// no pack could have that ID, else `.assetPackNotFound`. Only error
    /// paths call it, so lookups that succeed never validate the ID.
    public static func notInstalled(_ id: String) -> StoreError {
        do { try PackID.validate(id) } catch { return error }
        return .assetPackNotFound(id)
    }
}

extension StoreError.PackIDProblem {
    /// The reason as a clause.
    public var text: String {
        switch self {
        case .empty: return "it is empty"
        case .tooLong: return "longer than \(PackID.maximumLength) bytes"
        case .badFirstCharacter: return "must start with a letter or digit"
        case .badCharacter: return "only letters, digits, '.', '_' and '-' are allowed"
        case .differsFromRecorded(let recorded): return "the pack file records the ID '\(recorded)'"
        case .derivedFromFileName(let problem): return "\(problem.text) (the ID comes from the file name; give one with --id)"
        }
    }
}

extension StoreError.RecordProblem {
    /// The problem as a clause.
    public var text: String {
        switch self {
        case .undecodable(let detail): return detail
        case .dataOutsideArchive: return "data lies outside the archive"
        case .impossibleSizes: return "member record has the wrong size or method"
        }
    }
}

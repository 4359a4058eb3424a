public import AssetArchive
public import AssetIndex
public import AssetSystem

/// Every error the store and the public API report. Each case names the pack,
/// member or path it concerns; `description` is one line a person can act on.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// No pack with this ID is installed.
    case assetPackNotFound(String)
    /// No member at this path (in this pack, when one was named).
    case fileNotFound(path: String, pack: String?)
    /// A path-only lookup matched members of several packs.
    case ambiguousPath(String, packs: [String])
    /// A pack ID that is empty, too long, or has characters outside `A-Z a-z 0-9 . _ -`.
    case invalidPackID(String, reason: String)
    /// A member path given to a lookup that no pack could hold.
    case invalidPath(String, reason: String)
    /// The archive is malformed or its data is damaged.
    case archive(ArchiveError)
    /// The index failed.
    case index(LMDBError)
    /// A system call failed.
    case system(Errno)
    /// The recorded manifest inside the pack is unreadable.
    case invalidRecordedManifest(archive: String, reason: String)
    /// A manifest (or template) is invalid: which file, which field, why.
    case invalidManifest(path: String, field: String, reason: String)
    /// A lock could not be taken before the deadline.
    case lockTimeout(path: String, seconds: Double)
    /// The source given to install is not a regular file.
    case notAFile(String)
    /// The container's index has a schema this version cannot read.
    case unsupportedSchema(found: UInt32, supported: UInt32, path: String)
    /// A stored record is damaged.
    case corruptRecord(pack: String, member: String?, reason: String)
    /// The archive recorded for a pack is missing or changed on disk.
    case archiveMissing(pack: String, path: String)
    /// The descriptor daemon at `socket` could not be reached, or the
    /// connection ended or timed out before it answered (`ECONNREFUSED` or
    /// `ENOENT` when no daemon runs, `EAGAIN` on a timeout, `EPROTO` for a
    /// reply that breaks the protocol).
    case daemonUnavailable(socket: String, Errno)
    /// The descriptor daemon at `socket` refused the request; `message` is
    /// its explanation.
    case daemonRefused(socket: String, reason: DaemonRefusal, message: String)

    /// Why the descriptor daemon refused a request (its wire status code).
    public enum DaemonRefusal: UInt16, Sendable {
        /// The client's user and group are not allowed (checked with `SO_PEERCRED`).
        case peerNotAllowed = 64
        /// The request was not well formed, or did not arrive whole in time.
        case malformedRequest = 65
        /// The request was longer than the daemon accepts.
        case requestTooLarge = 66
        /// The client speaks a protocol version the daemon does not.
        case unsupportedVersion = 67
        /// The daemon has as many connections as it serves at once.
        case busy = 68
        /// The request failed in a way that has no case of its own here.
        case failed = 69
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
            return "invalid asset pack ID '\(id)': \(reason)"
        case .invalidPath(let path, let reason):
            return "invalid path '\(path)': \(reason)"
        case .archive(let e):
            return e.description
        case .index(let e):
            return "index: \(e)"
        case .system(let e):
            return e.description
        case .invalidRecordedManifest(let archive, let reason):
            return "\(archive): recorded manifest is invalid: \(reason)"
        case .invalidManifest(let path, let field, let reason):
            return field.isEmpty ? "\(path): \(reason)" : "\(path): \(field): \(reason)"
        case .lockTimeout(let path, let seconds):
            return "timed out after \(seconds) s waiting for the lock \(path)"
        case .notAFile(let path):
            return "\(path): not a regular file"
        case .unsupportedSchema(let found, let supported, let path):
            return "\(path): index schema version \(found) is not supported (this build reads \(supported))"
        case .corruptRecord(let pack, let member?, let reason):
            return "index record of '\(member)' in asset pack '\(pack)' is damaged: \(reason)"
        case .corruptRecord(let pack, nil, let reason):
            return "index record of asset pack '\(pack)' is damaged: \(reason)"
        case .archiveMissing(let pack, let path):
            return "archive of asset pack '\(pack)' is missing: \(path)"
        case .daemonUnavailable(let socket, let e):
            return "descriptor daemon at \(socket) is unavailable: \(e.operation.isEmpty ? e.message : "\(e.operation): \(e.message)")"
        case .daemonRefused(let socket, _, let message):
            return "descriptor daemon at \(socket) refused the request: \(message)"
        }
    }
}

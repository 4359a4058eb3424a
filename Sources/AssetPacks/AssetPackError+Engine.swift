import AssetArchive
import AssetIndex
import AssetStore
import AssetSystem

// How the engine's errors become the public one. Every switch here is
// exhaustive, so a case added below cannot reach a user without a code.

extension AssetPackError {
    /// The public form of an engine error.
    init(_ error: StoreError) {
        let message = error.description
        switch error {
        case .assetPackNotFound(let id):
            self.init(.assetPackNotFound, pack: id, message: message)
        case .fileNotFound(let path, let pack):
            self.init(.fileNotFound, pack: pack, member: path, message: message)
        case .ambiguousPath(let path, let packs):
            self.init(.ambiguousPath, member: path, packs: packs, message: message)
        case .invalidPackID(let id, let problem):
            self.init(.invalidPackID, reason: Reason(problem), pack: id, message: message)
        case .invalidPath(let path, .tooLongToIndex):
            self.init(.invalidPath, reason: .pathTooLongToIndex, member: path, message: message)
        case .archive(let e):
            self.init(e)
        case .index(let e):
            self.init(.index, path: e.path, systemError: e.code, message: message)
        case .system(let e):
            self.init(e, message: message)
        case .invalidRecordedManifest(let archive, _):
            self.init(.invalidRecordedManifest, path: archive, message: message)
        case .lockTimeout(let t):
            self.init(.lockTimeout, path: t.path, message: message)
        case .notAFile(let path):
            self.init(.notAFile, path: path, message: message)
        case .noContainer(let path, _):
            self.init(.noContainer, path: path, message: message)
        case .unsupportedSchema(_, _, let path):
            self.init(.unsupportedSchema, path: path, message: message)
        case .corruptRecord(let pack, let member, let problem):
            let reason: Reason
            switch problem {
            case .undecodable: reason = .undecodableRecord
            case .dataOutsideArchive: reason = .dataOutsideArchive
            case .impossibleSizes: reason = .impossibleSizes
            }
            self.init(.corruptRecord, reason: reason, pack: pack, member: member, message: message)
        case .archiveMissing(let pack, let path):
            self.init(.archiveMissing, pack: pack, path: path, message: message)
        case .limitExceeded(let archive, let pack, let member, let problem):
            let reason: Reason
            switch problem {
            case .memberTooLarge: reason = .memberTooLarge
            case .compressionRatioTooHigh: reason = .compressionRatioTooHigh
            case .packTooLarge: reason = .packTooLarge
            }
            self.init(.limitExceeded, reason: reason, pack: pack, member: member, path: archive, message: message)
        case .symlinkInContainer(let path):
            self.init(.symlinkInContainer, path: path, message: message)
        }
    }

    /// A failed system call.
    init(_ e: Errno, message: String? = nil) {
        self.init(.system, path: e.path, systemError: e.rawValue, message: message ?? e.description)
    }

    /// The public form of an archive error: `.badArchive` with the reason,
    /// or `.system` when the archive could not be read at all.
    init(_ error: ArchiveError) {
        let message = error.description
        let reason: Reason
        var member: String?
        let archive: String
        switch error {
        case .io(let a, let e):
            self.init(.system, path: a, systemError: e.rawValue, message: message)
            return
        case .notAnArchive(let a): archive = a; reason = .notAnArchive
        case .truncated(let a): archive = a; reason = .truncated
        case .unsafePath(let a, let p, _): archive = a; member = p; reason = .unsafeMemberPath
        case .nonRegularEntry(let a, let p, _): archive = a; member = p; reason = .unsupportedEntryType
        case .duplicateMember(let a, let p): archive = a; member = p; reason = .duplicateMember
        case .caseCollision(let a, let p, _): archive = a; member = p; reason = .caseCollision
        case .fileDirectoryCollision(let a, _, let p): archive = a; member = p; reason = .fileDirectoryCollision
        case .encrypted(let a, let p): archive = a; member = p; reason = .encryptedMember
        case .unsupportedMethod(let a, let p, _): archive = a; member = p; reason = .unsupportedMethod
        case .headerMismatch(let a, let p, _): archive = a; member = p; reason = .headerMismatch
        case .malformedEntry(let a, let p, _): archive = a; member = p; reason = .malformedEntry
        case .overlap(let a, let p, _): archive = a; member = p; reason = .overlappingMembers
        case .outOfBounds(let a, let p, _): archive = a; member = p; reason = .outOfBounds
        case .inconsistentDirectory(let a, _): archive = a; reason = .inconsistentDirectory
        case .crcMismatch(let a, let p, _, _): archive = a; member = p; reason = .crcMismatch
        case .sizeMismatch(let a, let p, _, _): archive = a; member = p; reason = .sizeMismatch
        case .corruptData(let a, let p, _): archive = a; member = p; reason = .corruptData
        case .unreadableSource(let a, let p, _, _): archive = a; member = p; reason = .unreadableSource
        case .invalidComment(let a, _): archive = a; reason = .invalidComment
        }
        self.init(.badArchive, reason: reason, member: member, path: archive, message: message)
    }
}

extension AssetPackError.Reason {
    init(_ problem: StoreError.PackIDProblem) {
        switch problem {
        case .empty: self = .emptyID
        case .tooLong: self = .idTooLong
        case .badFirstCharacter: self = .badFirstCharacter
        case .badCharacter: self = .badCharacter
        case .differsFromRecorded: self = .differsFromRecorded
        case .derivedFromFileName(let inner): self.init(inner)
        }
    }
}

/// Runs an engine call and reports its error in public terms.
@inline(__always)
func engine<T: ~Copyable>(_ body: () throws(StoreError) -> T) throws(AssetPackError) -> T {
    do { return try body() } catch { throw AssetPackError(error) }
}

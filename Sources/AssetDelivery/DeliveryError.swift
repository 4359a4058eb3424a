public import AssetStore
public import AssetSystem

/// Every error of catalogs, keys, signatures, trust state and publishing.
/// Each case names the file or URL it concerns (`path`) and carries a
/// matchable reason; `description` is one line a person can act on.
///
/// The public module turns these into `AssetPackError` with stable codes.
public enum DeliveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The catalog is not one: bad JSON, a missing, ill-typed or out-of-range
    /// field (`field` names it: `packs[2].sha256`), `detail` says what.
    case invalidCatalog(path: String, field: String?, problem: CatalogProblem, detail: String)
    /// The catalog's `format` is not one this version reads.
    case unsupportedCatalogFormat(path: String, format: String)
    /// A key is required and the catalog has no signature.
    case catalogUnsigned(path: String)
    /// The catalog is signed, but not by the configured key: `expected` is
    /// its key ID, `found` the signature's.
    case catalogKeyMismatch(path: String, expected: String, found: [String])
    /// The signature file is malformed, or its signature does not verify
    /// over the catalog's bytes (the catalog or the signature was altered).
    case catalogSignatureInvalid(path: String, problem: SignatureProblem)
    /// The catalog is older than one already accepted from this source and
    /// key, or has the same sequence number with other bytes.
    case catalogRollback(path: String, accepted: UInt64, offered: UInt64, problem: RollbackProblem)
    /// The catalog's `expires` time has passed.
    case catalogExpired(path: String, expires: CatalogTime, now: CatalogTime)
    /// The catalog is of another channel than the one asked for (`found`),
    /// or names none (`found` `nil`): the catalog at `path` is not the one
    /// the client asked for, whoever signed it.
    case catalogChannelMismatch(path: String, expected: String, found: String?)
    /// A key file (or key text) is malformed.
    case invalidKey(path: String, problem: KeyProblem, detail: String)
    /// The persisted trust state is damaged; the verifier refuses to guess.
    case invalidTrustState(path: String, detail: String)
    /// `publish` refused: `pack` is the pack (ID or file) it concerns.
    case publishRefused(path: String, pack: String?, problem: PublishProblem, detail: String)
    /// The download of `pack` from `url` failed for good (the partial file
    /// stays for a later resume after `retriesExhausted` and `transport`;
    /// it is discarded otherwise). `detail` says what happened.
    case downloadFailed(url: String, pack: String, problem: DownloadProblem, detail: String)
    /// The catalog at `url` could not be fetched and no cached copy
    /// answers for it (`problem` says why; `detail` has the transport's words).
    case catalogUnavailable(url: String, problem: DownloadProblem, detail: String)
    /// A pack's piece map (``PieceMap``, at `url`) is unusable: it does not
    /// parse, contradicts itself, or does not describe the catalog entry's
    /// file. `pack` is the pack it concerns, when known; a client falls back
    /// to the full download.
    case badPieceMap(url: String, pack: String?, problem: PieceMapProblem, detail: String)
    /// The CA file given (`path`) cannot be used: not a regular file, too
    /// large, or unreadable. Nothing was fetched.
    case caFileRefused(path: String, problem: CAFileProblem)
    /// An error of the storage engine (pack validation, locks).
    case store(StoreError)
    /// A system call failed.
    case system(Errno)

    /// What is wrong with a catalog.
    public enum CatalogProblem: Sendable, Equatable {
        /// Not strict JSON (`detail` has the line and column).
        case notJSON
        /// A required field is absent.
        case missingField
        /// A field has the wrong JSON type.
        case wrongType
        /// `sequence` is not a whole number from 0 to 2^53 − 1.
        case badSequence
        /// A `sha256` is not 64 lowercase hex digits.
        case badSHA256
        /// A `size` is not a whole number from 0 to 2^53 − 1.
        case badSize
        /// A `version` is not a whole number from 1 to 2^53 − 1.
        case badVersion
        /// Two entries have one ID.
        case duplicatePackID
        /// An entry's ID breaks the pack-ID rules.
        case invalidPackID
        /// A URL is neither a relative path inside the catalog's directory
        /// nor `http://` / `https://`.
        case badURL
        /// A time is not RFC 3339 UTC (`2026-12-01T09:30:00Z`).
        case badTimestamp
        /// A download policy, event type or platform is not one of the
        /// manifest vocabulary's.
        case badValue
        /// `channel` breaks the channel-name rules.
        case badChannel
    }

    /// What is wrong with a signature.
    public enum SignatureProblem: Sendable, Equatable {
        /// The signature file is not lines of `ed25519 <key ID> <base64>`.
        case malformed
        /// A signature by the key does not verify over the catalog's bytes.
        case mismatch
    }

    /// How an offered catalog goes back.
    public enum RollbackProblem: Sendable, Equatable {
        /// Its sequence number is lower than the accepted one.
        case olderSequence
        /// Its sequence number is the accepted one, its bytes are not.
        case sequenceReused
    }

    /// What is wrong with a key.
    public enum KeyProblem: Sendable, Equatable {
        /// Not a PKCS#8 PEM Ed25519 private key.
        case malformedPrivateKey
        /// Not `ed25519:` and the base64 of 32 bytes.
        case malformedPublicKey
    }

    /// Why a download failed.
    public enum DownloadProblem: Sendable, Equatable {
        /// The server answered 404 or 410.
        case notFound(status: Int)
        /// The server answered another status that retrying does not mend
        /// (403, other 4xx).
        case refused(status: Int)
        /// The file is not the catalog's size: `received` bytes came (or
        /// were about to: more than `expected`).
        case sizeMismatch(expected: UInt64, received: UInt64)
        /// The file's SHA-256 is not the catalog's.
        case checksumMismatch(expected: String, found: String)
        /// Transient failures went on through `attempts` attempts.
        case retriesExhausted(attempts: Int)
        /// A failure retrying does not mend: TLS, a bad URL, too many redirects.
        case transport
        /// Cancelled by a request (``DownloadControl``); the partial file is gone.
        case cancelled
        /// A deadline ran out: the transfer was slower than the minimum
        /// speed for its time, or the download outlasted its total
        /// deadline. Not retried; the partial file stays for a later resume.
        case timedOut(Deadline)
        /// The file cannot fit, refused before a byte of it was written:
        /// its `size` is more than `available`, which ``Room`` says is what.
        case noRoom(size: UInt64, available: UInt64, room: Room)
    }

    /// What a download's file must fit in.
    public enum Room: Sendable, Equatable {
        /// The free space of the file system of `staging/` (what a partial
        /// file to resume holds counted as written).
        case freeSpace(path: String)
        /// The largest file the process may write (`RLIMIT_FSIZE`).
        case fileSizeLimit
    }

    /// A deadline of a transfer.
    public enum Deadline: Sendable, Equatable {
        /// Less than `bytesPerSecond` bytes a second for `seconds` seconds
        /// (libcurl's low-speed limit).
        case minimumSpeed(bytesPerSecond: Int, seconds: Int)
        /// The whole download (or catalog fetch), all its requests and
        /// retries, took longer than `seconds`.
        case total(seconds: Double)

        /// What ran out, for messages.
        public var summary: String {
            switch self {
            case .minimumSpeed(let rate, let seconds):
                return "timed out: less than \(rate) bytes a second for \(seconds) s (the minimum-speed deadline)"
            case .total(let seconds):
                return "timed out: still running after \(Self.seconds(seconds)) (the total deadline)"
            }
        }

        /// `90 s`, `1.5 s`.
        static func seconds(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? "\(Int64(value)) s" : "\(value) s"
        }
    }

    /// What is wrong with a CA file.
    public enum CAFileProblem: Sendable, Equatable {
        /// It is not a regular file: `type` says what it is (`a FIFO`).
        case notRegularFile(type: String)
        /// It is longer than the largest CA file read.
        case tooLarge(size: UInt64, maximum: UInt64)
        /// It cannot be opened or read.
        case unreadable(Errno)
    }

    /// What is wrong with a piece map.
    public enum PieceMapProblem: Sendable, Equatable {
        /// Not strict JSON (`detail` has the line and column).
        case notJSON
        /// Its `format` is not one this version reads.
        case unsupportedFormat
        /// A required field is absent.
        case missingField
        /// A field has the wrong JSON type.
        case wrongType
        /// A field's value is out of range: not a whole number from 0 to
        /// 2^53 − 1, a `crc32` over 2^32 − 1, a `method` other than 0 or 8,
        /// a `sha256` not 64 lowercase hex digits, an unusable URL or path.
        case badValue
        /// Its `pack` is not the catalog entry's ID.
        case packMismatch
        /// Its `version` is not the catalog entry's.
        case versionMismatch
        /// Its `size` is not the catalog entry's.
        case sizeMismatch
        /// Its `sha256` is not the catalog entry's.
        case sha256Mismatch
        /// Members are not sorted by `offset`.
        case notSorted
        /// A member's data overlaps the previous member's.
        case overlapping
        /// A member's data reaches past the end of the file.
        case outsideFile
        /// The glue's size is not the file's size less the members' sizes.
        case glueSizeMismatch
        /// More members than ``PieceMap/maximumMembers``.
        case tooManyMembers
        /// Longer than ``PieceMap/maximumLength`` bytes (refused before reading).
        case tooLarge
        /// The bytes fetched are not the size or SHA-256 their reference gives.
        case referenceMismatch
    }

    /// Why a publish is refused.
    public enum PublishProblem: Sendable, Equatable {
        /// The pack's version is lower than the catalog's.
        case versionBackwards
        /// The pack's version is the catalog's, its content is not.
        case versionReused
        /// Two packs of this publish have one ID.
        case duplicatePackID
        /// The directory's catalog is signed by another key than the one given.
        case signedByOtherKey
        /// The directory's catalog is signed and no key was given.
        case signatureRequired
        /// A pack changed while it was copied.
        case packChanged
        /// The base URL or expiry given is unusable.
        case badArgument
        /// The channel given is not the directory's catalog's.
        case channelChanged
    }

    public var description: String {
        switch self {
        case .invalidCatalog(let path, let field, _, let detail):
            return "\(path): invalid catalog: " + (field.map { "\($0): " } ?? "") + detail
        case .unsupportedCatalogFormat(let path, let format):
            return "\(path): catalog format \(format) is not supported (this version reads format \(Catalog.format))"
        case .catalogUnsigned(let path):
            return "\(path): the catalog is not signed, and a signature by the configured key is required"
        case .catalogKeyMismatch(let path, let expected, let found):
            return "\(path): the catalog is signed by another key (\(found.joined(separator: ", "))), not by the configured key \(expected)"
        case .catalogSignatureInvalid(let path, .malformed):
            return "\(path): the signature file is malformed (expected lines of 'ed25519 <key ID> <base64 signature>')"
        case .catalogSignatureInvalid(let path, .mismatch):
            return "\(path): the signature does not verify: the catalog or its signature was altered"
        case .catalogRollback(let path, let accepted, let offered, .olderSequence):
            return "\(path): catalog sequence \(offered) is older than the accepted \(accepted): refused as a rollback"
        case .catalogRollback(let path, let accepted, _, .sequenceReused):
            return "\(path): catalog sequence \(accepted) was already accepted with other contents: refused"
        case .catalogExpired(let path, let expires, let now):
            return "\(path): the catalog expired at \(expires) (now \(now))"
        case .catalogChannelMismatch(let path, let expected, let found?):
            return "\(path): the catalog is of channel '\(found)', not the '\(expected)' asked for: refused"
        case .catalogChannelMismatch(let path, let expected, nil):
            return "\(path): the catalog names no channel, and channel '\(expected)' was asked for: refused (publish it again with this version)"
        case .invalidKey(let path, _, let detail):
            return "\(path): \(detail)"
        case .invalidTrustState(let path, let detail):
            return "\(path): damaged trust state: \(detail)"
        case .publishRefused(let path, let pack, _, let detail):
            return "publish to \(path) refused: " + (pack.map { "\($0): " } ?? "") + detail
        case .downloadFailed(let url, let pack, let problem, let detail):
            return "download of '\(pack)' from \(url) failed: " + problem.summary + (detail.isEmpty ? "" : " (\(detail))")
        case .catalogUnavailable(let url, let problem, let detail):
            return "catalog \(url) is unavailable: " + problem.summary + (detail.isEmpty ? "" : " (\(detail))")
        case .badPieceMap(let url, let pack, _, let detail):
            return "\(url): unusable piece map" + (pack.map { " of '\($0)'" } ?? "") + ": " + detail
        case .caFileRefused(let path, .notRegularFile(let type)):
            return "CA file \(path) is \(type), not a regular file: refused"
        case .caFileRefused(let path, .tooLarge(let size, let maximum)):
            return "CA file \(path) is \(size) bytes, more than the \(maximum) read: refused"
        case .caFileRefused(let path, .unreadable(let error)):
            return "CA file \(path) cannot be read" + (error.operation.isEmpty ? "" : " (\(error.operation))") + ": \(error.message)"
        case .store(let e):
            return e.description
        case .system(let e):
            return e.description
        }
    }
}

extension DeliveryError.DownloadProblem {
    var summary: String {
        switch self {
        case .notFound(let status): return "not found (HTTP \(status))"
        case .refused(let status): return "refused (HTTP \(status))"
        case .sizeMismatch(let expected, let received):
            return received > expected ? "more than the catalog's \(expected) bytes arrived"
                : "\(received) bytes arrived, the catalog says \(expected)"
        case .checksumMismatch(let expected, let found): return "SHA-256 \(found) is not the catalog's \(expected)"
        case .retriesExhausted(let attempts): return "gave up after \(attempts) attempts"
        case .transport: return "the transfer failed"
        case .cancelled: return "cancelled"
        case .timedOut(let deadline): return deadline.summary
        case .noRoom(let size, let available, .freeSpace(let path)):
            return "its \(size) bytes do not fit: \(available) bytes are free on the file system of \(path)"
        case .noRoom(let size, let available, .fileSizeLimit):
            return "its \(size) bytes do not fit: this process may write files of at most \(available) bytes (RLIMIT_FSIZE)"
        }
    }
}

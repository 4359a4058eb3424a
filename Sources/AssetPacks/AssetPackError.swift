public import Foundation
import AssetSystem
import AssetStore

/// Every error AssetPacks reports.
///
/// An error has a ``code`` — what went wrong, one stable number per case,
/// the same table the descriptor daemon sends on the wire and the C library
/// returns (negated) — and a ``reason`` that refines it where a code has
/// several causes, also with a stable number (as SQLite's primary and
/// extended result codes). Both are enums to match on:
///
/// ```swift
/// do {
///     let level = try manager.contents(at: "Levels/1.json")
/// } catch let error as AssetPackError where error.code == .fileNotFound {
///     …
/// } catch let error as AssetPackError where error.reason == .crcMismatch {
///     …
/// }
/// ```
///
/// The error names what it concerns — ``pack``, ``member``, ``path`` —
/// and ``message`` (also `description` and `localizedDescription`) is one
/// line a person can act on.
public struct AssetPackError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// What went wrong. The raw values are stable: they travel on the
    /// daemon's wire and are the C library's error codes (negated there).
    public enum Code: Int32, Sendable, Hashable, CaseIterable {
        /// No pack with this ID is installed (``pack``).
        case assetPackNotFound = 1
        /// No member at this path (``member``; ``pack`` when one was named).
        case fileNotFound = 2
        /// A path-only lookup matched members of several packs (``packs``).
        case ambiguousPath = 3
        /// A pack ID that no pack may have, or that disagrees with the pack
        /// file (``pack``; ``reason`` says why).
        case invalidPackID = 4
        /// A member path the index cannot hold (``member``, ``reason``).
        case invalidPath = 5
        /// A record in the container's index is damaged (``pack``,
        /// ``member`` when it is a member's, ``reason``).
        case corruptRecord = 6
        /// The archive an installed pack's record names is gone (``pack``,
        /// ``path``).
        case archiveMissing = 7
        /// A pack file is malformed, or its data is damaged (``path`` is the
        /// archive, ``member`` the member when one is at fault; ``reason``).
        case badArchive = 8
        /// A system call failed (``systemError`` is the `errno`; ``path``
        /// when it concerned a file).
        case system = 9
        /// The container's index (LMDB) failed (``systemError`` is LMDB's
        /// code).
        case index = 10
        /// A manifest is invalid (``path``; ``field``, ``line`` and
        /// ``column`` when known; ``reason``).
        case invalidManifest = 16
        /// A pack file's recorded manifest is unreadable (``path``).
        case invalidRecordedManifest = 17
        /// A pack's lock could not be taken in time (``path`` is the lock file).
        case lockTimeout = 18
        /// The file given to install is not a regular file (``path``).
        case notAFile = 19
        /// There is no container at ``path`` and the manager was told not to
        /// create one.
        case noContainer = 20
        /// The container's index was written by an incompatible version
        /// (``path``).
        case unsupportedSchema = 21
        /// A URL this build cannot install from (``path`` is the URL).
        case unsupportedURL = 22
        /// The descriptor daemon at ``path`` cannot be reached, or the
        /// connection broke (``systemError`` is the `errno`).
        case daemonUnavailable = 23
        /// A pack file's member, or the pack as a whole, declares more than
        /// the container's ``AssetPackManager/Limits`` allow: refused at
        /// install and inspection before anything is inflated, and at a read
        /// of a member installed under looser limits (``path`` is the file,
        /// ``member`` the member, ``pack`` the installed pack; ``reason``
        /// says which limit).
        case limitExceeded = 24
        /// A symlink is where a file or directory of the container belongs
        /// (``path``); the container never follows one.
        case symlinkInContainer = 25
        /// A value of ``AssetPackManager/Options`` that it cannot take
        /// (``field`` names it, `discretionary.maximumConcurrentDownloads`).
        case invalidOption = 26
        /// A catalog is not valid (``path``; ``field`` at fault; ``pack``
        /// when an entry's; ``reason`` says what).
        case invalidCatalog = 32
        /// A catalog's `format` is not one this version reads (``path``).
        case unsupportedCatalogFormat = 33
        /// A key is configured and the catalog has no signature (``path``).
        case catalogUnsigned = 34
        /// The catalog is signed, but not by the configured key (``path``).
        case catalogKeyMismatch = 35
        /// The signature does not verify — the catalog or its signature was
        /// altered — or the signature file is malformed (``path``, ``reason``).
        case catalogSignatureInvalid = 36
        /// The catalog is older than one already accepted, or reuses its
        /// sequence number with other bytes (``path``, ``reason``).
        case catalogRollback = 37
        /// The catalog's `expires` time has passed (``path``).
        case catalogExpired = 38
        /// A key file or key text is malformed (``path``, ``reason``).
        case invalidKey = 39
        /// The persisted trust state (accepted sequence numbers) is damaged
        /// (``path``).
        case invalidTrustState = 40
        /// `publish` refused (``path`` is the directory, ``pack`` the pack;
        /// ``reason`` says why).
        case publishRefused = 41
        /// The catalog (``path``) is of another channel than the one asked
        /// for, or names none (``reason``): it is not the catalog the client
        /// asked for, whoever signed it.
        case catalogChannelMismatch = 42
        /// A pack download was answered 404 or 410 (``path`` is the URL).
        case downloadNotFound = 48
        /// A pack download was answered with another status that retrying
        /// does not mend: 403, another 4xx (``path`` is the URL).
        case downloadRefused = 49
        /// A downloaded pack is not the catalog's size (``reason``: more or fewer bytes).
        case downloadSizeMismatch = 50
        /// A downloaded pack's SHA-256 is not the catalog's.
        case downloadChecksumMismatch = 51
        /// A pack download kept failing transiently (no connection, broken
        /// or stalled, 408, 429, 5xx) through every attempt; the partial file
        /// stays for a later resume.
        case downloadRetriesExhausted = 52
        /// A pack download failed in a way retrying does not mend (TLS, a
        /// bad URL, too many redirects); the partial file stays.
        case downloadFailed = 53
        /// The catalog (``path`` is its URL) could not be fetched — not
        /// found, refused, unreachable — and no cached copy answers for it.
        case catalogUnavailable = 54
        /// A pack download was cancelled (`progress.cancel()`, `assetpack
        /// cancel`); nothing was installed and its partial file is gone.
        case downloadCancelled = 55
        /// A pause, resume or cancel named a pack that no download is
        /// running for (``pack``).
        case noDownloadInProgress = 56
        /// A pack download (``path`` is the URL) or a catalog fetch ran out
        /// of time (``reason``: less than the minimum speed for its time,
        /// or past the total deadline). Not retried; a download's partial
        /// file stays for a later resume.
        case downloadTimedOut = 57
        /// The CA file (``path``) cannot be used: not a regular file
        /// (``reason``), too large, or unreadable (``systemError``).
        /// Refused before anything is fetched.
        case invalidCAFile = 58
        /// A pack's file cannot fit (``reason``: more than the free space
        /// of the container's file system, or than the process may write),
        /// refused before a byte is written (``path`` is the URL).
        case downloadTooLarge = 59
        /// A pack's piece map (``path`` is its URL) is unusable: it does
        /// not parse, contradicts itself or does not describe the catalog
        /// entry's file (``reason`` says how). Updates fall back to the full
        /// download.
        case invalidPieceMap = 60
        /// The daemon refused this process (its user and group, checked
        /// with `SO_PEERCRED`).
        case peerNotAllowed = 64
        /// The daemon found the request malformed.
        case malformedRequest = 65
        /// The request was longer than the daemon reads.
        case requestTooLarge = 66
        /// The daemon speaks another protocol version.
        case unsupportedVersion = 67
        /// The daemon serves as many connections as it may.
        case daemonBusy = 68
        /// The daemon failed in a way that has no code of its own.
        case daemonFailed = 69
        /// This process may not make the request (``reason`` says why): a
        /// daemon peer that is not the container's owner asked for a
        /// download from a catalog source the owner did not configure
        /// (``path`` is the catalog's URL), or a pause, resume or cancel
        /// named a download another user runs (``pack``).
        case requestNotPermitted = 70

    }

    /// Why, where a ``Code`` has several causes. The raw values are stable.
    public enum Reason: Int32, Sendable, Hashable, CaseIterable {
        /// The code says all there is.
        case unspecified = 0

        // invalidPackID
        /// The ID is empty.
        case emptyID = 100
        /// The ID is longer than 128 bytes.
        case idTooLong = 101
        /// The ID does not start with an ASCII letter or digit.
        case badFirstCharacter = 102
        /// The ID has a character outside `A-Z a-z 0-9 . _ -`.
        case badCharacter = 103
        /// The pack file records another ID than the one asked for.
        case differsFromRecorded = 104

        // invalidPath
        /// The path and the pack ID together exceed the index's key size.
        case pathTooLongToIndex = 200

        // corruptRecord
        /// A record's bytes cannot be decoded.
        case undecodableRecord = 300
        /// A member's data lies outside its archive.
        case dataOutsideArchive = 301
        /// A member record's sizes or method are impossible.
        case impossibleSizes = 302

        // badArchive
        /// Not a ZIP archive.
        case notAnArchive = 400
        /// The archive ends early.
        case truncated = 401
        /// A member's name is unsafe (absolute, `..`, backslash, NUL, not UTF-8, …).
        case unsafeMemberPath = 402
        /// A member is a symbolic link, device, FIFO or other non-file.
        case unsupportedEntryType = 403
        /// Two members have one name (canonically equivalent Unicode included).
        case duplicateMember = 404
        /// A member is encrypted.
        case encryptedMember = 405
        /// A member uses a compression method other than stored or deflated.
        case unsupportedMethod = 406
        /// A local header disagrees with the central directory.
        case headerMismatch = 407
        /// A member's entry is malformed (extra field, sizes, ratio).
        case malformedEntry = 408
        /// Members overlap each other or the central directory.
        case overlappingMembers = 409
        /// A member lies outside the file.
        case outOfBounds = 410
        /// The central directory or end records are inconsistent.
        case inconsistentDirectory = 411
        /// A member's CRC-32 does not match its data.
        case crcMismatch = 412
        /// A member's data is not the size its entry declares.
        case sizeMismatch = 413
        /// A deflated member's data does not inflate.
        case corruptData = 414
        /// A file to be packed could not be read or changed while read.
        case unreadableSource = 415
        /// The archive comment is too long.
        case invalidComment = 416
        /// Two members' names differ only in case.
        case caseCollision = 417
        /// A file's name is also a directory of another member (`a` and `a/b`).
        case fileDirectoryCollision = 418

        // invalidManifest
        /// The manifest file cannot be read.
        case unreadableManifest = 500
        /// The manifest is not valid JSON (``line``, ``column``).
        case invalidJSON = 501
        /// A field is missing, of the wrong type, unknown or has a bad value (``field``).
        case invalidField = 502
        /// The file selectors select a file that is missing, outside the
        /// root or of the wrong kind, or select nothing (``field``).
        case invalidSelection = 503

        // limitExceeded
        /// A deflated member declares more than
        /// ``AssetPackManager/Limits/maximumMemberSize`` bytes.
        case memberTooLarge = 600
        /// A deflated member above the exempt size inflates more than
        /// ``AssetPackManager/Limits/maximumCompressionRatio`` times.
        case compressionRatioTooHigh = 601
        /// The deflated members together declare more than
        /// ``AssetPackManager/Limits/maximumPackSize`` bytes.
        case packTooLarge = 602

        // invalidCatalog
        /// The catalog is not strict JSON.
        case catalogNotJSON = 700
        /// A required field is missing (``field``).
        case catalogMissingField = 701
        /// A field has the wrong JSON type (``field``).
        case catalogWrongType = 702
        /// `sequence` is not a whole number from 0 to 2^53 − 1.
        case catalogBadSequence = 703
        /// A `sha256` is not 64 lowercase hex digits.
        case catalogBadSHA256 = 704
        /// A `size` is not a whole number from 0 to 2^53 − 1.
        case catalogBadSize = 705
        /// A `version` is not a whole number from 1 to 2^53 − 1.
        case catalogBadVersion = 706
        /// Two entries have one pack ID.
        case catalogDuplicatePack = 707
        /// An entry's pack ID breaks the pack-ID rules.
        case catalogInvalidPackID = 708
        /// A URL is neither a relative path inside the catalog's directory
        /// nor `http://` / `https://`.
        case catalogBadURL = 709
        /// A time is not RFC 3339 UTC.
        case catalogBadTimestamp = 710
        /// A download policy, event type or platform is unknown.
        case catalogBadValue = 711
        /// `channel` breaks the channel-name rules.
        case catalogBadChannel = 712

        // catalogSignatureInvalid
        /// The signature file is not lines of `ed25519 <key ID> <base64>`.
        case malformedSignature = 800
        /// The key's signature does not verify over the catalog's bytes.
        case signatureMismatch = 801

        // catalogRollback
        /// The catalog's sequence number is lower than the accepted one.
        case olderSequence = 810
        /// The sequence number is the accepted one, the bytes are not.
        case sequenceReused = 811

        // catalogChannelMismatch
        /// The catalog is of another channel.
        case otherChannel = 812
        /// The catalog names no channel.
        case noChannel = 813

        // invalidKey
        /// Not a PKCS#8 PEM Ed25519 private key.
        case malformedPrivateKey = 820
        /// Not `ed25519:` and the base64 of 32 bytes (or a `PUBLIC KEY` PEM).
        case malformedPublicKey = 821

        // publishRefused
        /// The pack's version is lower than the catalog's.
        case versionBackwards = 830
        /// The pack's version is the catalog's, its contents are not.
        case versionReused = 831
        /// Two packs of one publish have one ID.
        case duplicatePackInPublish = 832
        /// The directory's catalog is signed by another key.
        case signedByOtherKey = 833
        /// The directory's catalog is signed, and no key was given.
        case signatureRequired = 834
        /// A pack file changed while it was being published.
        case packChanged = 835
        /// A base URL or expiry that cannot be used.
        case badPublishArgument = 836
        /// The channel given is not the directory's catalog's.
        case channelChanged = 837

        // downloadSizeMismatch
        /// More bytes arrived than the catalog's size.
        case moreBytesThanCatalog = 840
        /// The file ended before the catalog's size.
        case fewerBytesThanCatalog = 841

        // invalidPieceMap
        /// Not strict JSON.
        case pieceMapNotJSON = 850
        /// A `format` this version does not read.
        case pieceMapUnsupportedFormat = 851
        /// A required field is absent.
        case pieceMapMissingField = 852
        /// A field has the wrong JSON type.
        case pieceMapWrongType = 853
        /// A field's value is out of range or malformed.
        case pieceMapBadValue = 854
        /// It names another pack than the catalog entry.
        case pieceMapPackMismatch = 855
        /// It names another version than the catalog entry.
        case pieceMapVersionMismatch = 856
        /// It describes a file of another size than the catalog entry's.
        case pieceMapSizeMismatch = 857
        /// It describes a file with another SHA-256 than the catalog entry's.
        case pieceMapSHA256Mismatch = 858
        /// Its members are not sorted by offset.
        case pieceMapNotSorted = 859
        /// Two members' data overlap.
        case pieceMapOverlapping = 860
        /// A member's data reaches past the end of the file.
        case pieceMapOutsideFile = 861
        /// The glue's size is not the file's less the members'.
        case pieceMapGlueSizeMismatch = 862
        /// It lists more members than a map may.
        case pieceMapTooManyMembers = 863
        /// It is longer than a map may be.
        case pieceMapTooLarge = 864
        /// The bytes fetched are not the size or SHA-256 their reference gives.
        case pieceMapReferenceMismatch = 865

        // requestNotPermitted
        /// A daemon peer asked for a download from a catalog URL and key
        /// that the container's owner did not configure (`assetpack sources`).
        case sourceNotConfigured = 870
        /// A daemon peer asked for a download from a catalog without a key:
        /// an unsigned catalog is never a configured source for a peer.
        case unsignedSource = 871
        /// A pause, resume or cancel of a download that another user runs
        /// (only its user, the container's owner and root may steer it).
        case otherUsersDownload = 872
        /// A daemon peer asked for a download from a configured source's URL
        /// and key, but for another channel than the one configured (a
        /// source configured without one is of the `default` channel).
        case channelNotConfigured = 873

        // invalidCAFile
        /// The CA file is not a regular file (a FIFO, a directory, a device).
        case caFileNotRegular = 875
        /// The CA file is larger than the most read.
        case caFileTooLarge = 876

        // downloadTooLarge
        /// More than the file system has free.
        case exceedsFreeSpace = 880
        /// More than the process may write (`RLIMIT_FSIZE`).
        case exceedsFileSizeLimit = 881

        // downloadTimedOut
        /// Less than the minimum speed arrived for its time.
        case belowMinimumSpeed = 885
        /// The download or fetch outlasted its total deadline.
        case totalDeadline = 886
    }

    /// What went wrong.
    public let code: Code
    /// Why, where the code has several causes; else `.unspecified`.
    public let reason: Reason
    /// The pack the error concerns.
    public let pack: String?
    /// The member path (inside a pack) the error concerns.
    public let member: String?
    /// The file, directory, socket or URL the error concerns.
    public let path: String?
    /// The packs of an ``Code/ambiguousPath`` lookup.
    public let packs: [String]
    /// The manifest field at fault (`fileSelectors[2].directory`).
    public let field: String?
    /// Where in a manifest the error is, 1-based, when known.
    public let line: Int?
    public let column: Int?
    /// The `errno` of ``Code/system`` and ``Code/daemonUnavailable``; the
    /// LMDB code of ``Code/index``.
    public let systemError: Int32?
    /// One line a person can act on.
    public let message: String

    /// Creates an error. The library makes these; a program may, too, to
    /// report in the same terms.
    public init(_ code: Code, reason: Reason = .unspecified, pack: String? = nil, member: String? = nil,
                path: String? = nil, packs: [String] = [], field: String? = nil, line: Int? = nil,
                column: Int? = nil, systemError: Int32? = nil, message: String) {
        self.code = code
        self.reason = reason
        self.pack = pack
        self.member = member
        self.path = path
        self.packs = packs
        self.field = field
        self.line = line
        self.column = column
        self.systemError = systemError
        self.message = message
    }

    public var description: String { message }
    public var errorDescription: String? { message }
}

import AssetPacks
import CAssetPacksHeader

/// `ap_strerror`'s texts: static C strings, one per result code.
enum ResultCodes {
    /// The description of `code`, or `nil` for a number that is no code.
    static func text(_ code: Int32) -> StaticString? {
        switch code {
        case AP_OK: return "success"
        case AP_EINVAL: return "invalid argument"
        case AP_ERANGE: return "buffer too small"
        case AP_EREADONLY: return "container opened read-only"
        default: break
        }
        guard code < 0, let swift = AssetPackError.Code(rawValue: -code) else { return nil }
        return text(swift)
    }

    /// Keyed rather than switched over, so a code added to the Swift API
    /// reads "unknown error" here until it is named (a test checks every
    /// code has a text and a constant in the header).
    static let texts: [AssetPackError.Code: StaticString] = [
        .assetPackNotFound: "no such pack",
        .fileNotFound: "no such member",
        .ambiguousPath: "path in several packs",
        .invalidPackID: "invalid pack ID",
        .invalidPath: "invalid member path",
        .corruptRecord: "damaged index record",
        .archiveMissing: "installed archive missing",
        .badArchive: "bad or damaged archive",
        .system: "system error",
        .index: "index (LMDB) error",
        .invalidManifest: "invalid manifest",
        .invalidRecordedManifest: "unreadable recorded manifest",
        .lockTimeout: "lock timeout",
        .notAFile: "not a regular file",
        .noContainer: "no such container",
        .unsupportedSchema: "unsupported index schema",
        .unsupportedURL: "unsupported URL",
        .daemonUnavailable: "daemon unavailable",
        .limitExceeded: "limit exceeded",
        .symlinkInContainer: "symlink in container",
        .invalidOption: "invalid option",
        .invalidCatalog: "invalid catalog",
        .unsupportedCatalogFormat: "unsupported catalog format",
        .catalogUnsigned: "catalog unsigned",
        .catalogKeyMismatch: "catalog signed by another key",
        .catalogSignatureInvalid: "catalog signature invalid",
        .catalogRollback: "catalog rollback",
        .catalogExpired: "catalog expired",
        .invalidKey: "invalid key",
        .invalidTrustState: "damaged trust state",
        .publishRefused: "publish refused",
        .catalogChannelMismatch: "catalog of another channel",
        .downloadNotFound: "download not found",
        .downloadRefused: "download refused",
        .downloadSizeMismatch: "download size mismatch",
        .downloadChecksumMismatch: "download checksum mismatch",
        .downloadRetriesExhausted: "download retries exhausted",
        .downloadFailed: "download failed",
        .catalogUnavailable: "catalog unavailable",
        .downloadCancelled: "download cancelled",
        .noDownloadInProgress: "no download in progress",
        .downloadTimedOut: "download timed out",
        .invalidCAFile: "invalid CA file",
        .downloadTooLarge: "download too large to fit",
        .invalidPieceMap: "invalid piece map",
        .peerNotAllowed: "peer not allowed",
        .malformedRequest: "malformed request",
        .requestTooLarge: "request too large",
        .unsupportedVersion: "unsupported protocol version",
        .daemonBusy: "daemon busy",
        .daemonFailed: "daemon failed",
        .requestNotPermitted: "request not permitted",
    ]

    static func text(_ code: AssetPackError.Code) -> StaticString? { texts[code] }
}

@_cdecl("ap_strerror")
public func ap_strerror(_ code: Int32) -> UnsafePointer<CChar> {
    let text: StaticString = ResultCodes.text(code) ?? "unknown error"
    return UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

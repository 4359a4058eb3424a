import AssetSystem

/// A response's validators (RFC 9110 §8.8) as a client keeps and sends
/// them back: the `ETag` a catalog fetch revalidates with (`If-None-Match`),
/// and the validator a resumed download puts in `If-Range`.
///
/// Both come from the server and are written to the container and into
/// later requests, so only well-formed ones are kept: an `ETag` must be an
/// entity-tag (§8.8.3) — `"…"` or `W/"…"`, the quoted part of visible
/// ASCII but `"`, or bytes from 0x80 — and anything else (a control
/// character, a space, no quotes) is ignored as if the server had sent none.
///
/// `If-Range` takes a strong validator only (§13.1.5): a strong ETag; or,
/// when the response has no ETag at all, a `Last-Modified` that is strong
/// by §8.8.2.2's rule for clients — the response's `Date` at least one
/// second after it, so the file cannot have changed twice within that
/// second. A weak ETag (`W/"…"`: Apache's for a file changed within the
/// last second) allows neither: a resume then sends `Range` alone, and the
/// catalog's size and SHA-256 still decide whether the file is the one asked
/// for.
public enum HTTPValidator {
    /// Whether `text` is an entity-tag (RFC 9110 §8.8.3), weak or strong.
    public static func isEntityTag(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.starts(with: "W/".utf8) { bytes = bytes.dropFirst(2) }
        guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23 ... 0x7e).contains($0) || $0 >= 0x80 }
    }

    /// Whether `text` is a weak entity-tag (`W/"…"`).
    public static func isWeak(_ text: String) -> Bool { text.hasPrefix("W/") && isEntityTag(text) }

    /// Whether `text` may go into `If-Range`: a strong entity-tag or an
    /// HTTP-date. (A journal written by an older version may hold a weak
    /// tag or worse: it is not sent.)
    public static func isRangeValidator(_ text: String) -> Bool {
        (isEntityTag(text) && !isWeak(text)) || HTTPDate.parse(text) != nil
    }

    /// The validator a later `If-Range` may carry for a response with
    /// these fields, or `nil` when none may be: the ETag when it is strong;
    /// without an ETag, `Last-Modified` when `Date` is at least a second
    /// after it.
    public static func rangeValidator(etag: String?, lastModified: String?, date: String?) -> String? {
        if let etag { return isWeak(etag) ? nil : etag }
        guard let lastModified, let modified = HTTPDate.parse(lastModified),
              let date = date.flatMap(HTTPDate.parse), date >= modified + 1 else { return nil }
        return lastModified
    }
}

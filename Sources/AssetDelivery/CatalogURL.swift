/// The URLs a catalog may give for a pack: a relative path that stays in
/// the catalog's directory (`Tutorial-0123456789ab.zip`, `packs/a.zip`), or
/// an absolute `http://` / `https://` URL (a CDN apart from the catalog).
public enum CatalogURL {
    /// Whether `url` is absolute (`http://` or `https://`, any case).
    public static func isAbsolute(_ url: String) -> Bool {
        let lower = url.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// What is wrong with `url` as a pack URL, or `nil` when nothing is.
    public static func problem(_ url: String) -> String? {
        let bytes = Array(url.utf8)
        guard !bytes.isEmpty else { return "is empty" }
        guard bytes.count <= 2048 else { return "is longer than 2048 bytes" }
        guard !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7f || $0 == UInt8(ascii: "\\") }) else {
            return "has a space, control character or backslash"
        }
        if isAbsolute(url) {
            let rest = url.drop { $0 != ":" }.dropFirst(3)
            let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            return host.isEmpty || host.hasPrefix("@") ? "has no host" : nil
        }
        guard !url.contains(":") || url.firstIndex(of: "/").map({ $0 < url.firstIndex(of: ":")! }) == true else {
            return "is neither a relative path nor an http(s) URL"
        }
        guard bytes.first != UInt8(ascii: "/") else { return "must be relative to the catalog (no leading '/')" }
        // No escapes either, so that `%2e%2e` cannot spell `..`.
        guard !url.contains("?"), !url.contains("#"), !url.contains("%") else {
            return "must be a plain path (no query, fragment or percent-escape)"
        }
        for segment in url.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.isEmpty { return "has an empty path segment" }
            if segment == ".." || segment == "." { return "must not have '.' or '..' segments" }
        }
        return nil
    }
}

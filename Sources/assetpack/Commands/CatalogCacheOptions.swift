import AssetPacks

/// The options of the commands that fetch catalogs (`fetch`, `sync`,
/// `daemon`): how much of the container's catalog cache they keep.
enum CatalogCacheOptions {
    static let count = Option.value(
        "catalog-cache-count", placeholder: "n",
        help: "Keep at most this many catalogs in <container>/catalog/, the one in use included (1-4096, default 8).")
    static let size = Option.value(
        "catalog-cache-size", placeholder: "bytes",
        help: "Keep at most this many bytes of catalogs, the one in use whatever its size (suffix K, M, G or T; default 64M).")
    static let days = Option.value(
        "catalog-cache-days", placeholder: "days",
        help: "Drop a cached catalog not fetched for this many days (default 30).")

    static let options = [count, size, days]

    /// `options` with the cache limits the arguments give.
    static func apply(_ arguments: Arguments, to options: inout AssetPackManager.Options) throws(CLIError) {
        if let n = try arguments.wholeNumber(count, in: 1...4096) { options.catalogCache.maximumCatalogs = n }
        if let n = try arguments.byteCount(size, maximum: UInt64(Int64.max)) { options.catalogCache.maximumBytes = Int64(n) }
        if let d = try arguments.number(days) {
            guard d > 0 else { throw .usage("'\(days.longSpelling)' must be more than 0") }
            options.catalogCache.maximumAge = d * 86_400
        }
    }
}

import AssetDelivery

extension AssetPackManager.Options {
    /// How much the container's catalog cache (`<container>/catalog/`, a
    /// directory per catalog URL fetched) keeps. After each catalog it
    /// stores, a manager removes the entries not used for ``maximumAge``,
    /// then the least recently used beyond ``maximumCatalogs`` or
    /// ``maximumBytes``; the catalog it fetched is always kept.
    public struct CatalogCache: Sendable, Hashable {
        /// Catalog URLs kept, the one in use included; at least 1 (default 8).
        public var maximumCatalogs: Int
        /// Bytes kept over every entry; the catalog in use is kept whatever
        /// its size (default 64 MiB).
        public var maximumBytes: Int64
        /// Seconds after its last fetch that an entry goes; more than 0
        /// (default 30 days).
        public var maximumAge: Double

        public init(maximumCatalogs: Int = 8, maximumBytes: Int64 = 64 << 20, maximumAge: Double = 30 * 86_400) {
            self.maximumCatalogs = maximumCatalogs
            self.maximumBytes = maximumBytes
            self.maximumAge = maximumAge
        }

        /// - Throws: `.invalidOption` naming the field that cannot be used.
        func validate() throws(AssetPackError) {
            func bad(_ field: String, _ rule: String, _ value: String) -> AssetPackError {
                AssetPackError(.invalidOption, field: "catalogCache." + field,
                               message: "AssetPackManager.Options.catalogCache.\(field) must be \(rule), not \(value)")
            }
            guard maximumCatalogs >= 1 else { throw bad("maximumCatalogs", "at least 1", "\(maximumCatalogs)") }
            guard maximumBytes >= 0 else { throw bad("maximumBytes", "0 or more", "\(maximumBytes)") }
            guard maximumAge > 0, maximumAge.isFinite else { throw bad("maximumAge", "more than 0 seconds", "\(maximumAge)") }
        }

        /// The engine's limits.
        var engine: AssetDelivery.CatalogCache.Limits {
            .init(maximumCatalogs: maximumCatalogs, maximumBytes: maximumBytes, maximumAge: maximumAge)
        }
    }
}

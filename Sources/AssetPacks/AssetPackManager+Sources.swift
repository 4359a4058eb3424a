import Foundation
import AssetDelivery
import AssetStore

extension AssetPackManager {
    /// A catalog source the container's owner configured (`assetpack
    /// sources add`): the descriptor daemon downloads from it for peers that
    /// are not its own user. Only such a source — its URL, key and channel,
    /// each exactly as configured — may be named in a download request by
    /// another user; the daemon's own user may name any.
    public struct ConfiguredSource: Sendable, Hashable {
        /// The catalog's URL, `http://` or `https://`.
        public var url: String
        /// The key the catalog must be signed by: an unsigned catalog is
        /// never a source for another user.
        public var publicKey: AssetPackPublicKey
        /// The channel the catalog must name (`publish --channel`), and so
        /// the one another user's request must ask for
        /// (``CatalogSource/channel``): a request for another channel at
        /// this URL is refused. Default `default`, the channel a client asks
        /// for when not told otherwise; a source the file lists without a
        /// channel is of it.
        public var channel: String
        /// A PEM file of certificate authorities the daemon trusts besides
        /// the system's for this source (absolute); a request may name no
        /// other.
        public var caFile: String?

        public init(url: String, publicKey: AssetPackPublicKey, channel: String = AssetPackCatalog.defaultChannel,
                    caFile: String? = nil) {
            self.url = url
            self.publicKey = publicKey
            self.channel = channel
            self.caFile = caFile
        }

        init(_ source: AssetDelivery.ConfiguredSource) {
            self.init(url: source.url, publicKey: AssetPackPublicKey(source.key), channel: source.channel, caFile: source.caFile)
        }

        var engine: AssetDelivery.ConfiguredSource {
            AssetDelivery.ConfiguredSource(url: url, key: publicKey.key, channel: channel, caFile: caFile)
        }
    }

    /// The container's configured sources (`<container>/trust/sources.json`),
    /// as written.
    ///
    /// - Parameter owner: when given, the file must belong to this user and
    ///   be writable by no one else, as the daemon requires of it.
    /// - Throws: `.invalidTrustState` naming the file when it is damaged (or
    ///   fails the owner's checks); `.symlinkInContainer`; `.system`.
    public func configuredSources(owner: UInt32? = nil) throws(AssetPackError) -> [ConfiguredSource] {
        let root = store.containerDirectory
        return try delivery { () throws(DeliveryError) in try ConfiguredSources.read(in: root, owner: owner) }.map(ConfiguredSource.init)
    }

    /// Adds `source`, or replaces the one with the same URL and key (its
    /// channel and CA file with it: a URL serves one channel's catalog).
    ///
    /// - Throws: `.unsupportedURL` for a URL that is not `http://` or
    ///   `https://`; `.invalidOption` for a CA file path that is not
    ///   absolute (``AssetPackError/field`` `caFile`) or a channel that is
    ///   not a channel name (`channel`: 1 to 128 bytes of `A-Z a-z 0-9 . _ -`,
    ///   starting with a letter or digit); the errors of reading the file.
    public func addConfiguredSource(_ source: ConfiguredSource) throws(AssetPackError) {
        let scheme = source.url.prefix(8).lowercased()
        guard scheme.hasPrefix("http://") || scheme.hasPrefix("https://") else {
            throw AssetPackError(.unsupportedURL, path: source.url, message: "a configured source's URL must be http:// or https://: \(source.url)")
        }
        if let caFile = source.caFile, !caFile.hasPrefix("/") {
            throw AssetPackError(.invalidOption, path: caFile, field: "caFile", message: "a configured source's CA file must be an absolute path: \(caFile)")
        }
        try CatalogSource.validate(channel: source.channel, field: "channel")
        try updateSources { sources in
            sources.filter { !($0.url == source.url && $0.key == source.publicKey.key) } + [source.engine]
        }
    }

    /// Removes the sources with this URL (and this key, when given).
    ///
    /// - Returns: how many were removed.
    /// - Throws: the errors of reading and writing the file.
    @discardableResult
    public func removeConfiguredSource(url: String, publicKey: AssetPackPublicKey? = nil) throws(AssetPackError) -> Int {
        var removed = 0
        try updateSources { sources in
            let kept = sources.filter { !($0.url == url && (publicKey == nil || $0.key == publicKey!.key)) }
            removed = sources.count - kept.count
            return kept
        }
        return removed
    }

    private func updateSources(_ change: ([AssetDelivery.ConfiguredSource]) -> [AssetDelivery.ConfiguredSource]) throws(AssetPackError) {
        let root = store.containerDirectory
        try delivery { () throws(DeliveryError) in
            try ConfiguredSources.update(in: root) { (sources) throws(DeliveryError) in change(sources) }
        }
    }
}

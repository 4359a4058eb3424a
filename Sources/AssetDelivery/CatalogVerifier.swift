import AssetArchive

/// The client's checks of a fetched catalog, before anything in it is
/// trusted: the signature (when a key is configured), the format, the
/// channel it names against the one asked for, the expiry, and the
/// sequence number against the one already accepted from the same source,
/// key and channel, which it then records.
///
/// The channel binds the signed bytes to what the client asked for: a key
/// may sign catalogs of several channels (`default`, `beta`), and one
/// served at another's URL is refused (`catalogChannelMismatch`) before
/// any trust state is read or written — so a beta catalog neither replaces
/// the stable one nor, with its higher sequence number, locks it out as a
/// rollback. A catalog that names no channel (from a publisher before
/// channels) is refused the same way: its bytes do not say which catalog
/// it is.
///
/// Without a key, unsigned catalogs are accepted (their rollback state is
/// kept all the same, under the key `none`): integrity then rests on the
/// transport alone. With a key, a catalog without a signature by it is
/// refused.
///
/// Pack bytes are trusted through the catalog: an entry's `size` and
/// `sha256` are what a downloader checks a pack file against.
public struct CatalogVerifier: Sendable {
    /// The key catalogs must be signed by; `nil` accepts unsigned ones.
    public let publicKey: PublicKey?
    /// Where the accepted sequence numbers are kept (`<container>/trust`).
    public let stateDirectory: String
    /// The channel a catalog must name (``Catalog/defaultChannel`` unless told).
    public let channel: String

    public init(publicKey: PublicKey?, stateDirectory: String, channel: String = Catalog.defaultChannel) {
        self.publicKey = publicKey
        self.stateDirectory = stateDirectory
        self.channel = channel
    }

    /// The key's name in trust records.
    var keyName: String { publicKey?.description ?? "none" }

    /// Checks the catalog `bytes` fetched from `source` with its detached
    /// `signature` (`nil`: there was none), and records it as accepted.
    ///
    /// Checks, in order: the signature (unsigned, another key, altered),
    /// then the catalog's format and fields, its channel, its expiry
    /// against `now`, then its sequence number against the one accepted
    /// from `source` for this key and channel — lower, or equal with other
    /// bytes, is a rollback. A higher number is recorded; the same catalog
    /// again is accepted as it is.
    ///
    /// - Throws: `DeliveryError.catalogUnsigned`, `.catalogKeyMismatch`,
    ///   `.catalogSignatureInvalid`, `.unsupportedCatalogFormat`,
    ///   `.invalidCatalog`, `.catalogChannelMismatch`, `.catalogExpired`,
    ///   `.catalogRollback`, `.invalidTrustState`, `.system`.
    public func accept(catalog bytes: [UInt8], signature: [UInt8]?, source: String, now: CatalogTime) throws(DeliveryError) -> Catalog {
        if let publicKey {
            guard let signature else { throw .catalogUnsigned(path: source) }
            let parsed = try CatalogSignature.parse(signature, path: CatalogFetcher.signatureURL(of: source))
            try parsed.check(bytes, by: publicKey, path: source)
        }
        let catalog = try Catalog.parse(bytes, path: source)
        guard catalog.channel == channel else {
            throw .catalogChannelMismatch(path: source, expected: channel, found: catalog.channel)
        }
        if let expires = catalog.expires, now > expires {
            throw .catalogExpired(path: source, expires: expires, now: now)
        }
        let digest = SHA256.hex(bytes.withUnsafeBytes { SHA256.hash($0) })
        let directory = try TrustDirectory(path: stateDirectory)
        try directory.update(key: keyName, channel: channel, source: source) { (accepted) throws(DeliveryError) in
            if let accepted {
                if catalog.sequence < accepted.sequence {
                    throw .catalogRollback(path: source, accepted: accepted.sequence, offered: catalog.sequence, problem: .olderSequence)
                }
                if catalog.sequence == accepted.sequence {
                    guard accepted.sha256 == digest else {
                        throw .catalogRollback(path: source, accepted: accepted.sequence, offered: catalog.sequence, problem: .sequenceReused)
                    }
                    return nil
                }
            }
            return TrustRecord(key: keyName, channel: channel, source: source, sequence: catalog.sequence, sha256: digest, accepted: now)
        }
        return catalog
    }

    /// What has been accepted from `source` with this verifier's key and channel.
    ///
    /// - Throws: `DeliveryError.invalidTrustState`, `.system`.
    public func acceptedRecord(source: String) throws(DeliveryError) -> TrustRecord? {
        try TrustDirectory(path: stateDirectory).record(key: keyName, channel: channel, source: source)
    }
}

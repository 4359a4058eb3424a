public import Foundation
import AssetDelivery

/// What a client checks before it trusts a fetched catalog: the signature
/// by its pinned key, the format, the channel it names against the one
/// asked for, the expiry, and the sequence number against the highest it
/// has accepted from that catalog (its URL, key and channel) — which it
/// keeps, so that a new process still refuses an older catalog.
///
/// ```swift
/// let verifier = AssetPackCatalogVerifier(publicKey: try AssetPackPublicKey("ed25519:…"), container: manager.container)
/// let catalog = try verifier.accept(catalog: catalogBytes, signature: signatureBytes, source: catalogURL.absoluteString)
/// ```
///
/// Each refusal has its own code: `.catalogUnsigned`, `.catalogKeyMismatch`,
/// `.catalogSignatureInvalid`, `.catalogChannelMismatch`, `.catalogRollback`,
/// `.catalogExpired`, `.unsupportedCatalogFormat`. Without a key
/// (`publicKey: nil`) unsigned catalogs are accepted and only the format,
/// channel, expiry and sequence are checked.
public struct AssetPackCatalogVerifier: Sendable {
    let verifier: CatalogVerifier

    /// The key catalogs must be signed by; `nil` accepts unsigned ones.
    public var publicKey: AssetPackPublicKey? { verifier.publicKey.map(AssetPackPublicKey.init) }
    /// Where the accepted sequence numbers are kept.
    public var stateDirectory: String { verifier.stateDirectory }
    /// The channel a catalog must name.
    public var channel: String { verifier.channel }

    /// A verifier that keeps its state in the container (`<container>/trust/`)
    /// and accepts catalogs of `channel`.
    public init(publicKey: AssetPackPublicKey?, container: AssetPackManager.Container,
                channel: String = AssetPackCatalog.defaultChannel) {
        self.init(publicKey: publicKey, stateDirectory: container.engine.trustPath, channel: channel)
    }

    /// A verifier that keeps its state in `stateDirectory` (made if missing)
    /// and accepts catalogs of `channel`.
    public init(publicKey: AssetPackPublicKey?, stateDirectory: String, channel: String = AssetPackCatalog.defaultChannel) {
        verifier = CatalogVerifier(publicKey: publicKey?.key, stateDirectory: stateDirectory, channel: channel)
    }

    /// Checks the catalog fetched from `source` (its URL: the state is kept
    /// per source, key and channel) with its signature file's bytes (`nil`
    /// when there was none), and records it as accepted.
    ///
    /// - Throws: `.catalogUnsigned`, `.catalogKeyMismatch`,
    ///   `.catalogSignatureInvalid` (`.malformedSignature`,
    ///   `.signatureMismatch`), `.unsupportedCatalogFormat`,
    ///   `.invalidCatalog`, `.catalogChannelMismatch` (`.otherChannel`,
    ///   `.noChannel`), `.catalogExpired`, `.catalogRollback`
    ///   (`.olderSequence`, `.sequenceReused`), `.invalidTrustState`, `.system`.
    public func accept(catalog: Data, signature: Data?, source: String, now: Date = Date()) throws(AssetPackError) -> AssetPackCatalog {
        AssetPackCatalog(try delivery { () throws(DeliveryError) in
            try verifier.accept(catalog: Array(catalog), signature: signature.map(Array.init), source: source, now: CatalogTime(now))
        })
    }

    /// The sequence number last accepted from `source` for this key and channel, if any.
    ///
    /// - Throws: `.invalidTrustState`, `.system`.
    public func acceptedSequence(source: String) throws(AssetPackError) -> UInt64? {
        try delivery { () throws(DeliveryError) in try verifier.acceptedRecord(source: source)?.sequence }
    }
}

public import Foundation
import AssetDelivery

/// An Ed25519 public key that catalogs are checked against.
///
/// Its text (``description``, and the public key file `assetpack keygen`
/// writes) is one line, `ed25519:` and the base64 of the 32 raw bytes, to
/// paste into a program's configuration. An OpenSSL `PUBLIC KEY` PEM reads too.
public struct AssetPackPublicKey: Sendable, Hashable, CustomStringConvertible {
    let key: PublicKey

    init(_ key: PublicKey) {
        self.key = key
    }

    /// Reads the text form (or a `PUBLIC KEY` PEM).
    ///
    /// - Throws: `.invalidKey` with `.malformedPublicKey`.
    public init(_ text: String) throws(AssetPackError) {
        key = try delivery { () throws(DeliveryError) in try PublicKey.parse(text, path: "public key") }
    }

    /// Reads a public key file.
    ///
    /// - Throws: `.invalidKey`; `.system` when it cannot be read.
    public static func load(path: String) throws(AssetPackError) -> AssetPackPublicKey {
        AssetPackPublicKey(try delivery { () throws(DeliveryError) in try PublicKey.load(path: path) })
    }

    /// The first 8 bytes of the SHA-256 of the raw key, in hex: the name a
    /// signature gives its key.
    public var keyID: String { key.keyID }

    /// `ed25519:` and the base64 of the raw key.
    public var description: String { key.description }
}

/// An Ed25519 private key that signs catalogs. Its file is PKCS#8 PEM, as
/// `openssl genpkey -algorithm ed25519` writes it.
public struct AssetPackSigningKey: Sendable {
    let key: SigningKey

    init(_ key: SigningKey) {
        self.key = key
    }

    /// A new key from the system's random number generator.
    ///
    /// - Throws: `.system` when libcrypto cannot make one.
    public static func generate() throws(AssetPackError) -> AssetPackSigningKey {
        AssetPackSigningKey(try delivery { () throws(DeliveryError) in try SigningKey.generate() })
    }

    /// Reads a private key file (PKCS#8 PEM).
    ///
    /// - Throws: `.invalidKey` with `.malformedPrivateKey`; `.system`.
    public static func load(path: String) throws(AssetPackError) -> AssetPackSigningKey {
        AssetPackSigningKey(try delivery { () throws(DeliveryError) in try SigningKey.load(path: path) })
    }

    /// Its public key.
    public var publicKey: AssetPackPublicKey { AssetPackPublicKey(key.publicKey) }

    /// Writes the private key (mode 0600) and the public key file, refusing
    /// to replace either.
    ///
    /// - Throws: `.system` with `EEXIST` naming a file that exists, or the
    ///   error of writing one.
    public func write(privateKeyTo privatePath: String, publicKeyTo publicPath: String) throws(AssetPackError) {
        try delivery { () throws(DeliveryError) in try key.write(privateKeyTo: privatePath, publicKeyTo: publicPath) }
    }

    /// The contents of a signature file (`catalog.json.sig`) for `catalog`:
    /// one line, `ed25519 <key ID> <base64 signature>`.
    public func signature(for catalog: Data) -> Data {
        Data(CatalogSignature(signing: Array(catalog), with: key).encoded)
    }
}

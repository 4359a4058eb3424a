import AssetDelivery

/// The catalog parser and the signature check, fed arbitrary bytes by the
/// fuzz harness (`Fuzz/README.md`) and by its regression test. Nothing else
/// calls these.
package enum CatalogFuzzing {
    /// The fixed key the signature path checks against: the Ed25519 key of
    /// the seed 00 01 02 … 1f, which `Fuzz/make-seeds` signs seeds with.
    package static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f
        -----END PRIVATE KEY-----
        """

    private static let key: SigningKey = {
        guard let key = try? SigningKey.parse(privateKeyPEM, path: "fuzz key") else {
            preconditionFailure("the fixed fuzz key does not parse")
        }
        return key
    }()

    /// Reads `bytes` as a catalog and, after the first NUL byte (which strict
    /// JSON cannot hold), its signature file; checks the signature against
    /// the fixed key. A catalog that parses must encode to bytes that parse
    /// equal (and encode the same again), in the engine's form and the
    /// public one; the fixed key's own signature of it must verify. Returns
    /// whether the catalog parsed or the signature verified.
    @discardableResult
    package static func catalog(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let all = Array(bytes)
        let split = all.firstIndex(of: 0)
        let catalogBytes = Array(all[..<(split ?? all.count)])
        var accepted = false
        if let catalog = try? Catalog.parse(catalogBytes, path: "fuzz.json") {
            accepted = true
            let encoded = catalog.encoded()
            guard let again = try? Catalog.parse(encoded, path: "fuzz.json") else {
                preconditionFailure("an accepted catalog encodes to bytes its parser refuses")
            }
            precondition(again == catalog, "a catalog does not survive encoding and parsing")
            precondition(again.encoded() == encoded, "encoding a catalog is not deterministic")
            let wrapped = AssetPackCatalog(catalog)
            precondition(wrapped.engine == catalog && wrapped.encoded().elementsEqual(encoded),
                         "the public catalog differs from the engine's")
            let own = CatalogSignature(signing: catalogBytes, with: key)
            precondition((try? own.check(catalogBytes, by: key.publicKey, path: "fuzz.json")) != nil,
                         "the fixed key's signature does not verify")
        }
        if let split, let signature = try? CatalogSignature.parse(all[(split + 1)...], path: "fuzz.json.sig") {
            precondition((try? CatalogSignature.parse(signature.encoded, path: "fuzz.json.sig")) == signature,
                         "a signature file does not survive encoding and parsing")
            if (try? signature.check(catalogBytes, by: key.publicKey, path: "fuzz.json")) != nil { accepted = true }
        }
        return accepted
    }
}

import Foundation

/// The detached signature beside a catalog, `catalog.json.sig`: one line a
/// signature, each `ed25519 <key ID> <base64 of the 64-byte signature>`,
/// over the exact bytes of `catalog.json`.
///
/// `assetpack publish` writes two lines when it can: the new catalog's
/// signature and the previous catalog's, by the same key, and writes this
/// file before the catalog. A reader that fetches the catalog and then the
/// signature, while a publish runs between the two fetches, still gets a
/// pair that verifies (see docs/publishing.md). A verifier accepts the
/// catalog when any line by its key verifies.
public struct CatalogSignature: Sendable, Hashable {
    /// One signature: the key that made it, and its bytes.
    public struct Line: Sendable, Hashable {
        public let keyID: String
        public let signature: [UInt8]

        public init(keyID: String, signature: [UInt8]) {
            self.keyID = keyID
            self.signature = signature
        }
    }

    /// The most lines read: more is not a signature file of ours.
    public static let maximumLines = 8
    /// The longest signature file read.
    public static let maximumLength = 1024

    public let lines: [Line]

    public init(lines: [Line]) {
        self.lines = lines
    }

    /// The key IDs of the lines, each once, in order.
    public var keyIDs: [String] {
        var seen = Set<String>()
        return lines.map(\.keyID).filter { seen.insert($0).inserted }
    }

    /// The signature of `catalog` by `key`, alone.
    public init(signing catalog: [UInt8], with key: SigningKey) {
        lines = [Line(keyID: key.publicKey.keyID, signature: catalog.withUnsafeBytes { key.sign($0) })]
    }

    /// The file's text.
    public var encoded: [UInt8] {
        Array(lines.map { "ed25519 \($0.keyID) \(Data($0.signature).base64EncodedString())\n" }.joined().utf8)
    }

    /// Reads a signature file. `path` names it in errors.
    ///
    /// - Throws: `DeliveryError.catalogSignatureInvalid` with `.malformed`.
    public static func parse(_ bytes: some Collection<UInt8>, path: String) throws(DeliveryError) -> CatalogSignature {
        let malformed = DeliveryError.catalogSignatureInvalid(path: path, problem: .malformed)
        guard bytes.count <= maximumLength, let text = String(validating: Array(bytes), as: UTF8.self) else { throw malformed }
        let rows = text.split(separator: "\n", omittingEmptySubsequences: true)
        guard !rows.isEmpty, rows.count <= maximumLines else { throw malformed }
        var lines: [Line] = []
        for row in rows {
            let fields = row.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[0] == "ed25519", fields[1].utf8.count == 16,
                  fields[1].utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
                  let signature = Data(base64Encoded: String(fields[2])), signature.count == Ed25519.signatureSize else {
                throw malformed
            }
            lines.append(Line(keyID: String(fields[1]), signature: Array(signature)))
        }
        return CatalogSignature(lines: lines)
    }

    /// Checks that `key` signed `catalog`: some line names the key and
    /// verifies over the bytes.
    ///
    /// - Throws: `DeliveryError.catalogKeyMismatch` when no line names the
    ///   key; `.catalogSignatureInvalid` with `.mismatch` when the key's
    ///   lines do not verify.
    public func check(_ catalog: [UInt8], by key: PublicKey, path: String) throws(DeliveryError) {
        let mine = lines.filter { $0.keyID == key.keyID }
        guard !mine.isEmpty else {
            throw .catalogKeyMismatch(path: path, expected: key.keyID, found: keyIDs)
        }
        let verified = catalog.withUnsafeBytes { bytes in mine.contains { key.verifies($0.signature, of: bytes) } }
        guard verified else {
            throw .catalogSignatureInvalid(path: path, problem: .mismatch)
        }
    }
}

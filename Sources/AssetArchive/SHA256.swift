internal import CCrypto

/// SHA-256, computed by OpenSSL's libcrypto, for verifying downloaded packs.
///
/// Feed bytes with ``update(_:)`` and read the digest once with
/// ``finalize()``; or hash a buffer in one call with ``hash(_:)``.
public struct SHA256: Sendable {
    private var context = SHA256_CTX()

    /// A hasher with no bytes fed yet.
    /// The corresponding C function is `SHA256_Init`.
    public init() {
        sha256Functions.initialize(&context)
    }

    /// Feeds `bytes` to the hash. The corresponding C function is `SHA256_Update`.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        sha256Functions.update(&context, base, bytes.count)
    }

    /// The 32-byte digest of every byte fed.
    /// The corresponding C function is `SHA256_Final`.
    public consuming func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { sha256Functions.final(&context, $0.baseAddress!) }
        return digest
    }

    /// The 32-byte SHA-256 digest of `bytes`.
    public static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// `digest` in lowercase hexadecimal, two digits a byte.
    public static func hex(_ digest: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// OpenSSL 3 deprecates `SHA256_Init`, `SHA256_Update` and `SHA256_Final` in
/// favour of the EVP interface, but the CCrypto module exposes only
/// `<openssl/sha.h>`. The calls are made from deprecated witnesses of this
/// protocol, which keeps the deprecation to this one place instead of a
/// warning at every use.
private protocol SHA256Functions {
    static func initialize(_ context: UnsafeMutablePointer<SHA256_CTX>)
    static func update(_ context: UnsafeMutablePointer<SHA256_CTX>, _ bytes: UnsafeRawPointer, _ count: Int)
    static func final(_ context: UnsafeMutablePointer<SHA256_CTX>, _ digest: UnsafeMutablePointer<UInt8>)
}

private enum OpenSSLSHA256: SHA256Functions {
    @available(*, deprecated, message: "SHA256_* are deprecated in OpenSSL 3; see SHA256Functions")
    static func initialize(_ context: UnsafeMutablePointer<SHA256_CTX>) { _ = SHA256_Init(context) }

    @available(*, deprecated, message: "SHA256_* are deprecated in OpenSSL 3; see SHA256Functions")
    static func update(_ context: UnsafeMutablePointer<SHA256_CTX>, _ bytes: UnsafeRawPointer, _ count: Int) {
        _ = SHA256_Update(context, bytes, count)
    }

    @available(*, deprecated, message: "SHA256_* are deprecated in OpenSSL 3; see SHA256Functions")
    static func final(_ context: UnsafeMutablePointer<SHA256_CTX>, _ digest: UnsafeMutablePointer<UInt8>) {
        _ = SHA256_Final(digest, context)
    }
}

/// The SHA-256 functions, reached through ``SHA256Functions``.
private var sha256Functions: any SHA256Functions.Type { OpenSSLSHA256.self }

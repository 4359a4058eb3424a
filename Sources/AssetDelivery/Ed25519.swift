internal import CCrypto

/// Ed25519 (RFC 8032) through OpenSSL's libcrypto: key generation from a
/// random 32-byte seed, the public key of a seed, signing and verification
/// of whole messages (PureEdDSA, no pre-hash — what `openssl pkeyutl
/// -rawin` does).
enum Ed25519 {
    static let seedSize = 32
    static let publicKeySize = 32
    static let signatureSize = 64

    /// 32 bytes from the CSPRNG; `nil` if it fails. The corresponding C
    /// function is `RAND_bytes`.
    static func randomSeed() -> [UInt8]? {
        var seed = [UInt8](repeating: 0, count: seedSize)
        let ok = seed.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(seedSize)) }
        return ok == 1 ? seed : nil
    }

    /// The public key of `seed`; `nil` when the seed is not 32 bytes. The
    /// corresponding C functions are `EVP_PKEY_new_raw_private_key` and
    /// `EVP_PKEY_get_raw_public_key`.
    static func publicKey(seed: [UInt8]) -> [UInt8]? {
        guard let key = privateKey(seed) else { return nil }
        defer { EVP_PKEY_free(key) }
        var out = [UInt8](repeating: 0, count: publicKeySize)
        var length = publicKeySize
        let ok = out.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_public_key(key, $0.baseAddress, &length) }
        return ok == 1 && length == publicKeySize ? out : nil
    }

    /// The 64-byte signature of `message` by `seed`'s key. The corresponding
    /// C functions are `EVP_DigestSignInit` and `EVP_DigestSign`.
    static func sign(_ message: UnsafeRawBufferPointer, seed: [UInt8]) -> [UInt8]? {
        guard let key = privateKey(seed), let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context); EVP_PKEY_free(key) }
        guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1 else { return nil }
        var signature = [UInt8](repeating: 0, count: signatureSize)
        var length = signatureSize
        let ok = signature.withUnsafeMutableBufferPointer { out in
            bytes(of: message) { EVP_DigestSign(context, out.baseAddress, &length, $0, $1) }
        }
        return ok == 1 && length == signatureSize ? signature : nil
    }

    /// Whether `signature` is `publicKey`'s signature of `message`. A key or
    /// signature of the wrong length is `false`. The corresponding C
    /// functions are `EVP_PKEY_new_raw_public_key`, `EVP_DigestVerifyInit`
    /// and `EVP_DigestVerify`.
    static func verify(_ signature: [UInt8], of message: UnsafeRawBufferPointer, publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureSize, publicKey.count == publicKeySize else { return false }
        let made = publicKey.withUnsafeBufferPointer { EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, publicKeySize) }
        guard let key = made, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context); EVP_PKEY_free(key) }
        guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else { return false }
        let ok = signature.withUnsafeBufferPointer { sig in
            bytes(of: message) { EVP_DigestVerify(context, sig.baseAddress, signatureSize, $0, $1) }
        }
        return ok == 1
    }

    private static func privateKey(_ seed: [UInt8]) -> OpaquePointer? {
        guard seed.count == seedSize else { return nil }
        return seed.withUnsafeBufferPointer { EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, seedSize) }
    }

    /// Calls `body` with the message's bytes and count; an empty message
    /// gets a valid pointer too (libcrypto wants one that is not NULL).
    private static func bytes<R>(of message: UnsafeRawBufferPointer, _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
        if let base = message.baseAddress, message.count > 0 {
            return body(base.assumingMemoryBound(to: UInt8.self), message.count)
        }
        var zero: UInt8 = 0
        return withUnsafePointer(to: &zero) { body($0, 0) }
    }
}

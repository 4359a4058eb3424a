import Foundation
import AssetArchive
import AssetSystem

/// An Ed25519 public key: what a client pins, and what names a signature.
///
/// Its text form, the public key file `assetpack keygen` writes, is one line
/// `ed25519:` + the base64 of the 32 raw bytes — easy to paste into a
/// program's configuration. An OpenSSL `PUBLIC KEY` PEM (`openssl pkey
/// -pubout`) reads too.
public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 raw bytes.
    public let bytes: [UInt8]

    /// A key of 32 raw bytes; `nil` for another length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Ed25519.publicKeySize else { return nil }
        self.bytes = bytes
    }

    /// The first 8 bytes of the SHA-256 of the raw key, in hex: what a
    /// signature line names, so that "signed by another key" can be told
    /// from "altered".
    public var keyID: String {
        SHA256.hex(Array(bytes.withUnsafeBytes { SHA256.hash($0) }.prefix(8)))
    }

    /// `ed25519:` and the base64 of the raw key.
    public var description: String { "ed25519:" + Data(bytes).base64EncodedString() }

    private static let spkiPrefix: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]

    /// Reads the text form or a `PUBLIC KEY` PEM. `path` names it in errors.
    ///
    /// - Throws: `DeliveryError.invalidKey` with `.malformedPublicKey`.
    public static func parse(_ text: String, path: String) throws(DeliveryError) -> PublicKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("-----BEGIN PUBLIC KEY-----"),
           let der = PEM.decode(trimmed, label: "PUBLIC KEY"), der.starts(with: spkiPrefix),
           let key = PublicKey(bytes: Array(der.dropFirst(spkiPrefix.count))), der.count == spkiPrefix.count + 32 {
            return key
        }
        guard trimmed.hasPrefix("ed25519:"), let data = Data(base64Encoded: String(trimmed.dropFirst(8))),
              let key = PublicKey(bytes: Array(data)) else {
            throw .invalidKey(path: path, problem: .malformedPublicKey,
                              detail: "not an Ed25519 public key (expected 'ed25519:' and the base64 of 32 bytes)")
        }
        return key
    }

    /// Reads the public key file at `path`.
    ///
    /// - Throws: `DeliveryError.invalidKey`, `.system` when it cannot be read.
    public static func load(path: String) throws(DeliveryError) -> PublicKey {
        let bytes = try KeyFile.read(path, limit: 4096)
        return try parse(String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// Whether `signature` is this key's signature of `message`.
    public func verifies(_ signature: [UInt8], of message: UnsafeRawBufferPointer) -> Bool {
        Ed25519.verify(signature, of: message, publicKey: bytes)
    }
}

/// An Ed25519 private key, kept as its 32-byte seed.
///
/// Its file is PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), as `openssl
/// genpkey -algorithm ed25519` writes it, so `openssl pkey` reads it and
/// openssl's keys read here.
public struct SigningKey: Sendable {
    private let seed: [UInt8]
    /// Its public key.
    public let publicKey: PublicKey

    private static let pkcs8Prefix: [UInt8] = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]

    private init?(seed: [UInt8]) {
        guard let raw = Ed25519.publicKey(seed: seed), let key = PublicKey(bytes: raw) else { return nil }
        self.seed = seed
        self.publicKey = key
    }

    /// A new key from the system's CSPRNG.
    ///
    /// - Throws: `DeliveryError.system` (`EIO`) when libcrypto cannot make one.
    public static func generate() throws(DeliveryError) -> SigningKey {
        guard let seed = Ed25519.randomSeed(), let key = SigningKey(seed: seed) else {
            throw .system(Errno.ioError.with(operation: "generate an Ed25519 key (RAND_bytes)"))
        }
        return key
    }

    /// Reads a PKCS#8 PEM private key. `path` names it in errors.
    ///
    /// - Throws: `DeliveryError.invalidKey` with `.malformedPrivateKey`.
    public static func parse(_ text: String, path: String) throws(DeliveryError) -> SigningKey {
        guard let der = PEM.decode(text.trimmingCharacters(in: .whitespacesAndNewlines), label: "PRIVATE KEY"),
              der.count == pkcs8Prefix.count + Ed25519.seedSize, der.starts(with: pkcs8Prefix),
              let key = SigningKey(seed: Array(der.dropFirst(pkcs8Prefix.count))) else {
            throw .invalidKey(path: path, problem: .malformedPrivateKey,
                              detail: "not an Ed25519 private key (expected PKCS#8 PEM, as 'assetpack keygen' or 'openssl genpkey -algorithm ed25519' writes)")
        }
        return key
    }

    /// Reads the private key file at `path`.
    ///
    /// - Throws: `DeliveryError.invalidKey`, `.system` when it cannot be read.
    public static func load(path: String) throws(DeliveryError) -> SigningKey {
        let bytes = try KeyFile.read(path, limit: 4096)
        return try parse(String(decoding: bytes, as: UTF8.self), path: path)
    }

    /// The PKCS#8 PEM text of the key.
    public var pem: String { PEM.encode(Self.pkcs8Prefix + seed, label: "PRIVATE KEY") }

    /// The signature of `message`.
    public func sign(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        // Signing with a seed that made a public key cannot fail but for
        // memory exhaustion.
        guard let signature = Ed25519.sign(message, seed: seed) else { preconditionFailure("Ed25519 signing failed") }
        return signature
    }

    /// Writes the private key to `privatePath` (mode 0600) and the public key
    /// to `publicPath` (one line), refusing to replace either.
    ///
    /// - Throws: `DeliveryError.system` with `EEXIST` naming a file that
    ///   exists, or the error of creating or writing one.
    public func write(privateKeyTo privatePath: String, publicKeyTo publicPath: String) throws(DeliveryError) {
        for path in [privatePath, publicPath] {
            let exists: Bool
            do { exists = try FileDescriptor.status(of: path, followingLinks: false) != nil } catch { throw .system(error) }
            if exists { throw .system(Errno.fileExists.with(operation: "create key file", path: path)) }
        }
        try KeyFile.create(privatePath, contents: Array(pem.utf8), permissions: 0o600)
        do {
            try KeyFile.create(publicPath, contents: Array((publicKey.description + "\n").utf8), permissions: 0o644)
        } catch {
            // A private key without its public half is of no use, and a
            // secret left lying where the caller did not expect one.
            try? FileSystem.unlink(privatePath)
            throw error
        }
    }
}

/// PEM armour (RFC 7468): a label, base64 in lines of 64, the end line.
enum PEM {
    static func encode(_ der: [UInt8], label: String) -> String {
        let text = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(text)\n-----END \(label)-----\n"
    }

    static func decode(_ text: String, label: String) -> [UInt8]? {
        let begin = "-----BEGIN \(label)-----", end = "-----END \(label)-----"
        guard text.hasPrefix(begin), text.hasSuffix(end) else { return nil }
        let body = text.dropFirst(begin.count).dropLast(end.count).filter { !$0.isWhitespace }
        return Data(base64Encoded: String(body)).map(Array.init)
    }
}

/// Small files read and created whole: keys, signatures, trust records.
enum KeyFile {
    /// The file's bytes, refusing one longer than `limit` or not regular.
    static func read(_ path: String, limit: Int, relativeTo anchor: DirectoryAnchor = .workingDirectory) throws(DeliveryError) -> [UInt8] {
        do throws(Errno) {
            let fd = try FileDescriptor.open(path, [.readOnly], relativeTo: anchor)
            let status = try fd.status()
            guard status.isRegularFile, status.size <= Int64(limit) else {
                throw Errno.invalidArgument.with(operation: "read (not a regular file of at most \(limit) bytes)", path: path)
            }
            return try fd.readToEnd()
        } catch {
            throw .system(error.with(operation: error.operation, path: path))
        }
    }

    /// Creates `path` (`O_EXCL`) holding `contents`, flushed to storage
    /// with its name (the file, then its directory).
    static func create(_ path: String, contents: [UInt8], permissions: UInt32) throws(DeliveryError) {
        do throws(Errno) {
            let fd = try FileDescriptor.open(path, [.writeOnly, .create, .exclusive, .noFollow], permissions: permissions)
            do throws(Errno) {
                try fd.write(contents)
                try fd.sync()
                try FileSystem.syncDirectory(containing: path)
            } catch {
                // Made here and not whole: not left behind.
                try? FileSystem.unlink(path)
                throw error
            }
        } catch {
            throw .system(error.with(operation: error.operation, path: path))
        }
    }
}

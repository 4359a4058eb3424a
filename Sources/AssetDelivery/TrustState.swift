import Foundation
internal import AssetJSON
import AssetArchive
import AssetSystem

/// What a client has accepted from one catalog source, key and channel: the
/// highest sequence number and the SHA-256 of that catalog's bytes. Kept so
/// that a restarted client still refuses an older catalog (a rollback).
///
/// One small JSON file per source, key and channel in the state directory
/// (`<container>/trust/<16 hex>.json`, the hex from the SHA-256 of the key,
/// the channel and the source), replaced atomically (``AtomicFile``), read and written
/// under an OFD lock on `<16 hex>.lock` so that two processes accepting at
/// once cannot lose a sequence number. Files are opened relative to the
/// directory with `O_NOFOLLOW`.
public struct TrustRecord: Sendable, Hashable {
    /// The key in its text form, or `none` for a client without one.
    public let key: String
    /// The channel the catalog named (and the client asked for).
    public let channel: String
    /// The catalog's URL or path, as the client names it.
    public let source: String
    /// The accepted catalog's sequence number.
    public let sequence: UInt64
    /// The SHA-256 of the accepted catalog's bytes, in hex.
    public let sha256: String
    /// When it was accepted.
    public let accepted: CatalogTime

    public init(key: String, channel: String, source: String, sequence: UInt64, sha256: String, accepted: CatalogTime) {
        self.key = key
        self.channel = channel
        self.source = source
        self.sequence = sequence
        self.sha256 = sha256
        self.accepted = accepted
    }

    /// The record's file name stem for `key`, `channel` and `source`.
    static func stem(key: String, channel: String, source: String) -> String {
        let bytes = Array((key + "\n" + channel + "\n" + source).utf8)
        return SHA256.hex(Array(bytes.withUnsafeBytes { SHA256.hash($0) }.prefix(8)))
    }

    var encoded: [UInt8] {
        let value: JSONValue = [
            "format": 2, "key": .string(key), "channel": .string(channel), "source": .string(source), "sequence": .number(JSONNumber(sequence)),
            "sha256": .string(sha256), "accepted": .string(accepted.description),
        ]
        return value.encoded(sortedKeys: true) + [0x0a]
    }

    /// Reads a record; `path` names it in errors.
    static func parse(_ bytes: [UInt8], path: String) throws(DeliveryError) -> TrustRecord {
        func bad(_ detail: String) -> DeliveryError { .invalidTrustState(path: path, detail: detail) }
        guard let object = (try? JSONValue.parse(bytes))?.objectValue else { throw bad("not a JSON object") }
        guard object["format"]?.numberValue?.text == "2" else { throw bad("unknown format") }
        guard let key = object["key"]?.stringValue, let channel = object["channel"]?.stringValue, let source = object["source"]?.stringValue,
              let sequence = object["sequence"]?.numberValue?.uint64Value,
              let sha256 = object["sha256"]?.stringValue, sha256.utf8.count == 64,
              let accepted = object["accepted"]?.stringValue.flatMap(CatalogTime.init(rfc3339:)) else {
            throw bad("a field is missing or malformed")
        }
        return TrustRecord(key: key, channel: channel, source: source, sequence: sequence, sha256: sha256, accepted: accepted)
    }
}

/// The directory of ``TrustRecord``s.
struct TrustDirectory: ~Copyable {
    let path: String
    let descriptor: FileDescriptor

    /// Opens (creating) the directory at `path`, refusing a symlink.
    init(path: String) throws(DeliveryError) {
        do {
            try FileSystem.createDirectories(path, permissions: 0o755)
            descriptor = try FileDescriptor.open(path, [.readOnly, .directory, .noFollow])
        } catch {
            throw .system(error.with(operation: error.operation, path: path))
        }
        self.path = path
    }

    /// Runs `body` with the record of `key`, `channel` and `source` (or
    /// `nil`), under the record's lock; writes what `body` returns, if anything.
    func update(key: String, channel: String, source: String,
                _ body: (TrustRecord?) throws(DeliveryError) -> TrustRecord?) throws(DeliveryError) {
        let stem = TrustRecord.stem(key: key, channel: channel, source: source)
        let anchor = DirectoryAnchor.descriptor(descriptor.rawValue)
        let lock: FileLock
        do {
            lock = try FileLock(name: stem + ".lock", relativeTo: anchor, path: path + "/" + stem + ".lock", wait: .seconds(30))
        } catch {
            switch error {
            case .timedOut(let t): throw .store(.lockTimeout(t.named("the lock of the catalog's trust record")))
            case .system(let e): throw .system(e)
            }
        }
        let file = stem + ".json"
        let current = try read(file, anchor: anchor)
        if let current, current.key != key || current.channel != channel || current.source != source {
            throw .invalidTrustState(path: path + "/" + file, detail: "it records another key, channel or source")
        }
        if let next = try body(current) {
            do { try AtomicFile.replace(file, in: descriptor, path: path, contents: next.encoded) } catch { throw .system(error) }
        }
        _ = consume lock
    }

    /// The record of `key`, `channel` and `source`, without taking its lock.
    func record(key: String, channel: String, source: String) throws(DeliveryError) -> TrustRecord? {
        try read(TrustRecord.stem(key: key, channel: channel, source: source) + ".json", anchor: .descriptor(descriptor.rawValue))
    }

    private func read(_ file: String, anchor: DirectoryAnchor) throws(DeliveryError) -> TrustRecord? {
        let bytes: [UInt8]
        do {
            let fd = try FileDescriptor.open(file, [.readOnly, .noFollow], relativeTo: anchor)
            bytes = try fd.readToEnd()
        } catch where error == .noSuchFile {
            return nil
        } catch {
            throw .system(error.with(operation: error.operation, path: path + "/" + file))
        }
        return try TrustRecord.parse(bytes, path: path + "/" + file)
    }
}

import Foundation
import AssetArchive
internal import AssetJSON
public import AssetStore
import AssetSystem

/// A catalog source the container's owner lets the daemon download from for
/// its other peers: a URL, the key its catalog must be signed by and the
/// channel it must name, and the CA file the daemon then trusts besides
/// the system's.
public struct ConfiguredSource: Sendable, Hashable {
    public var url: String
    public var key: PublicKey
    /// The channel the catalog must name (`stable`), and so the one a
    /// request must ask for: ``Catalog/defaultChannel`` when the file gives
    /// none, as a client asks for it when not told otherwise.
    public var channel: String
    /// An absolute path to a PEM file of certificate authorities.
    public var caFile: String?

    public init(url: String, key: PublicKey, channel: String = Catalog.defaultChannel, caFile: String? = nil) {
        self.url = url
        self.key = key
        self.channel = channel
        self.caFile = caFile
    }
}

/// The container's configured sources: `<container>/trust/sources.json`,
/// one JSON object written by the owner (`assetpack sources add|rm`),
///
/// ```json
/// {"format":1,"sources":[{"caFile":"/etc/ssl/cdn.pem","channel":"stable",
///   "key":"ed25519:…","url":"https://cdn.example/packs/catalog.json"}]}
/// ```
///
/// replaced whole (``AtomicFile``, mode 0644) under an OFD lock on
/// `trust/sources.lock`, so two changes at once cannot lose one. The daemon
/// reads it at each download request of a peer, so a change applies at
/// once and lasts across restarts. A source is written with its channel;
/// one without (a file from before channels were enforced) is of the
/// `default` channel.
///
/// It is trusted only as its owner's word: ``read(in:owner:)`` refuses a
/// file that is not a regular file, is owned by another user than the one
/// given (the daemon's), or that its group or others may write — and a
/// `trust/` directory that is a symlink. Every name is opened relative to
/// the container's descriptor with `O_NOFOLLOW` (and `O_NONBLOCK`, so a FIFO
/// never blocks the daemon).
public enum ConfiguredSources {
    public static let directoryName = "trust"
    public static let fileName = "sources.json"
    static let lockName = "sources.lock"
    /// The longest file read.
    public static let maximumSize = 1 << 20

    /// The sources in `root`'s `trust/sources.json`; none when there is no file.
    ///
    /// - Parameter owner: the user the file must belong to; `nil` skips the
    ///   owner and mode checks (a listing for people).
    /// - Throws: `.invalidTrustState` naming the file when it is not a
    ///   regular file, belongs to another user, may be written by its group
    ///   or others, or does not parse (a channel that breaks the
    ///   channel-name rules among it); `.store(.symlinkInContainer)`;
    ///   `.system`.
    public static func read(in root: LayoutDirectory, owner: UInt32?) throws(DeliveryError) -> [ConfiguredSource] {
        let trust = try storing(root.subdirectory(directoryName, creating: false))
        let path = trust.path(of: fileName)
        let fd: FileDescriptor
        do { fd = try trust.openFile(fileName, [.readOnly, .nonBlocking]) } catch where error == .noSuchFile {
            return []
        } catch {
            throw .store(trust.storeError(opening: fileName, error))
        }
        return try parse(try checkedBytes(of: fd, path: path, owner: owner), path: path)
    }

    /// The bytes of the open sources file, once it passed the checks
    /// ``read(in:owner:)`` lists.
    private static func checkedBytes(of fd: borrowing FileDescriptor, path: String, owner: UInt32?) throws(DeliveryError) -> [UInt8] {
        let status: FileStatus, writer: UInt32
        do {
            status = try fd.status()
            writer = try fd.owner().uid
        } catch {
            throw .system(error.with(operation: error.operation, path: path))
        }
        func refused(_ why: String) -> DeliveryError { .invalidTrustState(path: path, detail: why) }
        guard status.isRegularFile else { throw refused("not a regular file") }
        if let owner {
            guard writer == owner else { throw refused("owned by uid \(writer), not by uid \(owner)") }
            guard status.mode & 0o022 == 0 else {
                throw refused("its group or others may write it (mode \(String(status.mode & 0o777, radix: 8)))")
            }
        }
        guard status.size <= Int64(maximumSize) else { throw refused("longer than \(maximumSize) bytes") }
        do { return try fd.read(count: maximumSize, at: 0) } catch { throw .system(error.with(operation: error.operation, path: path)) }
    }


    /// Changes the sources under the lock: `body` gets the current ones
    /// (read as ``read(in:owner:)`` with this process's user) and returns
    /// the new ones, which are written (mode 0644).
    ///
    /// - Throws: what ``read(in:owner:)`` and `body` throw; `.system`.
    public static func update(in root: LayoutDirectory,
                              _ body: ([ConfiguredSource]) throws(DeliveryError) -> [ConfiguredSource]) throws(DeliveryError) {
        let trust = try storing(root.subdirectory(directoryName, creating: true))
        let anchor = try storing(trust.anchor())
        let lock: FileLock
        do { lock = try FileLock(name: lockName, relativeTo: anchor, path: trust.path(of: lockName), wait: .seconds(30)) } catch {
            switch error {
            case .timedOut(let t): throw .store(.lockTimeout(t.named("the lock of the configured sources")))
            case .system(let e): throw .system(e)
            }
        }
        let next = try body(try read(in: root, owner: geteuid()))
        try storing(trust.withDescriptor { (directory) throws(Errno) in
            try AtomicFile.replace(fileName, in: directory, path: trust.path, contents: encoded(next), permissions: 0o644)
        })
        _ = consume lock
    }

    /// The file's bytes for `sources`: keys sorted, one final newline.
    static func encoded(_ sources: [ConfiguredSource]) -> [UInt8] {
        let list: [JSONValue] = sources.map { source in
            var members: [(String, JSONValue)] = [("url", .string(source.url)), ("key", .string(source.key.description)),
                                                  ("channel", .string(source.channel))]
            if let caFile = source.caFile { members.append(("caFile", .string(caFile))) }
            return .object(JSONObject(uniqueKeysWithValues: members))
        }
        let file: JSONValue = ["format": 1, "sources": .array(list)]
        return file.encoded(sortedKeys: true) + [0x0a]
    }

    /// The sources in `bytes`; `path` names the file in errors.
    ///
    /// - Throws: `.invalidTrustState` saying what is wrong.
    static func parse(_ bytes: [UInt8], path: String) throws(DeliveryError) -> [ConfiguredSource] {
        func bad(_ detail: String) -> DeliveryError { .invalidTrustState(path: path, detail: detail) }
        guard let object = (try? JSONValue.parse(bytes))?.objectValue else { throw bad("not a JSON object") }
        guard object["format"]?.numberValue?.text == "1" else { throw bad("unknown format") }
        guard let list = object["sources"]?.arrayValue else { throw bad("'sources' is missing or not an array") }
        var sources: [ConfiguredSource] = []
        for (i, item) in list.enumerated() {
            guard let o = item.objectValue, let url = o["url"]?.stringValue, let text = o["key"]?.stringValue,
                  let key = try? PublicKey.parse(text, path: path) else {
                throw bad("sources[\(i)] needs a 'url' and a 'key' (ed25519:…)")
            }
            let channel = o["channel"]?.stringValue
            let caFile = o["caFile"]?.stringValue
            guard (o["channel"] == nil || channel != nil) && (o["caFile"] == nil || caFile != nil) else {
                throw bad("sources[\(i)]: 'channel' and 'caFile' must be strings")
            }
            if let channel, let problem = Catalog.channelProblem(channel) {
                throw bad("sources[\(i)]: channel '\(MemberPath.escapingControlCharacters(channel))': \(problem)")
            }
            sources.append(ConfiguredSource(url: url, key: key, channel: channel ?? Catalog.defaultChannel, caFile: caFile))
        }
        return sources
    }
}

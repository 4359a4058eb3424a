import AssetIndex

/// One entry of the download journal (the `journal` database, keyed by
/// pack ID): a download in progress or owed, persisted so that it survives
/// a crash or restart.
public struct JournalEntry: Sendable, Hashable {
    public enum State: UInt8, Sendable {
        /// Bytes are arriving in `staging/<stagingName>`.
        case downloading = 1
        /// The installed archive was found damaged and quarantined: the pack
        /// must be downloaded again from `url`.
        case redownload = 2
    }

    public var pack: String
    public var state: State
    /// Where the archive comes from.
    public var url: String
    /// The catalog's version of the pack, if known.
    public var catalogVersion: String?
    /// The partial file in `staging/`, for a download in progress.
    public var stagingName: String?
    /// The archive's expected size and SHA-256, when the catalog gave them.
    public var expectedSize: UInt64
    public var sha256: [UInt8]
    /// The strong validator the server gave for the bytes already in the
    /// partial file — its `ETag`, or a `Last-Modified` date when it sent no
    /// ETag — sent as `If-Range` when the download resumes; `nil` when it
    /// gave none (a weak ETag is none: `If-Range` may not carry it).
    public var etag: String?
    /// For a delta download (bytes copied from installed archives, the rest
    /// fetched in ranges), the SHA-256 of the piece map it follows; `nil`
    /// for a download of the whole file from byte 0.
    public var deltaPieceMap: [UInt8]?

    /// The suffix of partial downloads in `staging/`.
    public static let stagingSuffix = ".download"
    /// The suffix, after a delta download's name, of the file listing the
    /// byte ranges it completed (`<pack>-<random>.download.ranges`).
    public static let rangesSuffix = ".ranges"

    public init(pack: String, state: State, url: String, catalogVersion: String?, stagingName: String?,
                expectedSize: UInt64, sha256: [UInt8], etag: String? = nil, deltaPieceMap: [UInt8]? = nil) {
        self.pack = pack
        self.state = state
        self.url = url
        self.catalogVersion = catalogVersion
        self.stagingName = stagingName
        self.expectedSize = expectedSize
        self.sha256 = sha256
        self.etag = etag
        self.deltaPieceMap = deltaPieceMap
    }

    var encoded: [UInt8] {
        var w = ByteWriter(capacity: 128)
        w.u8(1)
        w.u8(state.rawValue)
        w.string(url)
        w.u8(catalogVersion == nil ? 0 : 1)
        w.string(catalogVersion ?? "")
        w.string(stagingName ?? "")
        w.u64(expectedSize)
        w.lengthPrefixed(sha256)
        w.string(etag ?? "")
        if let deltaPieceMap {
            w.u8(1)
            w.lengthPrefixed(deltaPieceMap)
        }
        return w.bytes
    }

    /// Decodes pack `pack`'s entry; `nil` when the bytes are not one. An
    /// entry written before the ETag was recorded ends after the SHA-256;
    /// one of a download of the whole file ends after the ETag.
    init?(pack: String, decoding bytes: UnsafeRawBufferPointer) {
        var r = ByteReader(bytes)
        guard r.u8() == 1, let rawState = r.u8(), let state = State(rawValue: rawState), let url = r.string(),
              let hasVersion = r.u8(), let version = r.string(), let staging = r.string(),
              let size = r.u64(), let sha = r.lengthPrefixed() else { return nil }
        var etag: String?
        var delta: [UInt8]?
        if !r.isAtEnd {
            guard let tag = r.string() else { return nil }
            etag = tag.isEmpty ? nil : tag
            if !r.isAtEnd {
                guard r.u8() == 1, let map = r.lengthPrefixed() else { return nil }
                delta = Array(map)
            }
            guard r.isAtEnd else { return nil }
        }
        self.init(pack: pack, state: state, url: url, catalogVersion: hasVersion == 1 ? version : nil,
                  stagingName: staging.isEmpty ? nil : staging, expectedSize: size, sha256: Array(sha), etag: etag,
                  deltaPieceMap: delta)
    }
}

extension AssetStore {
    /// Every journal entry; undecodable ones are skipped.
    public func journalEntries() throws(StoreError) -> [JournalEntry] {
        try snapshot { (txn) throws(StoreError) in
            var entries: [JournalEntry] = []
            try indexCall { () throws(LMDBError) in
                try txn.forEach(journal) { key, value in
                    if let e = JournalEntry(pack: String(decoding: key, as: UTF8.self), decoding: value) { entries.append(e) }
                    return true
                }
            }
            return entries
        }
    }
}

extension AssetStore {
    /// Pack `id`'s journal entry, or `nil`.
    public func journalEntry(forPack id: String) throws(StoreError) -> JournalEntry? {
        try snapshot { (txn) throws(StoreError) in
            guard let bytes = try indexCall({ () throws(LMDBError) in try txn.get(journal, key: id) }) else { return nil }
            return JournalEntry(pack: id, decoding: bytes)
        }
    }

    /// Records `entry` in the journal (replacing the pack's entry), committed
    /// and durable when this returns.
    public func putJournalEntry(_ entry: JournalEntry) throws(StoreError) {
        _ = try update { (txn) throws(StoreError) in
            try indexCall { () throws(LMDBError) in try txn.put(journal, key: entry.pack, value: entry.encoded) }
        }
    }

    /// Removes pack `id`'s journal entry, if it has one.
    public func removeJournalEntry(forPack id: String) throws(StoreError) {
        try update { (txn) throws(StoreError) in
            try indexCall { () throws(LMDBError) in _ = try txn.delete(journal, key: id) }
        }
    }
}

import AssetArchive
import AssetIndex

/// The container's ``PackLimits``: recorded in the index under `meta/limits`,
/// read by installs and by reads of deflated members.
extension AssetStore {
    /// The limits this store enforces: ``Options/limits`` when it was opened
    /// with some, else the container's recorded ones, else the defaults.
    /// A change another process records is seen at its commit.
    public func limits() throws(StoreError) -> PackLimits {
        if let limitsOverride { return limitsOverride }
        let commit = environment.lastCommittedTransactionID
        if let cached = shared.limits.withLock({ $0 }), cached.commit == commit { return cached.limits }
        let (limits, seen) = try snapshot { (txn) throws(StoreError) in
            (try Self.recordedLimits(in: txn, meta: meta) ?? .defaults, txn.snapshotID)
        }
        shared.limits.withLock { if $0 == nil || $0!.commit < seen { $0 = (seen, limits) } }
        return limits
    }

    /// The limits the container records, or `nil` when it records none (or
    /// a record this build cannot read), so that the defaults apply.
    public func recordedLimits() throws(StoreError) -> PackLimits? {
        try snapshot { (txn) throws(StoreError) in try Self.recordedLimits(in: txn, meta: meta) }
    }

    /// Records `limits` as the container's, for every store that opens it
    /// (one that was opened with ``Options/limits`` keeps its own); `nil`
    /// removes the record, so that the defaults apply. Installs that have
    /// read the limits already finish under the old ones.
    ///
    /// - Throws: `.index`.
    public func setLimits(_ limits: PackLimits?) throws(StoreError) {
        try update { (txn) throws(StoreError) in
            try indexCall { () throws(LMDBError) in
                if let limits {
                    try txn.put(meta, key: IndexSchema.limitsKey, value: limits.encoded)
                } else {
                    _ = try txn.delete(meta, key: IndexSchema.limitsKey)
                }
            }
        }
    }

    static func recordedLimits(in txn: borrowing some ReadableTransaction & ~Copyable, meta: Database) throws(StoreError) -> PackLimits? {
        guard let value = try indexCall({ () throws(LMDBError) in try txn.get(meta, key: IndexSchema.limitsKey) }) else { return nil }
        return PackLimits(decoding: value)
    }

    /// Refuses a read of the deflated member `record` when it is over the
    /// limits (installed under looser ones), before anything is allocated.
    @inline(__always)
    func checkLimits(of record: MemberRecord, path: String, pack: String) throws(StoreError) {
        guard record.method == .deflated else { return }
        if let problem = try limits().problem(method: record.method, size: record.size, storedSize: record.storedSize) {
            throw .limitExceeded(archive: container.packsPath + "/" + IndexSchema.archiveName(pack: pack, archiveKey: record.archiveKey),
                                 pack: pack, member: path, problem: problem)
        }
    }
}

import AssetIndex

/// The `paths` database: member path → the IDs of the packs that hold it,
/// sorted and `\0`-separated. Serves lookups by path alone (Apple's shared
/// namespace) with one `get`.
enum PathIndex {
    /// Splits a stored value into pack IDs.
    static func packs(in value: UnsafeRawBufferPointer) -> [String] {
        value.split(separator: 0).map { String(decoding: UnsafeRawBufferPointer(rebasing: $0), as: UTF8.self) }
    }

    static func add(pack: String, to path: some IndexBytes, txn: borrowing WriteTransaction, paths: Database) throws(StoreError) {
        // Most paths are in no other pack: the one ID is stored as it is, in
        // one step when the path has no value yet.
        let stored = try indexCall { () throws(LMDBError) in try txn.put(paths, key: path, value: pack, flags: .noOverwrite) }
        if stored { return }
        var ids = try current(path, txn: txn, paths: paths)
        guard !ids.contains(pack) else { return }
        ids.append(pack)
        try store(ids, at: path, txn: txn, paths: paths)
    }

    static func remove(pack: String, from path: [UInt8], txn: borrowing WriteTransaction, paths: Database) throws(StoreError) {
        var ids = try current(path, txn: txn, paths: paths)
        guard let i = ids.firstIndex(of: pack) else { return }
        ids.remove(at: i)
        try store(ids, at: path, txn: txn, paths: paths)
    }

    private static func current(_ path: some IndexBytes, txn: borrowing WriteTransaction, paths: Database) throws(StoreError) -> [String] {
        try indexCall { () throws(LMDBError) in try txn.get(paths, key: path).map(packs(in:)) ?? [] }
    }

    private static func store(_ ids: [String], at path: some IndexBytes, txn: borrowing WriteTransaction, paths: Database) throws(StoreError) {
        if ids.isEmpty {
            try indexCall { () throws(LMDBError) in _ = try txn.delete(paths, key: path) }
        } else {
            let value = Array(ids.sorted().joined(separator: "\0").utf8)
            try indexCall { () throws(LMDBError) in try txn.put(paths, key: path, value: value) }
        }
    }
}

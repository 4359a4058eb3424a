import AssetIndex

/// Where the store meets the index: every LMDB call goes through these, so
/// index errors become `StoreError.index` in one place.
extension AssetStore {
    /// Runs `body` in a read snapshot.
    @inline(__always)
    func snapshot<R>(_ body: (borrowing ReadTransaction) throws(StoreError) -> R) throws(StoreError) -> R {
        do {
            return try environment.read(body)
        } catch {
            switch error {
            case .lmdb(let e): throw .fromIndex(e)
            case .body(let e): throw e
            }
        }
    }

    /// Runs `body` in a write transaction and commits it.
    func update<R>(reserving: Int = 0, _ body: (borrowing WriteTransaction) throws(StoreError) -> R) throws(StoreError) -> R {
        do {
            return try environment.write(reserving: reserving, body)
        } catch {
            switch error {
            case .lmdb(let e): throw .fromIndex(e)
            case .body(let e): throw e
            }
        }
    }
}

/// Runs one index call, turning its error into `StoreError.index`.
@inline(__always) @discardableResult
func indexCall<R>(_ body: () throws(LMDBError) -> R) throws(StoreError) -> R {
    do { return try body() } catch { throw .fromIndex(error) }
}

import AssetStore

extension AssetPackManager {
    /// Writes the bytes of the file at `path` in the pack `id` (or in
    /// whichever installed pack holds it) to the descriptor `fd` — a pipe, a
    /// socket, a file, standard output — holding at most 1 MiB of it in
    /// memory however large the file is: a deflated file is inflated by a
    /// zlib stream, a stored one goes out with `sendfile` from the archive
    /// (by `write` where the kernel refuses, as for a terminal), and the
    /// archive's pages are not kept resident once written.
    ///
    /// The CRC-32 is checked before the last piece goes out (a stored
    /// file's unless `verifyingChecksum` is `false`). A file of up to 1 MiB
    /// is therefore written checked or not at all; of a larger one, the bytes
    /// written before a thrown error must not be trusted, as with `unzip -p`.
    /// `fd` stays the caller's: it is neither closed nor repositioned except
    /// by the writes.
    ///
    /// - Returns: the number of bytes written: the file's size.
    /// - Throws: as ``contents(at:searchingInAssetPackWithID:verifyingChecksum:)``
    ///   (`.badArchive` with `.crcMismatch`, `.corruptData` or
    ///   `.sizeMismatch` for damaged data, `.limitExceeded`), and `.system`
    ///   when writing fails (``AssetPackError/systemError`` `EPIPE` when the
    ///   reader of a pipe went away).
    @discardableResult
    public func write(_ path: String, searchingInAssetPackWithID id: String? = nil, to fd: Int32,
                      verifyingChecksum: Bool = true) throws(AssetPackError) -> Int64 {
        Int64(try engine { () throws(StoreError) in
            try store.write(path, inPack: id, to: fd, checkingStored: verifyingChecksum)
        })
    }
}

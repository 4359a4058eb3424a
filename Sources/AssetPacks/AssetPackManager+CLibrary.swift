import AssetStore

// What libassetpacks (AssetPacksC) needs beyond the public API: a member's
// description found as reads find it, without reading it (`ap_stat`,
// `ap_copy`'s size query). `package`, so it is not part of the Swift API.

extension AssetPackManager {
    /// The member at `path` in pack `id`, or in whichever installed pack
    /// holds it, without touching its archive.
    ///
    /// - Throws: `.assetPackNotFound`, `.fileNotFound`, `.ambiguousPath`,
    ///   `.corruptRecord`, as ``contents(at:searchingInAssetPackWithID:verifyingChecksum:)``.
    package func member(at path: String, searchingInAssetPackWithID id: String?) throws(AssetPackError) -> AssetMember {
        let (pack, record) = try engine { () throws(StoreError) in try store.member(at: path, inPack: id) }
        return AssetMember(pack: pack, path: path, record: record)
    }
}

extension AssetMember {
    init(pack: String, path: String, record: MemberRecord) {
        self.pack = pack
        self.path = path
        size = record.size
        storedSize = record.storedSize
        method = Method(record.method)
        crc32 = record.crc32
    }
}

extension AssetPackManager {
    /// ``contents(at:searchingInAssetPackWithID:verifyingChecksum:)`` as a
    /// pointer and the object that keeps it valid, for `ap_read`: a C caller
    /// holds a retain of the owner instead of a `Data` in a box.
    ///
    /// - Throws: as ``contents(at:searchingInAssetPackWithID:verifyingChecksum:)``.
    package func borrowedContents(at path: String, searchingInAssetPackWithID id: String?) throws(AssetPackError)
        -> (bytes: UnsafeRawBufferPointer, owner: AnyObject) {
        let borrowed = try engine { () throws(StoreError) in try store.borrowedContents(at: path, inPack: id) }
        return (borrowed.bytes, borrowed.owner)
    }
}

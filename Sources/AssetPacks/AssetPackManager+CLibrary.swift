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

import AssetPacks
import AssetSystem
import AssetStore

/// `small-read` and `small-read-consume`: stored members of 1–16 KiB at
/// random paths, read by path in random order with a warm cache.
///
/// - assetpacks: `contents(at:searchingInAssetPackWithID:)` → `Data` into
///   the archive mapping (pack ID given, as an app names its pack);
/// - files: `open`/`read`/`close` of the extracted file into a buffer;
/// - sqlite: `sqlar` row by name, `sqlite3_blob_read` into a buffer;
/// - libzip: the same pack file opened once, member by name into a buffer;
/// - lmdb-raw: `mdb_get` of the same bytes under the path, in a renewed
///   read transaction (the ceiling for a lookup);
/// - c-api: libassetpacks' `ap_read` + `ap_release` with C-string paths, as
///   a C program reads (the same container; target: within 1.15× of assetpacks);
/// - physfs: PhysicsFS with the same pack file mounted, `PHYSFS_openRead` +
///   `PHYSFS_readBytes` by path into a buffer.
///
/// With `consume`, every contender then sums the bytes it obtained.
enum SmallReadScenario {
    static let plain = Scenario(
        "small-read", "stored members of 1–16 KiB by path: time until the bytes are readable in memory"
    ) { ctx in [try run(ctx, consume: false)] }

    static let consume = Scenario(
        "small-read-consume", "as `small-read`, and every contender then sums the bytes"
    ) { ctx in [try run(ctx, consume: true)] }

    /// Issue 2's first benchmark: a 4 KiB stored member by path, against
    /// `open`/`read`/`close` of the same file extracted on disk.
    static let fourKiB = Scenario(
        "small-read-4k", "stored members of exactly 4 KiB by path, against open/read/close of the extracted files"
    ) { ctx in
        let d = try SmallDataset.prepare(ctx.workspace, deflated: false, sizes: 4096 ... 4096)
        let manager = try AssetPackManager(container: .init(path: d.container.path))
        let measured = try Competition.run([
            Contender("assetpacks", bytes: d.members.sizes, ContentsRead(manager: manager, pack: d.packID, paths: d.members.paths, consume: false)),
            Contender("files", bytes: d.members.sizes, FilesRead(paths: d.filePaths, buffer: ByteBuffer(capacity: 4096), consume: false)),
        ], items: d.members.count, plan: ctx.scale.plan, seed: 0x4C)
        return [ScenarioResult(name: "small-read-4k",
                               summary: "\(Format.count(d.members.count)) stored members of 4 KiB, random paths, warm cache, by path",
                               measurements: measured)]
    }

    static func run(_ ctx: Context, consume: Bool) throws -> ScenarioResult {
        let d = try SmallDataset.prepare(ctx.workspace, deflated: false)
        let manager = try AssetPackManager(container: .init(path: d.container.path))
        let sizes = d.members.sizes
        let contenders = [
            Contender("assetpacks", bytes: sizes,
                      ContentsRead(manager: manager, pack: d.packID, paths: d.members.paths, consume: consume)),
            Contender("files", bytes: sizes,
                      FilesRead(paths: d.filePaths, buffer: ByteBuffer(capacity: d.largest), consume: consume)),
            Contender("sqlite", bytes: sizes,
                      SQLiteRead(archive: try SQLiteArchive(readingFrom: d.sqlitePath), names: d.names,
                                 buffer: ByteBuffer(capacity: d.largest), inflated: ByteBuffer(capacity: d.largest), consume: consume)),
            Contender("libzip", bytes: sizes,
                      LibzipRead(archive: try LibzipArchive(path: d.zipPath), names: d.names,
                                 buffer: ByteBuffer(capacity: d.largest), consume: consume)),
            Contender("lmdb-raw", bytes: sizes,
                      LMDBRead(lmdb: try RawLMDB(path: d.lmdbPath), keys: d.names, consume: consume)),
            Contender("c-api", bytes: sizes,
                      CLibraryRead(container: try CLibraryContainer(path: d.container.path), pack: CStrings([d.packID]),
                                   paths: CStrings(d.members.paths), consume: consume)),
            Contender("physfs", bytes: sizes,
                      PhysFSRead(archive: try PhysFSArchive(mounting: d.zipPath), names: CStrings(d.names),
                                 buffer: ByteBuffer(capacity: d.largest), consume: consume)),
        ]
        let measured = try Competition.run(contenders, items: d.members.count, plan: ctx.scale.plan, seed: consume ? 0xC0 : 0x5E)
        let what = "\(Format.count(d.members.count)) stored members of 1–16 KiB (\(Format.count(d.members.totalBytes >> 20)) MiB), "
            + "random paths, warm cache, by path" + (consume ? "; every contender then sums the bytes" : "")
        return ScenarioResult(name: consume ? "small-read-consume" : "small-read", summary: what, measurements: measured)
    }
}

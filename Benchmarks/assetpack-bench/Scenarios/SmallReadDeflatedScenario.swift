import AssetPacks
import AssetSystem
import AssetStore

/// `small-read-deflated`: the `small-read` shape with deflated text, compared
/// by inflated bytes per second.
///
/// - assetpacks: `contents(at:…)` inflates into exactly the declared size and
///   checks the CRC-32;
/// - zlib: `uncompress` of the same deflate stream (zlib-wrapped: inflate and
///   Adler-32) into a buffer — the codec ceiling;
/// - files: the plain text extracted on disk, `open`/`read`/`close`;
/// - sqlite: `sqlar` blob read, then `uncompress`, as the `sqlar` tools do;
/// - libzip: the same pack, member by name (inflate and CRC-32 check).
enum SmallReadDeflatedScenario {
    static let scenario = Scenario(
        "small-read-deflated", "deflated text members of 1–16 KiB by path, against the codec alone"
    ) { ctx in [try run(ctx)] }

    static func run(_ ctx: Context) throws -> ScenarioResult {
        let d = try SmallDataset.prepare(ctx.workspace, deflated: true)
        let manager = try AssetPackManager(container: .init(path: d.container.path))
        let streams = try ArchiveStreams(zipPath: d.zipPath, paths: d.members.paths)
        let codec = DeflateStreams(raw: streams.slices, sizes: d.members.sizes, adler32: try d.adler32())
        let sizes = d.members.sizes
        let contenders = [
            Contender("assetpacks", bytes: sizes,
                      ContentsRead(manager: manager, pack: d.packID, paths: d.members.paths, consume: false)),
            Contender("zlib", bytes: sizes,
                      ZlibUncompress(streams: codec, buffer: ByteBuffer(capacity: d.largest), consume: false)),
            Contender("files", bytes: sizes,
                      FilesRead(paths: d.filePaths, buffer: ByteBuffer(capacity: d.largest), consume: false)),
            Contender("sqlite", bytes: sizes,
                      SQLiteRead(archive: try SQLiteArchive(readingFrom: d.sqlitePath), names: d.names,
                                 buffer: ByteBuffer(capacity: d.largest), inflated: ByteBuffer(capacity: d.largest), consume: false)),
            Contender("libzip", bytes: sizes,
                      LibzipRead(archive: try LibzipArchive(path: d.zipPath), names: d.names,
                                 buffer: ByteBuffer(capacity: d.largest), consume: false)),
        ]
        let measured = try withExtendedLifetime(streams) {
            try Competition.run(contenders, items: d.members.count, plan: ctx.scale.plan, seed: 0xDF)
        }
        let compressed = streams.slices.reduce(0) { $0 + $1.count }
        let what = "\(Format.count(d.members.count)) deflated text members of 1–16 KiB "
            + "(\(Format.count(d.members.totalBytes >> 20)) MiB, deflated to \(Format.fixed(100 * Double(compressed) / Double(d.members.totalBytes), decimals: 0)) %), "
            + "random paths, by path; bytes/s counts inflated bytes"
        return ScenarioResult(name: "small-read-deflated", summary: what, measurements: measured, basis: .throughput)
    }
}

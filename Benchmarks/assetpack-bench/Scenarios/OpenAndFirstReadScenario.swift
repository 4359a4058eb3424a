import Foundation
import AssetPacks
import AssetSystem
import AssetStore
import AssetArchive

/// `open-and-first-read`: open a container holding many packs and members
/// (100 packs of 10,000 members; `--quick`: 10 of 2,000) and read one member,
/// against libzip opening an archive of 100,000 entries (`--quick`: 20,000)
/// and reading one member. Each operation opens from scratch: a new
/// `AssetPackManager`, released after the read, so the LMDB environment is
/// opened and closed every time; `zip_open` … `zip_discard` for libzip.
enum OpenAndFirstReadScenario {
    static let scenario = Scenario(
        "open-and-first-read", "open a container of 1,000,000 members and read one, against libzip opening a 100,000-entry archive"
    ) { ctx in [try run(ctx)] }

    final class Dataset {
        let directory: String
        let packs: [String]
        let perPack: MemberSet
        let zipMembers: MemberSet
        let container: GroupContainer
        var zipPath: String { directory + "/entries.zip" }

        init(directory: String, scale: Scale) {
            self.directory = directory
            packs = (0 ..< scale.containerPacks).map { "bench.pack\($0)" }
            perPack = MemberSet(count: scale.containerMembersPerPack, sizes: 64 ... 512, content: .random, seed: 0x0C0, ext: "bin")
            zipMembers = MemberSet(count: scale.zipEntries, sizes: 64 ... 512, content: .random, seed: 0x21B, ext: "bin")
            container = GroupContainer(path: directory + "/container")
        }

        /// Every pack holds the same relative paths under its own top
        /// directory (so paths are unique across packs), with its own bytes.
        func build() throws {
            let store = try AssetStore(container: container)
            for (k, id) in packs.enumerated() {
                let path = directory + "/\(id).zip"
                try ArchiveWriter.write((0 ..< perPack.count).map { i in
                    var bytes = perPack.bytes(i)
                    bytes[0] = UInt8(truncatingIfNeeded: k)
                    return ArchiveWriter.Member(path: "p\(k)/" + perPack.paths[i], source: .bytes(bytes), compression: .stored)
                }, to: path)
                try store.install(packAt: path, id: id)
                try FileManager.default.removeItem(atPath: path)
            }
            try ArchiveWriter.write((0 ..< zipMembers.count).map {
                ArchiveWriter.Member(path: zipMembers.paths[$0], source: .bytes(zipMembers.bytes($0)), compression: .stored)
            }, to: zipPath)
        }
    }

    static func run(_ ctx: Context) throws -> ScenarioResult {
        let s = ctx.scale
        let d = try ctx.workspace.dataset("container-\(s.containerPacks)x\(s.containerMembersPerPack)") { dir in
            let d = Dataset(directory: dir, scale: s)
            try ctx.workspace.fill(dir, label: "a container of \(s.containerPacks) packs × \(Format.count(s.containerMembersPerPack)) members and a \(Format.count(s.zipEntries))-entry archive") {
                try d.build()
            }
            return d
        }
        let picks = 1_000
        var rng = SplitMix64(seed: 0x0FE2)
        var packs: [String] = [], paths: [String] = [], entries: [String] = []
        for _ in 0 ..< picks {
            let k = rng.below(d.packs.count)
            packs.append(d.packs[k])
            paths.append("p\(k)/" + d.perPack.paths[rng.below(d.perPack.count)])
            entries.append(d.zipMembers.paths[rng.below(d.zipMembers.count)])
        }
        var plan = s.plan
        plan.warmUpItems = 3
        plan.passSeconds = s.quick ? 0.1 : 0.3
        let measured = try Competition.run([
            Contender("assetpacks", OpenAndRead(container: d.container, packs: packs, paths: paths)),
            Contender("libzip", LibzipOpenAndRead(path: d.zipPath, names: entries, buffer: ByteBuffer(capacity: 1024))),
        ], items: picks, plan: plan, seed: 0x0F)
        let members = s.containerPacks * s.containerMembersPerPack
        return ScenarioResult(
            name: "open-and-first-read",
            summary: "open a container of \(s.containerPacks) packs / \(Format.count(members)) members and read one (64–512 B); "
                + "libzip: open a \(Format.count(s.zipEntries))-entry archive and read one",
            measurements: measured)
    }
}

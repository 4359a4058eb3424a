import Foundation
import AssetPacks
import AssetSystem
import AssetStore
import AssetArchive

/// `large-read`: one large stored member (256 MiB; 32 MiB with `--quick`).
///
/// - `large-read/return`: time for `contents(at:)` to return its `Data`
///   (and release it), which must not depend on the size: no copy.
/// - `large-read/return-4k`: the same for a 4 KiB member of the same pack.
/// - `large-read/consume`: `contents` and then summing every byte, against
///   `open`/`read`/`close` of the extracted file into a buffer (then summed)
///   and against `memcpy` of the same size between two warm buffers.
enum LargeReadScenario {
    static let scenario = Scenario(
        "large-read", "one large stored member: time for `contents` to return, then to consume it"
    ) { ctx in try run(ctx) }

    final class Dataset {
        let directory: String
        let size: Int
        let container: GroupContainer
        var zipPath: String { directory + "/large.zip" }
        var filePath: String { directory + "/large.bin" }
        var smallPath: String { directory + "/small.bin" }
        let packID = "bench.large"
        static let largeMember = "media/large.bin"
        static let smallMember = "media/small.bin"

        init(directory: String, size: Int) {
            self.directory = directory
            self.size = size
            container = GroupContainer(path: directory + "/container")
        }

        func build() throws {
            var rng = SplitMix64(seed: 0x1A26E)
            let fd = open(filePath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw PeerError("create \(filePath)") }
            defer { close(fd) }
            var written = 0
            while written < size {
                let chunk = MemberSet.randomBytes(min(8 << 20, size - written), &rng)
                try chunk.withUnsafeBytes { raw in
                    guard write(fd, raw.baseAddress, raw.count) == raw.count else { throw PeerError("write \(filePath)") }
                }
                written += chunk.count
            }
            try MemberSet.randomBytes(4096, &rng).withUnsafeBytes { try writeFile(smallPath, $0) }
            try ArchiveWriter.write([
                .init(path: Dataset.largeMember, source: .file(filePath), compression: .stored),
                .init(path: Dataset.smallMember, source: .file(smallPath), compression: .stored),
            ], to: zipPath)
            try AssetStore(container: container).install(packAt: zipPath, id: packID)
        }
    }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let size = ctx.scale.largeBytes
        let d = try ctx.workspace.dataset("large-\(size >> 20)m") { dir in
            let d = Dataset(directory: dir, size: size)
            try ctx.workspace.fill(dir, label: "a \(size >> 20) MiB stored member") { try d.build() }
            return d
        }
        let manager = try AssetPackManager(container: .init(path: d.container.path))
        var plan = ctx.scale.plan
        let returnBig = try Competition.run([
            Contender("assetpacks", ContentsRead(manager: manager, pack: d.packID, paths: [Dataset.largeMember], consume: false)),
        ], items: 1, plan: plan, seed: 1)
        let returnSmall = try Competition.run([
            Contender("assetpacks", ContentsRead(manager: manager, pack: d.packID, paths: [Dataset.smallMember], consume: false)),
        ], items: 1, plan: plan, seed: 2)

        plan.passSeconds = ctx.scale.quick ? 0.1 : 0.3
        let source = ByteBuffer(capacity: size)
        var filler = SplitMix64(seed: 0xF111)
        MemberSet.randomBytes(min(size, 1 << 20), &filler).withUnsafeBytes {
            source.pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count)
        }
        let consume = try Competition.run([
            Contender("assetpacks", bytes: [size],
                      ContentsRead(manager: manager, pack: d.packID, paths: [Dataset.largeMember], consume: true)),
            Contender("files", bytes: [size],
                      FilesReadWhole(path: d.filePath, buffer: ByteBuffer(capacity: size), consume: true)),
            Contender("memcpy", bytes: [size], MemcpyCopy(source: source, destination: ByteBuffer(capacity: size))),
        ], items: 1, plan: plan, seed: 3)
        let mib = "\(size >> 20) MiB"
        return [
            ScenarioResult(name: "large-read/return", summary: "`contents` of a \(mib) stored member: time to return the `Data`",
                           measurements: returnBig, basis: .none),
            ScenarioResult(name: "large-read/return-4k", summary: "`contents` of a 4 KiB stored member of the same pack, for comparison",
                           measurements: returnSmall, basis: .none),
            ScenarioResult(name: "large-read/consume",
                           summary: "consuming the \(mib) member: `contents` then summing every byte; files: `read` into a buffer, then summed; `memcpy` of \(mib) between warm buffers",
                           measurements: consume, basis: .throughput),
        ]
    }
}

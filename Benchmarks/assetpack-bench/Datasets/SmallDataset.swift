import Foundation
import AssetPacks
import AssetStore
import AssetArchive
import AssetSystem
import CZlib

/// The `small-read*` data: members of 1–16 KiB at random paths, as
/// incompressible stored members or as deflated text, held
///
/// - in a pack written by the packager (`ArchiveWriter`), installed into a
///   container (for AssetPacks) and read as is (by libzip),
/// - extracted as plain files,
/// - in an `sqlar`-shaped SQLite table (deflated text stored as `sqlar`
///   stores it: the same deflate stream with zlib's wrapper),
/// - in raw LMDB under the path (stored members only).
final class SmallDataset {
    let members: MemberSet
    let deflated: Bool
    let packID: String
    let directory: String
    var zipPath: String { directory + "/pack.zip" }
    var filesRoot: String { directory + "/files" }
    var sqlitePath: String { directory + "/sqlar.db" }
    var lmdbPath: String { directory + "/lmdb" }
    var adlerPath: String { directory + "/adler32.bin" }
    let container: GroupContainer
    /// Absolute paths of the extracted files.
    let filePaths: [String]
    /// Member paths, for lookups by name.
    var names: [String] { members.paths }

    /// The data set of `small-read*`; with `sizes` other than the default
    /// 1–16 KiB, a separate one (`small-read-4k` uses 4 KiB exactly).
    static func prepare(_ ws: Workspace, deflated: Bool, sizes: ClosedRange<Int> = 1024 ... 16384) throws -> SmallDataset {
        let n = ws.scale.smallMembers
        let suffix = sizes == 1024 ... 16384 ? "" : "-\(sizes.lowerBound)-\(sizes.upperBound)"
        return try ws.dataset((deflated ? "small-text-\(n)" : "small-stored-\(n)") + suffix) { dir in
            let d = SmallDataset(directory: dir, count: n, deflated: deflated, sizes: sizes)
            try ws.fill(dir, label: "\(Format.count(n)) \(deflated ? "deflated text" : "stored") members") { try d.build() }
            return d
        }
    }

    private init(directory: String, count: Int, deflated: Bool, sizes: ClosedRange<Int>) {
        self.directory = directory
        self.deflated = deflated
        members = MemberSet(count: count, sizes: sizes, content: deflated ? .text : .random,
                            seed: deflated ? 0x7E_0002 : 0x5_0001, ext: deflated ? "json" : "bin")
        packID = deflated ? "bench.text" : "bench.stored"
        container = GroupContainer(path: directory + "/container")
        filePaths = members.paths.map { directory + "/files/" + $0 }
    }

    /// The largest member, for sizing read buffers.
    var largest: Int { members.sizes.max() ?? 0 }

    /// Adler-32 of every member's bytes, for wrapping deflate streams as zlib's.
    func adler32() throws -> [UInt32] {
        let data = try Data(contentsOf: URL(fileURLWithPath: adlerPath))
        return data.withUnsafeBytes { raw in (0 ..< members.count).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self) } }
    }

    private func build() throws {
        for dir in members.directories { try FileManager.default.createDirectory(atPath: filesRoot + "/" + dir, withIntermediateDirectories: true) }
        var adler: [UInt32] = []
        for i in 0 ..< members.count {
            let bytes = members.bytes(i)
            try bytes.withUnsafeBytes { raw in
                try writeFile(filesRoot + "/" + members.paths[i], raw)
                if deflated { adler.append(UInt32(CZlib.adler32(1, raw.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(raw.count)))) }
            }
        }
        if deflated { try adler.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: adlerPath)) } }

        try ArchiveWriter.write(members.paths.map {
            ArchiveWriter.Member(path: $0, source: .file(filesRoot + "/" + $0), compression: deflated ? .deflated : .stored)
        }, to: zipPath)
        try AssetStore(container: container).install(packAt: zipPath, id: packID)

        if deflated {
            let streams = try ArchiveStreams(zipPath: zipPath, paths: members.paths)
            var wrapped = [UInt8](repeating: 0, count: largest + 64)
            try SQLiteArchive.create(at: sqlitePath, count: members.count, durable: false) { i, insert in
                let raw = streams.slices[i]
                wrapped[0] = 0x78
                wrapped[1] = 0xDA
                try wrapped.withUnsafeMutableBytes { w in
                    UnsafeMutableRawBufferPointer(rebasing: w[2 ..< 2 + raw.count]).copyMemory(from: raw)
                    w.storeBytes(of: adler[i].bigEndian, toByteOffset: 2 + raw.count, as: UInt32.self)
                    try insert(members.paths[i], members.sizes[i], UnsafeRawBufferPointer(rebasing: w[0 ..< raw.count + 6]))
                }
            }
        } else {
            try SQLiteArchive.create(at: sqlitePath, count: members.count, durable: false) { i, insert in
                try members.bytes(i).withUnsafeBytes { try insert(members.paths[i], members.sizes[i], $0) }
            }
            try FileManager.default.createDirectory(atPath: lmdbPath, withIntermediateDirectories: true)
            try RawLMDB.create(at: lmdbPath, mapSize: members.totalBytes * 2 + (64 << 20), count: members.count, durable: false) { i, put in
                try members.bytes(i).withUnsafeBytes { value in
                    try Array(members.paths[i].utf8).withUnsafeBytes { try put($0, value) }
                }
            }
        }
    }
}

/// A pack file mapped read-only, and where each member's data lies in it.
final class ArchiveStreams {
    private let region: MappedRegion
    /// The stored data (raw deflate stream or stored bytes) of each member,
    /// in the order of the paths asked for.
    let slices: [UnsafeRawBufferPointer]

    init(zipPath: String, paths: [String]) throws {
        let fd = try FileDescriptor.open(zipPath)
        let size = try fd.status().size
        region = try MappedRegion(mapping: fd, count: Int(size))
        let archive = try ZipArchive.parse(region.bytes, name: zipPath)
        var byPath: [String: ArchiveEntry] = [:]
        for e in archive.entries { byPath[e.path] = e }
        let bytes = region.bytes
        slices = try paths.map { p in
            guard let e = byPath[p] else { throw BenchError.failed("\(zipPath) lacks \(p)") }
            return UnsafeRawBufferPointer(rebasing: bytes[Int(e.dataOffset) ..< Int(e.dataOffset + e.compressedSize)])
        }
    }
}

import Foundation
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

/// A temporary directory with a container and helpers to make packs.
final class StoreFixture {
    private let directory: TemporaryDirectory
    let container: GroupContainer
    var root: String { directory.path }

    init(_ label: String = "store") {
        directory = TemporaryDirectory("assetstore-\(label)")
        container = GroupContainer(path: directory.file("container"))
    }

    func store(_ options: AssetStore.Options = .init()) throws -> AssetStore {
        try AssetStore(container: container, options: options)
    }

    /// Writes a pack with the given members (path → bytes) and, when `id` is
    /// given, a recorded manifest.
    @discardableResult
    func pack(_ name: String, id: String?, policy: DownloadPolicy = .onDemand,
              _ members: [String: [UInt8]], compression: ArchiveWriter.Compression = .automatic) throws -> String {
        let path = root + "/" + name
        let comment = id.map { PackDescription(id: $0, downloadPolicy: policy, platforms: [.linux]).archiveComment } ?? []
        try ArchiveWriter.write(members.map { ArchiveWriter.Member(path: $0.key, source: .bytes($0.value), compression: compression) },
                                comment: comment, to: path)
        return path
    }

}

func text(_ count: Int, _ word: String = "asset ") -> [UInt8] {
    Array(String(repeating: word, count: count / word.utf8.count + 1).utf8.prefix(count))
}

/// The mapped file whose mapping holds `data`'s first byte, per /proc/self/maps.
func mappedFile(holding data: Data) -> String? {
    // Read to the end: procfs hands the file out a page per read.
    guard let raw = try? FileDescriptor.open("/proc/self/maps").readToEnd() else { return nil }
    let maps = String(decoding: raw, as: UTF8.self)
    let address = data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
    for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        let range = fields[0].split(separator: "-")
        guard range.count == 2, let lo = UInt(range[0], radix: 16), let hi = UInt(range[1], radix: 16) else { continue }
        if address >= lo && address + UInt(data.count) <= hi, fields.count >= 6 { return String(fields[5]) }
    }
    return nil
}

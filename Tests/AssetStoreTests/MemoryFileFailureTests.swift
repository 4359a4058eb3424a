import Foundation
import Testing
import AssetStore
import AssetArchive
import AssetSystem
import TestSupport

/// A member that fails to inflate (or to copy) into a memory file leaves
/// none behind and gives the typed error; and the cache's least-recently-used
/// order through many uses and drops.
@Suite struct MemoryFileFailureTests {
    /// The memory files this process holds open, by what `/proc/self/fd`
    /// links them to ("/memfd:NAME (deleted)"): each descriptor's size.
    static func memoryFiles() -> [(link: String, size: Int64)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name in
            let path = "/proc/self/fd/" + name
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: path), link.hasPrefix("/memfd:") else { return nil }
            var st = stat()
            guard stat(path, &st) == 0 else { return nil }
            return (link, Int64(st.st_size))
        }
    }

    /// Memory files of exactly `size` bytes (sizes the tests make unique).
    static func descriptors(ofSize size: Int64) -> Int {
        memoryFiles().filter { $0.size == size }.count
    }

    /// Letters with 4 bits of entropy each: deflates about 2:1, within the
    /// limits' compression ratio.
    static func letters(_ count: Int, seed: UInt64) -> [UInt8] {
        noise(count, seed: seed).map { 0x61 + $0 & 0x0f }
    }

    /// Flips a byte in the middle of `member`'s stored data in its installed archive.
    func damage(_ member: String, of pack: String, in store: AssetStore, _ f: StoreFixture) throws {
        let record = try #require(try store.packRecord(pack))
        let fd = try FileDescriptor.open(f.container.packsPath + "/" + record.archiveName, .readWrite)
        let region = try MappedRegion(mapping: fd, count: Int(try fd.status().size))
        let entry = try #require(try ZipArchive.parse(region.bytes, name: record.archiveName).entries.first { $0.path == member })
        let at = Int64(entry.dataOffset + entry.compressedSize / 2)
        var byte = try fd.read(count: 1, at: at)
        byte[0] ^= 0x5a
        try fd.write(byte, at: at)
    }

    /// A damaged member: the typed error its contents give, and no memory
    /// file, whether it is filled through a buffer or (past
    /// ``MemoryFile/bufferedLimit``) through a mapping, or copied (stored)
    /// straight from the archive at any size.
    @Test(arguments: [
        ("small.txt", 12_345, DescriptorOptions()),
        ("small.bin", 12_347, DescriptorOptions.standalone),
        ("large.txt", MemoryFile.bufferedLimit + 4_321, DescriptorOptions()),
        ("large.bin", MemoryFile.bufferedLimit + 4_323, DescriptorOptions.standalone),
    ])
    func aMemberThatFailsToInflateLeavesNoMemoryFileAndGivesTheTypedError(path: String, size: Int, options: DescriptorOptions) throws {
        let f = StoreFixture()
        let store = try f.store()
        let bytes = path.hasSuffix(".bin") ? noise(size, seed: 21) : Self.letters(size, seed: 22)
        let compression: ArchiveWriter.Compression = path.hasSuffix(".bin") ? .stored : .deflated
        try store.install(packAt: try f.pack("p.zip", id: "p", [path: bytes, "warm.txt": text(3_000)], compression: compression))
        try damage(path, of: "p", in: store, f)
        let fresh = try f.store()  // maps the damaged archive
        _ = try fresh.descriptor(for: "warm.txt", inPack: "p", options: .standalone)
        if compression == .stored {
            // Stored contents are not checked (zero-copy); the copy into a memory file is.
            let crc = bytes.withUnsafeBytes { CRC32.checksum($0) }
            #expect {
                _ = try fresh.descriptor(for: path, inPack: "p", options: options)
            } throws: { error in
                guard case .archive(.crcMismatch("p", path, crc, _)) = error as? StoreError else { return false }
                return true
            }
        } else {
            var expected: StoreError?
            do { _ = try fresh.contents(at: path, inPack: "p") } catch { expected = error }
            let refusal = try #require(expected)
            switch refusal {
            case .archive(.crcMismatch), .archive(.corruptData), .archive(.sizeMismatch): break
            default: Issue.record("not a damaged-member error: \(refusal)")
            }
            #expect(throws: refusal) { _ = try fresh.descriptor(for: path, inPack: "p", options: options) }
        }
        #expect(fresh.memoryFiles.usage == (1, 3_000))  // warm.txt's only
        #expect(Self.descriptors(ofSize: Int64(size)) == 0)
    }

    /// Uses and drops in any order: the file dropped is always the least
    /// recently used one kept (the cache keeps its files in the order of use).
    @Test func theLeastRecentlyUsedGoesFirstThroughManyUsesAndDrops() throws {
        let f = StoreFixture()
        var options = AssetStore.Options()
        options.memoryFileCache = .init(bytes: 1 << 30, files: 3)
        let store = try f.store(options)
        let paths = (0 ..< 6).map { "m\($0).txt" }
        try store.install(packAt: try f.pack("p.zip", id: "p", Dictionary(uniqueKeysWithValues: paths.map { ($0, text(1_000 + $0.count, $0)) })))
        var recent: [String] = []   // most recent last, as the cache should keep them
        var inodes: [String: UInt64] = [:]
        var state: UInt64 = 0x5eed
        for _ in 0 ..< 60 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let path = paths[Int(state >> 33) % paths.count]
            let inode = try store.descriptor(for: path, inPack: "p").descriptor.status().inode
            if recent.contains(path) {
                #expect(inode == inodes[path], "\(path) was kept: the same file")
            } else {
                #expect(inode != inodes[path], "\(path) was dropped: a new file")
            }
            recent.removeAll { $0 == path }
            recent.append(path)
            if recent.count > 3 { recent.removeFirst() }
            inodes[path] = inode
            #expect(store.memoryFiles.usage.files == recent.count)
        }
    }
}

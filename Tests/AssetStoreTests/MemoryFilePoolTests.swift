import Foundation
import Testing
@testable import AssetStore
import AssetArchive
import AssetSystem
import TestSupport

/// The empty memory files a store makes ahead for first handouts
/// (``MemoryFilePool``): what a handout made from one is, how many the pool
/// holds and when they close, and that a member that fails to inflate
/// leaves no memory file behind.
@Suite struct MemoryFilePoolTests {
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

    /// Descriptors of memory files named `name`.
    static func descriptors(named name: String) -> Int {
        memoryFiles().filter { $0.link == "/memfd:\(name) (deleted)" }.count
    }

    /// Memory files of exactly `size` bytes (sizes the tests make unique).
    static func descriptors(ofSize size: Int64) -> Int {
        memoryFiles().filter { $0.size == size }.count
    }

    /// Waits for `pool` to be full again after a take.
    static func waitForFull(_ pool: MemoryFilePool) -> Bool {
        eventually(timeout: 30) { pool.count == pool.capacity }
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

    @Test func aHandoutFromThePoolIsSealedReadOnlyAndExactlyTheMember() throws {
        let f = StoreFixture()
        let store = try f.store()
        let members = ["t0.txt": text(9_001, "zero "), "t1.txt": text(13_003, "one "), "i.bin": noise(4_321, seed: 11)]
        try store.install(packAt: try f.pack("p.zip", id: "p", members))
        let pool = store.memoryFiles.pool
        #expect(pool.count == 0)  // nothing made before the first memory file is asked for
        _ = try store.descriptor(for: "t0.txt", inPack: "p")
        #expect(Self.waitForFull(pool))
        for (taken, (path, options)) in [("t1.txt", DescriptorOptions()), ("i.bin", .standalone)].enumerated() {
            let d = try store.descriptor(for: path, inPack: "p", options: options)
            // Taken from the pool; a refill starts only once half or less is left.
            if taken == 0 { #expect(pool.count == pool.capacity - 1, "\(path)") }
            let bytes = try #require(members[path])
            #expect(d.source == .memory && d.offset == 0 && d.length == Int64(bytes.count))
            #expect(try MemoryFile.seals(of: d.descriptor) & 0x0f == 0x0f, "\(path)")
            #expect(fcntl(d.descriptor.rawValue, F_GETFL) & O_ACCMODE == O_RDONLY, "\(path)")
            #expect(fcntl(d.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0, "\(path)")
            #expect(try d.descriptor.status().size == Int64(bytes.count))
            #expect(try d.descriptor.read(count: bytes.count + 10, at: 0) == bytes)
            let link = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(d.descriptor.rawValue)")
            #expect(link == "/memfd:\(MemoryFilePool.defaultName) (deleted)")
            // Sealed for every holder, as a file made on the spot is.
            let writable = open("/proc/self/fd/\(d.descriptor.rawValue)", O_RDWR | O_CLOEXEC)
            try #require(writable >= 0)
            defer { close(writable) }
            #expect(pwrite(writable, "x", 1, 0) == -1 && errno == EPERM, "\(path)")
            #expect(ftruncate(writable, 0) == -1 && errno == EPERM, "\(path)")
        }
        #expect(Self.waitForFull(pool))
    }

    @Test func thePoolHoldsAtMostItsCapacityAndClosesItsFilesWhenItGoes() throws {
        let name = "pool-test-\(UUID().uuidString)"
        var pool: MemoryFilePool? = MemoryFilePool(capacity: 3, name: name, queue: DispatchQueue(label: name))
        do {
            let first = try pool!.take()  // empty: made at once, and a refill starts
            #expect(Self.descriptors(named: name) >= 2)
            _ = consume first
        }
        #expect(Self.waitForFull(pool!))
        #expect(Self.descriptors(named: name) == 6)  // three files, two descriptors each
        for _ in 0 ..< 10 {
            _ = try pool!.take()
            #expect(pool!.count <= 3)
        }
        #expect(Self.waitForFull(pool!))
        #expect(Self.descriptors(named: name) == 6)
        // Each file taken is a new, empty, unsealed one.
        let blank = try pool!.take()
        let (writable, readOnly) = blank.take()
        let w = FileDescriptor(adopting: writable), r = FileDescriptor(adopting: readOnly)
        #expect(try w.status().size == 0)
        #expect(try MemoryFile.seals(of: r) == 0)
        #expect(try w.status().inode == r.status().inode)
        #expect(fcntl(r.rawValue, F_GETFL) & O_ACCMODE == O_RDONLY)
        _ = consume w
        _ = consume r
        pool = nil
        #expect(eventually(timeout: 30) { Self.descriptors(named: name) == 0 })
    }

    @Test func thePoolGoesWithTheStore() throws {
        let f = StoreFixture()
        weak var cache: MemoryFileCache?
        weak var pool: MemoryFilePool?
        do {
            let store = try f.store()
            try store.install(packAt: try f.pack("p.zip", id: "p", ["t.txt": text(5_000)]))
            _ = try store.descriptor(for: "t.txt", inPack: "p")
            cache = store.memoryFiles
            pool = store.memoryFiles.pool
            #expect(Self.waitForFull(store.memoryFiles.pool))
        }
        #expect(eventually(timeout: 30) { cache == nil && pool == nil })
    }

    @Test func aPoolOfNoFilesMakesEachOneWhenAskedAndKeepsNone() throws {
        let name = "pool-none-\(UUID().uuidString)"
        let pool = MemoryFilePool(capacity: 0, name: name, queue: DispatchQueue(label: name))
        do {
            let blank = try pool.take()
            #expect(Self.descriptors(named: name) == 2)
            _ = consume blank
        }
        #expect(pool.count == 0 && Self.descriptors(named: name) == 0)
    }

    /// A damaged member: the typed error its contents give, and no memory
    /// file, whether it is filled through a buffer or (past
    /// ``MemoryFile/bufferedLimit``) through a mapping.
    @Test(arguments: [
        ("small.txt", 12_345, DescriptorOptions()),
        ("small.bin", 12_347, DescriptorOptions.standalone),
        ("large.txt", MemoryFile.bufferedLimit + 4_321, DescriptorOptions()),
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
        let pool = fresh.memoryFiles.pool
        #expect(Self.waitForFull(pool))
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
        if size <= MemoryFile.bufferedLimit {
            // None was taken: the bytes were refused before a file was.
            #expect(pool.count == pool.capacity)
        }
    }
}

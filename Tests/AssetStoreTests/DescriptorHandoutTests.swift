import Foundation
import Testing
import Synchronization
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

/// What a descriptor handout reuses: the archive file held open per mapped
/// archive (each handout a `dup`), and sealed memory files kept in the
/// store's ``MemoryFileCache``; and when that stops: after an update or a
/// removal, past the cache's bounds.
@Suite struct DescriptorHandoutTests {
    /// `F_ADD_SEALS` (`F_LINUX_SPECIFIC_BASE + 9`), which Glibc's module
    /// leaves out without `_GNU_SOURCE`.
    static let addSeals: Int32 = 1024 + 9

    static func position(_ d: borrowing MemberDescriptor) -> Int64 { Int64(lseek(d.descriptor.rawValue, 0, SEEK_CUR)) }

    static func inode(_ d: borrowing MemberDescriptor) throws -> UInt64 { try d.descriptor.status().inode }

    /// The files this process holds open whose link names `path` (an
    /// unlinked one shows as "`path` (deleted)").
    static func openDescriptors(of path: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name) else { return false }
            return target == path || target == path + " (deleted)"
        }.count
    }

    func archivePath(_ f: StoreFixture, _ store: AssetStore, pack: String) throws -> String {
        f.container.packsPath + "/" + (try #require(try store.packRecord(pack))).archiveName
    }

    // MARK: Stored members: a dup of the archive file

    @Test func storedHandoutsShareOneOpenDescriptionSetToTheMemberAtEachHandout() throws {
        let f = StoreFixture()
        let store = try f.store()
        let a = noise(9_000, seed: 1), b = noise(7_000, seed: 2)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["a.bin": a, "b.bin": b]))
        let first = try store.descriptor(for: "a.bin", inPack: "p")
        let second = try store.descriptor(for: "b.bin", inPack: "p")
        #expect(first.source == .archive && second.source == .archive)
        #expect(try Self.inode(first) == Self.inode(second))
        // One open description: moving one position moves the other, and
        // each handout set it to its own member.
        #expect(Self.position(first) == second.offset)
        #expect(lseek(first.descriptor.rawValue, 100, SEEK_SET) == 100)
        #expect(Self.position(second) == 100)
        // pread never uses it: both read their own member whatever it is.
        #expect(try first.descriptor.read(count: a.count, at: first.offset) == a)
        #expect(try second.descriptor.read(count: b.count, at: second.offset) == b)
        // Read-only and close-on-exec, as a new open would be.
        #expect(fcntl(first.descriptor.rawValue, F_GETFL) & O_ACCMODE == O_RDONLY)
        #expect(fcntl(second.descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        // A later handout sets the shared position to its member again.
        let third = try store.descriptor(for: "a.bin", inPack: "p")
        #expect(Self.position(second) == third.offset)
    }

    @Test func ownOffsetGivesANewOpenDescriptionOfItsOwn() throws {
        let f = StoreFixture()
        let store = try f.store()
        let a = noise(9_000, seed: 3)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["a.bin": a, "b.bin": noise(100, seed: 4)]))
        let shared = try store.descriptor(for: "a.bin", inPack: "p")
        let own = try store.descriptor(for: "a.bin", inPack: "p", options: .ownOffset)
        let other = try store.descriptor(for: "a.bin", inPack: "p", options: .ownOffset)
        #expect(Self.position(own) == own.offset)
        #expect(lseek(own.descriptor.rawValue, 5, SEEK_SET) == 5)
        #expect(Self.position(other) == other.offset && Self.position(shared) == shared.offset)
        var buffer = [UInt8](repeating: 0, count: 10)
        #expect(lseek(other.descriptor.rawValue, off_t(other.offset), SEEK_SET) == other.offset)
        #expect(read(other.descriptor.rawValue, &buffer, 10) == 10)
        #expect(buffer == Array(a.prefix(10)))
        #expect(Self.position(own) == 5)
        #expect(fcntl(own.descriptor.rawValue, F_GETFL) & O_ACCMODE == O_RDONLY)
    }

    @Test func theHeldArchiveFileGoesWithTheOldVersionAfterAnUpdate() throws {
        let f = StoreFixture()
        let store = try f.store()
        let old = noise(6_000, seed: 5), new = noise(6_000, seed: 6)
        try store.install(packAt: try f.pack("v1.zip", id: "p", ["a.bin": old]))
        let oldPath = try archivePath(f, store, pack: "p")
        do {
            let before = try store.descriptor(for: "a.bin", inPack: "p")
            #expect(Self.openDescriptors(of: oldPath) == 2)  // the handout and the one the store holds
            try store.install(packAt: try f.pack("v2.zip", id: "p", ["a.bin": new]))
            let newPath = try archivePath(f, store, pack: "p")
            #expect(newPath != oldPath)
            let after = try store.descriptor(for: "a.bin", inPack: "p")
            #expect(try after.descriptor.read(count: new.count, at: after.offset) == new)
            #expect(try before.descriptor.read(count: old.count, at: before.offset) == old)
            #expect(try Self.inode(after) != Self.inode(before))
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(after.descriptor.rawValue)") == newPath)
            #expect(Self.openDescriptors(of: newPath) == 2)
            // The store let go of the old archive with its mapping: only the
            // old handout holds it now.
            #expect(Self.openDescriptors(of: oldPath) == 1)
        }
        #expect(Self.openDescriptors(of: oldPath) == 0)
    }

    @Test func removalLetsGoOfTheHeldArchiveFileAndHandoutsStayReadable() throws {
        let f = StoreFixture()
        let store = try f.store()
        let bytes = noise(6_000, seed: 7)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["a.bin": bytes]))
        let path = try archivePath(f, store, pack: "p")
        let d = try store.descriptor(for: "a.bin", inPack: "p")
        try store.remove(pack: "p")
        #expect(try d.descriptor.read(count: bytes.count, at: d.offset) == bytes)
        #expect(Self.openDescriptors(of: path) == 1)  // the handout's only
        #expect(throws: StoreError.notInstalled("p")) { _ = try store.descriptor(for: "a.bin", inPack: "p") }
    }

    // MARK: Memory files: one sealed memfd per member, kept

    @Test func repeatedHandoutsOfADeflatedMemberAreDupsOfOneSealedFile() throws {
        let f = StoreFixture()
        let store = try f.store()
        let body = text(20_000)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["t.txt": body]))
        let first = try store.descriptor(for: "t.txt", inPack: "p")
        let second = try store.descriptor(for: "t.txt", inPack: "p")
        #expect(first.source == .memory && second.source == .memory)
        #expect(try Self.inode(first) == Self.inode(second))
        #expect(first.memoryFile != nil && first.memoryFile == second.memoryFile)
        #expect(store.memoryFiles.usage == (1, 20_000))
        // One open description, as documented: read moves both positions;
        // the next handout sets it back to 0.
        var buffer = [UInt8](repeating: 0, count: 100)
        #expect(read(first.descriptor.rawValue, &buffer, 100) == 100)
        #expect(Self.position(second) == 100)
        let third = try store.descriptor(for: "t.txt", inPack: "p")
        #expect(Self.position(first) == 0)
        #expect(try third.descriptor.readToEnd() == body)
        // With .ownOffset: the same file, a position of its own.
        let own = try store.descriptor(for: "t.txt", inPack: "p", options: .ownOffset)
        #expect(try Self.inode(own) == Self.inode(first) && Self.position(own) == 0)
        #expect(try own.descriptor.readToEnd() == body)
        #expect(Self.position(first) == Int64(body.count))  // third's reading, not own's
    }

    @Test func aSealedMemoryFileCannotBeWrittenGrownShrunkOrUnsealed() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("p.zip", id: "p", ["t.txt": text(10_000), "i.bin": noise(3_000, seed: 8)]))
        for (path, options) in [("t.txt", DescriptorOptions()), ("i.bin", .standalone)] {
            let d = try store.descriptor(for: path, inPack: "p", options: options)
            #expect(try MemoryFile.seals(of: d.descriptor) & 0x0f == 0x0f, "\(path)")
            // A writable open of the same file, as another holder could make.
            let writable = open("/proc/self/fd/\(d.descriptor.rawValue)", O_RDWR | O_CLOEXEC)
            try #require(writable >= 0, "\(path): \(errno)")
            defer { close(writable) }
            #expect(pwrite(writable, "x", 1, 0) == -1 && errno == EPERM, "\(path) write")
            #expect(ftruncate(writable, off_t(d.length) + 4096) == -1 && errno == EPERM, "\(path) grow")
            #expect(ftruncate(writable, 1) == -1 && errno == EPERM, "\(path) shrink")
            #expect(mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, writable, 0) == MAP_FAILED && errno == EPERM, "\(path) mmap")
            #expect(fcntl(writable, Self.addSeals, Int32(0)) == -1 && errno == EPERM, "\(path) seal")
            #expect(try d.descriptor.status().size == d.length)
        }
    }

    /// A stored member asked for standalone is written into its memory file
    /// straight from the archive, small or past ``MemoryFile/bufferedLimit``:
    /// exactly its bytes, sealed, taken from the pool.
    @Test(arguments: [3_001, MemoryFile.bufferedLimit + 4_325])
    func aStoredMemberStandaloneIsExactlyItsBytesSealed(size: Int) throws {
        let f = StoreFixture()
        let store = try f.store()
        let body = noise(size, seed: 31)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["i.bin": body], compression: .stored))
        let d = try store.descriptor(for: "i.bin", inPack: "p", options: .standalone)
        #expect(d.source == .memory && d.offset == 0 && d.length == Int64(size))
        #expect(try MemoryFile.seals(of: d.descriptor) & 0x0f == 0x0f)
        #expect(try d.descriptor.status().size == Int64(size))
        #expect(try d.descriptor.read(count: size, at: 0) == body)
    }

    @Test func theCacheKeepsItsBytesAndDropsTheLeastRecentlyUsed() throws {
        let f = StoreFixture()
        var options = AssetStore.Options()
        options.memoryFileCache = .init(bytes: 25_000, files: 10)
        let store = try f.store(options)
        try store.install(packAt: try f.pack("p.zip", id: "p", [
            "a.txt": text(10_000, "a "), "b.txt": text(10_000, "b "), "c.txt": text(10_000, "c "), "big.txt": text(30_000),
        ]))
        func inode(_ path: String) throws -> UInt64 { try Self.inode(try store.descriptor(for: path, inPack: "p")) }
        let a = try inode("a.txt"), b = try inode("b.txt")
        #expect(store.memoryFiles.usage == (2, 20_000))
        #expect(try inode("a.txt") == a)          // a is now the more recently used
        _ = try inode("c.txt")                    // 30,000 > 25,000: b goes
        #expect(store.memoryFiles.usage == (2, 20_000))
        #expect(try inode("a.txt") == a)
        #expect(try inode("b.txt") != b)          // made again (c goes)
        // Larger than the whole cache: handed out, not kept, nothing dropped.
        let big = try store.descriptor(for: "big.txt", inPack: "p")
        #expect(try big.descriptor.readToEnd() == text(30_000))
        #expect(store.memoryFiles.usage == (2, 20_000))
        #expect(try inode("a.txt") == a)
    }

    @Test func theCacheKeepsAtMostItsFileCountAndZeroKeepsNone() throws {
        let f = StoreFixture()
        var options = AssetStore.Options()
        options.memoryFileCache = .init(bytes: 1 << 30, files: 2)
        let store = try f.store(options)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["a.txt": text(3_000), "b.txt": text(4_000), "c.txt": text(5_000)]))
        for path in ["a.txt", "b.txt", "c.txt"] { _ = try store.descriptor(for: path, inPack: "p") }
        #expect(store.memoryFiles.usage == (2, 9_000))
        store.memoryFiles.setLimits(.init(bytes: 1 << 30, files: 0))
        #expect(store.memoryFiles.usage == (0, 0))
        let one = try store.descriptor(for: "a.txt", inPack: "p"), two = try store.descriptor(for: "a.txt", inPack: "p")
        #expect(try Self.inode(one) != Self.inode(two))
        #expect(one.memoryFile != two.memoryFile)
        #expect(store.memoryFiles.usage == (0, 0))
    }

    @Test func twoPacksWithTheSameMemberPathNeverShareAFile() throws {
        let f = StoreFixture()
        let store = try f.store()
        let p = text(8_000, "p "), q = text(8_000, "q ")
        try store.install(packAt: try f.pack("p.zip", id: "p", ["same.txt": p]))
        try store.install(packAt: try f.pack("q.zip", id: "q", ["same.txt": q]))
        let dp = try store.descriptor(for: "same.txt", inPack: "p")
        let dq = try store.descriptor(for: "same.txt", inPack: "q")
        #expect(try Self.inode(dp) != Self.inode(dq))
        #expect(try dp.descriptor.readToEnd() == p)
        #expect(try dq.descriptor.readToEnd() == q)
        #expect(store.memoryFiles.usage.files == 2)
    }

    @Test func anUpdateMakesANewFileAndDropsThePacksOldOnes() throws {
        let f = StoreFixture()
        let store = try f.store()
        let old = text(12_000, "old "), new = text(12_000, "new ")
        try store.install(packAt: try f.pack("v1.zip", id: "p", ["t.txt": old]))
        try store.install(packAt: try f.pack("o.zip", id: "other", ["t.txt": old]))
        let before = try store.descriptor(for: "t.txt", inPack: "p")
        _ = try store.descriptor(for: "t.txt", inPack: "other")
        try store.install(packAt: try f.pack("v2.zip", id: "p", ["t.txt": new]))
        let after = try store.descriptor(for: "t.txt", inPack: "p")
        #expect(try Self.inode(after) != Self.inode(before))
        #expect(try after.descriptor.readToEnd() == new)
        #expect(try before.descriptor.read(count: old.count, at: 0) == old)
        // p's old file left the cache when its new one came in; other's stays.
        #expect(store.memoryFiles.usage == (2, 24_000))
        try store.remove(pack: "p")
        #expect(store.memoryFiles.usage == (1, 12_000))
        #expect(try before.descriptor.read(count: old.count, at: 0) == old)
    }

    @Test func concurrentFirstHandoutsOfOneMemberMakeOneFile() throws {
        let f = StoreFixture()
        let store = try f.store()
        let body = text(200_000)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["t.txt": body]))
        let inodes = Mutex<[UInt64]>([])
        let done = DispatchGroup()
        for _ in 0 ..< 8 {
            done.enter()
            Thread {
                defer { done.leave() }
                if let d = try? store.descriptor(for: "t.txt", inPack: "p"), let inode = try? Self.inode(d) {
                    inodes.withLock { $0.append(inode) }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let seen = inodes.withLock { $0 }
        #expect(seen.count == 8 && Set(seen).count == 1, "\(seen)")
        #expect(store.memoryFiles.usage == (1, 200_000))
    }

    @Test func aMemberOverTheLimitsIsRefusedBeforeAFileIsMadeOrFound() throws {
        let f = StoreFixture()
        let loose = try f.store()
        try loose.install(packAt: try f.pack("p.zip", id: "p", ["t.txt": text(5_000)]))
        _ = try loose.descriptor(for: "t.txt", inPack: "p")
        #expect(loose.memoryFiles.usage.files == 1)
        var options = AssetStore.Options()
        options.limits = PackLimits(maximumMemberSize: 1_000)
        let strict = try f.store(options)
        let archive = try archivePath(f, strict, pack: "p")
        let refusal = StoreError.limitExceeded(archive: archive, pack: "p", member: "t.txt",
                                               problem: .memberTooLarge(size: 5_000, maximum: 1_000))
        #expect(throws: refusal) { _ = try strict.descriptor(for: "t.txt", inPack: "p") }
        #expect(strict.memoryFiles.usage == (0, 0))
    }
}

import Foundation
import Testing
@testable import AssetStore
import AssetArchive
import AssetSystem
import TestSupport

/// The empty memory files a store makes ahead for first handouts
/// (``MemoryFilePool``): what a handout made from one is, how many the pool
/// holds and when they close; and the files the cache drops, closed in
/// batches on its background queue.
@Suite struct MemoryFilePoolTests {
    /// Descriptors of memory files named `name`.
    static func descriptors(named name: String) -> Int {
        MemoryFileFailureTests.memoryFiles().filter { $0.link == "/memfd:\(name) (deleted)" }.count
    }

    /// Memory files of exactly `size` bytes (sizes the tests make unique).
    static func descriptors(ofSize size: Int64) -> Int { MemoryFileFailureTests.descriptors(ofSize: size) }

    /// Waits for `pool` to be full again after a take.
    static func waitForFull(_ pool: MemoryFilePool) -> Bool {
        eventually(timeout: 30) { pool.count == pool.capacity }
    }

    /// Letters with 4 bits of entropy each: deflates about 2:1, within the
    /// limits' compression ratio.
    static func letters(_ count: Int, seed: UInt64) -> [UInt8] {
        noise(count, seed: seed).map { 0x61 + $0 & 0x0f }
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
        // Two taken, more than half left: no refill yet.
        #expect(pool.count == pool.capacity - 2)
        // Taking past half refills it.
        for _ in 0 ..< pool.capacity / 2 - 2 { _ = try pool.take() }
        #expect(Self.waitForFull(pool))
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

    /// Files dropped to make room stay open until a batch of
    /// ``MemoryFileCache/closeBatch`` is full, then close together; a pack's
    /// removal closes the batch at once. None of them counts as kept.
    @Test func droppedFilesCloseInBatchesAndWithARemoval() throws {
        let f = StoreFixture()
        var options = AssetStore.Options()
        options.memoryFileCache = .init(bytes: 1 << 30, files: 2)
        let store = try f.store(options)
        let batch = MemoryFileCache.closeBatch
        // Sizes no other test's files have, so each file is found by its size.
        let sizes = (0 ..< batch + 4).map { 70_001 + 13 * $0 }
        let members = Dictionary(uniqueKeysWithValues: sizes.map { ("m\($0).txt", Self.letters($0, seed: UInt64($0))) })
        try store.install(packAt: try f.pack("p.zip", id: "p", members))
        func open(_ size: Int) -> Int { Self.descriptors(ofSize: Int64(size)) }
        for (i, size) in sizes.prefix(batch + 2).enumerated() {
            let d = try store.descriptor(for: "m\(size).txt", inPack: "p")
            _ = consume d
            // Files 0 ..< i-1 were dropped; the first batch - 1 of them wait.
            if i >= 2 && i <= batch {
                #expect(store.memoryFiles.closingCount == i - 1, "after \(i + 1) handouts")
                #expect(open(sizes[i - 2]) == 1, "file \(i - 2) dropped but not closed yet")
            }
        }
        #expect(store.memoryFiles.usage.files == 2)
        // The batch-th drop sent the whole batch to be closed.
        #expect(store.memoryFiles.closingCount == 0)
        #expect(eventually(timeout: 30) { sizes.prefix(batch).allSatisfy { open($0) == 0 } })
        #expect(open(sizes[batch]) == 1 && open(sizes[batch + 1]) == 1)  // the two kept
        // One more drop waits; removing the pack closes it and the kept ones.
        _ = try store.descriptor(for: "m\(sizes[batch + 2]).txt", inPack: "p")
        #expect(store.memoryFiles.closingCount == 1 && open(sizes[batch]) == 1)
        try store.remove(pack: "p")
        #expect(store.memoryFiles.closingCount == 0 && store.memoryFiles.usage.files == 0)
        #expect(sizes.allSatisfy { open($0) == 0 })
    }

    /// A cache with a small byte limit closes a dropped file at once when it
    /// is a sixteenth of the limit or more, so its memory stays near the limit.
    @Test func aDroppedFileOfASixteenthOfTheLimitClosesAtOnce() throws {
        let f = StoreFixture()
        var options = AssetStore.Options()
        options.memoryFileCache = .init(bytes: 200_000, files: 64)
        let store = try f.store(options)
        let sizes = [90_001, 90_017, 90_031]
        try store.install(packAt: try f.pack("p.zip", id: "p", Dictionary(uniqueKeysWithValues: sizes.map { ("m\($0).txt", Self.letters($0, seed: UInt64($0))) })))
        for size in sizes { _ = try store.descriptor(for: "m\(size).txt", inPack: "p") }
        #expect(store.memoryFiles.usage.files == 2 && store.memoryFiles.closingCount == 0)
        #expect(eventually(timeout: 30) { Self.descriptors(ofSize: Int64(sizes[0])) == 0 })
    }
}

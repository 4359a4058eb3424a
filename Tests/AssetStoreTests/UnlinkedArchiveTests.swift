import Foundation
import Testing
import AssetArchive
@testable import AssetStore
import AssetSystem
import TestSupport

/// An archive another process replaces or removes is unlinked, but a process
/// that mapped it would keep its disk space until it next read that pack —
/// for a removed pack, until it exited. The first read after such a commit,
/// of any pack, lets go of every archive the commit left no pack naming —
/// also one whose file is not unlinked yet (the other process unlinks it
/// just after its commit, and a read may come in between).
@Suite struct UnlinkedArchiveTests {
    @Test func archivesAnotherProcessUnlinksAreLetGoAtTheNextReadOfAnyPack() throws {
        let f = StoreFixture("unlinked-archives")
        let store = try f.store()
        try store.install(packAt: try f.pack("a1.zip", id: "a", ["x.png": [1]]))
        try store.install(packAt: try f.pack("b.zip", id: "b", ["y.png": [2]]))
        try store.install(packAt: try f.pack("c.zip", id: "c", ["z.png": [3, 3]]))
        #expect(Array(try store.contents(at: "x.png", inPack: "a")) == [1])
        #expect(Array(try store.contents(at: "z.png", inPack: "c")) == [3, 3])
        // A stored member's descriptor: the map keeps the archive open too.
        do {
            let d = try store.descriptor(for: "z.png", inPack: "c")
            #expect(d.length == 2)
        }
        let replaced = try store.member(at: "x.png", inPack: "a").record.archiveKey
        let removed = try store.member(at: "z.png", inPack: "c").record.archiveKey
        let paths = [f.container.packsPath + "/" + IndexSchema.archiveName(pack: "a", archiveKey: replaced),
                     f.container.packsPath + "/" + IndexSchema.archiveName(pack: "c", archiveKey: removed)]
        #expect(Set(store.archives.mapped.map(\.key)).isSuperset(of: [replaced, removed]))
        #expect(Self.held(paths).count == 3)  // two mappings and the descriptor the map keeps open

        // Another process replaces pack a and removes pack c. Pack c's
        // archive keeps a second name, put back afterwards: as if this
        // process read between the commit and the unlink.
        let later = f.root + "/c-archive-later"
        #expect(link(paths[1], later) == 0)
        try f.pack("a2.zip", id: "a", ["x.png": [7, 7]])
        #expect(try Program.run(Program.built("assetpack"), ["install", f.root + "/a2.zip", "--container", f.container.path]).status == 0)
        #expect(try Program.run(Program.built("assetpack"), ["rm", "c", "--container", f.container.path]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: paths[0]) && !FileManager.default.fileExists(atPath: paths[1]))
        #expect(link(later, paths[1]) == 0)

        // A read of pack b, which neither touched, lets both archives go.
        #expect(Array(try store.contents(at: "y.png", inPack: "b")) == [2])
        #expect(Set(store.archives.mapped.map(\.key)).isDisjoint(with: [replaced, removed]))
        // The mappings go on a background queue: no mapping or descriptor of
        // either file is left in this process within a few seconds.
        let deadline = Date().addingTimeInterval(10)
        while !Self.held(paths).isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(Self.held(paths).isEmpty, "\(Self.held(paths))")
        #expect(Array(try store.contents(at: "x.png", inPack: "a")) == [7, 7])
        #expect(throws: StoreError.self) { _ = try store.contents(at: "z.png", inPack: "c") }
        unlink(paths[1])
    }

    /// The lines of `/proc/self/maps` and the targets of `/proc/self/fd`
    /// that name one of `paths` (as the kernel shows an unlinked file: its
    /// path and " (deleted)").
    static func held(_ paths: [String]) -> [String] {
        // Read to the end: a /proc file says it is empty to stat.
        let maps = String(decoding: (try? FileDescriptor.open("/proc/self/maps").readToEnd()) ?? [], as: UTF8.self)
        let mapped = maps.split(separator: "\n").map(String.init).filter { line in paths.contains { line.contains($0) } }
        let open = FileSystem.names(in: "/proc/self/fd").compactMap { name -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
                  paths.contains(where: { target.hasPrefix($0) }) else { return nil }
            return target
        }
        return mapped + open
    }
}

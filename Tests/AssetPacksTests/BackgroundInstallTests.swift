import Foundation
import Testing
import AssetPacks
import AssetArchive
import TestSupport

/// `installPack(…, priority: .background)`: the install runs on a thread of
/// its own at nice 19 (`SCHED_BATCH`), and is otherwise the same install.
@Suite struct BackgroundInstallTests {
    /// The calling thread's ID, scheduling policy and nice value, from
    /// `/proc/thread-self` (`stat` fields 19 and 41).
    static func thread() throws -> (id: String, policy: Int, nice: Int) {
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
        let stat = try String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)
        // Fields after the command name, which is in parentheses: field 3 first.
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        return (String(link.split(separator: "/").last!), Int(fields[41 - 3])!, Int(fields[19 - 3])!)
    }

    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var threads: [(id: String, policy: Int, nice: Int)] = []
        func add(_ t: (id: String, policy: Int, nice: Int)) { lock.withLock { threads.append(t) } }
        var all: [(id: String, policy: Int, nice: Int)] { lock.withLock { threads } }
    }

    func pack(_ dir: TemporaryDirectory, _ name: String, text: String) throws -> String {
        let path = dir.file(name)
        try ArchiveWriter.write([
            ArchiveWriter.Member(path: "notes.txt", source: .bytes(Array(text.utf8)), compression: .stored),
            ArchiveWriter.Member(path: "media/clip.bin", source: .bytes(noise(20_000, seed: 4)), compression: .deflated),
        ], to: path)
        return path
    }

    @Test func aBackgroundInstallRunsAtNice19AndLeavesTheCallerAsItWas() throws {
        let dir = TemporaryDirectory("background-install")
        let manager = try AssetPackManager(container: AssetPackManager.Container(path: dir.file("container")))
        let caller = try Self.thread()
        let seen = Seen()
        let result = try manager.installPack(at: try pack(dir, "bg.zip", text: "first"), priority: .background,
                                             progress: { _ in if let t = try? Self.thread() { seen.add(t) } })
        #expect(result.change == .installed)
        #expect(Array(try manager.contents(at: "notes.txt", searchingInAssetPackWithID: "bg")) == Array("first".utf8))
        #expect(Array(try manager.contents(at: "media/clip.bin", searchingInAssetPackWithID: "bg")) == noise(20_000, seed: 4))
        let threads = seen.all
        #expect(!threads.isEmpty)
        for t in threads {
            #expect(t.id != caller.id)
            #expect(t.policy == 3 /* SCHED_BATCH */ && t.nice == 19, "\(t)")
        }
        let after = try Self.thread()
        #expect(after.policy == caller.policy && after.nice == caller.nice)
    }

    /// A background install copies the pack in small pieces, starting
    /// writeback as it goes and giving way between pieces: the archive it
    /// installs is the pack file byte for byte, for a size that is no
    /// multiple of a piece, with and without progress reports.
    @Test(arguments: [false, true])
    func aBackgroundInstallCopiesThePackWhole(reporting: Bool) throws {
        let dir = TemporaryDirectory("background-copy")
        let manager = try AssetPackManager(container: AssetPackManager.Container(path: dir.file("container")))
        let path = dir.file("big.zip")
        let large = noise(3 << 20 + 12_345, seed: 9)
        try ArchiveWriter.write([
            ArchiveWriter.Member(path: "large.bin", source: .bytes(large), compression: .stored),
            ArchiveWriter.Member(path: "notes.txt", source: .bytes(Array("big".utf8)), compression: .deflated),
        ], to: path)
        let ignore: @Sendable (AssetPackProgress) -> Void = { _ in }
        let progress = reporting ? ignore : nil
        let result = try manager.installPack(at: path, priority: .background, progress: progress)
        #expect(result.change == .installed)
        let packs = try FileManager.default.contentsOfDirectory(atPath: dir.file("container/packs")).filter { $0.hasPrefix("big.") }
        #expect(packs.count == 1)
        let installed = try Data(contentsOf: URL(fileURLWithPath: dir.file("container/packs/" + packs[0])))
        #expect(installed == (try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(Array(try manager.contents(at: "large.bin", searchingInAssetPackWithID: "big")) == large)
    }

    @Test func aNormalInstallStaysOnTheCallersThread() throws {
        let dir = TemporaryDirectory("normal-install")
        let manager = try AssetPackManager(container: AssetPackManager.Container(path: dir.file("container")))
        let caller = try Self.thread()
        let seen = Seen()
        try manager.installPack(at: try pack(dir, "n.zip", text: "n"), progress: { _ in if let t = try? Self.thread() { seen.add(t) } })
        #expect(!seen.all.isEmpty)
        #expect(seen.all.allSatisfy { $0.id == caller.id && $0.policy == caller.policy })
    }

    /// A damaged file installed in the background is refused with the same
    /// typed error, and the version installed before stays readable.
    @Test func aDamagedFileInstalledInTheBackgroundIsRefusedAndChangesNothing() throws {
        let dir = TemporaryDirectory("background-bad")
        let manager = try AssetPackManager(container: AssetPackManager.Container(path: dir.file("container")))
        try manager.installPack(at: try pack(dir, "bg.zip", text: "kept"), priority: .background)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir.file("bg.zip")))
        bytes.removeLast(bytes.count / 3)
        let bad = dir.file("bad/bg.zip")
        try FileManager.default.createDirectory(atPath: dir.file("bad"), withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: bad))
        do {
            try manager.installPack(at: bad, priority: .background)
            Issue.record("a truncated pack was installed")
        } catch {
            #expect(error.code == .badArchive && error.path == bad, "\(error)")
        }
        #expect(Array(try manager.contents(at: "notes.txt", searchingInAssetPackWithID: "bg")) == Array("kept".utf8))
    }
}

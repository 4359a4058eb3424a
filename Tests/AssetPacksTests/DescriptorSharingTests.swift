import Foundation
import Testing
import AssetPacks

/// Descriptors as documented on ``AssetDescriptor``: by default a `dup` that
/// shares its file position with the others of the same file, set to the
/// member at each handout; `.ownOffset` a position of its own; memory files
/// kept per ``AssetPackManager/Options/memoryFileCacheBytes``.
@Suite struct DescriptorSharingTests {
    typealias Fixture = PublicSurfaceTests.Fixture

    static func inode(_ d: AssetDescriptor) -> UInt64 {
        var st = stat()
        _ = fstat(d.fileDescriptor, &st)
        return UInt64(st.st_ino)
    }

    static func position(_ d: AssetDescriptor) -> Int64 { Int64(lseek(d.fileDescriptor, 0, SEEK_CUR)) }

    @Test(arguments: ["clip.m4v", "notes.txt"])
    func handoutsShareAPositionUnlessOwnOffset(path: String) throws {
        let f = try Fixture()
        let a = try f.manager.descriptor(for: path)
        let b = try f.manager.descriptor(for: path)
        let own = try f.manager.descriptor(for: path, options: .ownOffset)
        #expect(Self.inode(a) == Self.inode(b) && Self.inode(own) == Self.inode(a))
        #expect(Self.position(a) == a.offset && Self.position(own) == own.offset)
        #expect(lseek(a.fileDescriptor, off_t(a.offset) + 7, SEEK_SET) == a.offset + 7)
        #expect(Self.position(b) == b.offset + 7)
        #expect(Self.position(own) == own.offset)
        // read(into:at:) uses no position: right whatever the others did.
        #expect(try a.data() == (path == "notes.txt" ? f.text : f.media))
        #expect(try own.data() == a.data())
    }

    @Test func aManagerWithoutACacheMakesAFileForEveryHandout() throws {
        let f = try Fixture()
        var options = AssetPackManager.Options()
        options.memoryFileCacheBytes = 0
        let uncached = try AssetPackManager(container: .init(path: f.root + "/container"), options: options)
        let one = try uncached.descriptor(for: "notes.txt"), two = try uncached.descriptor(for: "notes.txt")
        #expect(Self.inode(one) != Self.inode(two))
        #expect(try one.data() == f.text && two.data() == f.text)
        // The default keeps one: the next handout is the same file.
        let kept = try f.manager.descriptor(for: "notes.txt"), again = try f.manager.descriptor(for: "notes.txt")
        #expect(Self.inode(kept) == Self.inode(again))
    }

    @Test(arguments: [("memoryFileCacheBytes", Int64(-1), 128), ("memoryFileCacheCount", Int64(64 << 20), -1)])
    func aNegativeCacheSizeIsInvalidOption(field: String, bytes: Int64, count: Int) throws {
        let root = FileManager.default.temporaryDirectory.path + "/sharing-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        var options = AssetPackManager.Options()
        options.memoryFileCacheBytes = bytes
        options.memoryFileCacheCount = count
        do {
            _ = try AssetPackManager(container: .init(path: root + "/container"), options: options)
            Issue.record("accepted \(field)")
        } catch {
            #expect(error.code == .invalidOption && error.field == field, "\(error)")
            #expect(error.message.contains("AssetPackManager.Options.\(field)") && error.message.contains("not -1"), "\(error.message)")
        }
        #expect(!FileManager.default.fileExists(atPath: root + "/container"), "nothing is created for refused options")
    }
}

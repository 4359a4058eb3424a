import Foundation
import Testing
import AssetPacks
import TestSupport

/// Reads, descriptors and listings through the C API, compared with what
/// the Swift API and `assetpack` give for the same container.
@Suite struct ReadTests {
    let f: CFixture
    init() throws { f = try CFixture() }

    func drive(_ arguments: [String]) throws -> Program.Result { try CLibrary.drive([f.container] + arguments) }

    static let members = ["hello.txt", "media/clip.bin", "media/tiny.bin", "empty.txt", "shared.txt"]

    @Test(arguments: ["read", "copy"], members)
    func bytesAreTheSwiftAPIs(command: String, path: String) throws {
        let r = try drive([command, "base", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == (try f.manager.contents(at: path, searchingInAssetPackWithID: "base")))
    }

    /// A stored member's bytes are the installed archive's mapped pages; a
    /// deflated one's are inflated into memory of the handle's own.
    @Test func storedBytesAreTheArchiveMappingItself() throws {
        let stored = try drive(["mapped", "base", "media/clip.bin"])
        #expect(stored.status == 0, "\(stored.stderr)")
        let d = try f.manager.descriptor(for: "media/clip.bin", searchingInAssetPackWithID: "base")
        defer { try? d.close() }
        let archive = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(d.fileDescriptor)")
        #expect(stored.out == archive + "\n")
        #expect(archive.hasPrefix(f.container + "/packs/"))
        #expect(try drive(["mapped", "base", "hello.txt"]).out == "anonymous\n")
    }

    @Test func aPathInOnePackIsFoundWithoutItsPackID() throws {
        let r = try drive(["read", "-", "only-extra.txt"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == "only in extra\n")
        let s = try drive(["stat", "-", "media/clip.bin"])
        #expect(s.out.hasPrefix("base media/clip.bin 70000 70000 0 "))
    }

    @Test func statDescribesStoredAndDeflatedMembers() throws {
        for path in Self.members {
            let m = try #require(try f.manager.members(inAssetPackWithID: "base").first { $0.path == path })
            let r = try drive(["stat", "base", path])
            let method = m.method == .deflated ? 8 : 0
            #expect(r.out == "base \(path) \(m.size) \(m.storedSize) \(method) \(String(format: "%08x", m.crc32))\n", "\(r.stderr)")
        }
        #expect(try drive(["stat", "base", "hello.txt"]).out.contains(" 5000 ") )
    }

    @Test func copyIntoASmallBufferSaysHowBigItMustBe() throws {
        let r = try drive(["copy-into", "base", "media/clip.bin", "69999"])
        #expect(r.status == 1)
        #expect(r.out == "needs 70000\n")
        #expect(DriverError(r.stderr)?.code == -101)
        #expect(DriverError(r.stderr)?.member == "media/clip.bin")
        let exact = try drive(["copy-into", "base", "media/clip.bin", "70000"])
        #expect(exact.status == 0 && exact.stdoutBytes == f.clip)
    }

    /// Stored members come as ranges of the archive, deflated ones (and any,
    /// standalone) as memory files at offset 0; all read-only, close-on-exec.
    @Test(arguments: [("media/clip.bin", false, 0), ("hello.txt", false, 1), ("media/clip.bin", true, 1), ("empty.txt", false, 0)])
    func descriptorsHoldTheMember(path: String, standalone: Bool, source: Int) throws {
        let r = try drive(["fd", "base", path] + (standalone ? ["standalone"] : []))
        #expect(r.status == 0, "\(r.stderr)")
        let expected = try f.manager.contents(at: path, searchingInAssetPackWithID: "base")
        #expect(r.stdout == expected)
        let fields = r.stderr.split(separator: "\n")[0].split(separator: " ").map(String.init)
        #expect(fields.count == 6)
        #expect(fields[0] == "\(source)")
        if source == 1 { #expect(fields[1] == "0") } else if !expected.isEmpty { #expect(Int(fields[1])! > 0) }
        #expect(fields[2] == "\(expected.count)")
        let crc = expected.withUnsafeBytes { AssetDescriptor.checksum($0) }
        #expect(fields[3] == String(format: "%08x", crc))
        #expect(fields[4] == "1", "not close-on-exec")
        #expect(fields[5] == "0", "writable")
    }

    @Test func packsAreListedAsAssetpackListsThem() throws {
        let r = try drive(["packs"])
        #expect(r.status == 0, "\(r.stderr)")
        let expected = try f.manager.allAssetPacks().map {
            "\($0.id) \($0.version) onDemand \($0.memberCount) \($0.totalSize) \($0.archiveSize) \($0.sha256) 1\n"
        }.joined()
        #expect(r.out == expected)
        #expect(r.out.hasPrefix("base ") && r.out.contains("\nextra "))
    }

    @Test func membersAreListedSortedAndByDirectory() throws {
        let all = try drive(["members", "base"])
        #expect(all.status == 0, "\(all.stderr)")
        let expected = try f.manager.members(inAssetPackWithID: "base").map {
            "\($0.path) \($0.size) \($0.storedSize) \($0.method == .deflated ? 8 : 0) \(String(format: "%08x", $0.crc32))\n"
        }
        #expect(all.out == expected.joined())
        #expect(all.out.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
                == ["empty.txt", "hello.txt", "media/clip.bin", "media/tiny.bin", "shared.txt"])
        let media = try drive(["members", "base", "media"])
        #expect(media.out.split(separator: "\n").map { String($0.split(separator: " ")[0]) } == ["media/clip.bin", "media/tiny.bin"])
        #expect(try drive(["members", "base", "nothing-here"]).out == "")
    }

    @Test func aGroupContainerIsFoundAsTheSwiftAPIFindsIt() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["ASSETPACKS_CONTAINER"] = f.container
        let r = try Program.run(try CLibrary.driver(), ["-g", "-", "read", "base", "media/tiny.bin"], environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdoutBytes == f.tiny)
        environment["ASSETPACKS_CONTAINER"] = nil
        environment["XDG_DATA_HOME"] = f.directory.file("xdg")
        let p = try Program.run(try CLibrary.driver(), ["-g", "-w", "-c", "game", "path"], environment: environment)
        #expect(p.status == 0, "\(p.stderr)")
        #expect(p.out == AssetPackManager.Container.default(group: "game", environment: environment).path + "\n")
    }

    @Test func bytesAreAssetpackCats() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["ASSETPACKS_CONTAINER"] = f.container
        for path in Self.members {
            let cat = try Program.run(Program.built("assetpack"), ["cat", "--pack", "base", path], environment: environment)
            #expect(cat.status == 0, "\(cat.stderr)")
            #expect(try drive(["read", "base", path]).stdout == cat.stdout)
        }
    }
}

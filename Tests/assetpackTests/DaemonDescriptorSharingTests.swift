import Foundation
import Testing
@testable import AssetPacks
import AssetStore
import AssetSystem
import TestSupport

/// Which descriptors from the daemon share an open description (and so a
/// file position): a client's stored members of one archive do, as a
/// process's own handouts do, unless it asks for `.ownOffset`; nothing is
/// ever shared between two clients, and memory files never are.
@Suite(.serialized) struct DaemonDescriptorSharingTests {
    typealias Daemon = DaemonTests.Daemon

    /// Whether moving `a`'s file position moves `b`'s: one open description.
    static func shareAPosition(_ a: AssetDescriptor, _ b: AssetDescriptor) -> Bool {
        let before = lseek(b.fileDescriptor, 0, SEEK_CUR)
        let moved = lseek(a.fileDescriptor, before + 7, SEEK_SET)
        defer { _ = lseek(a.fileDescriptor, before, SEEK_SET) }
        return moved == before + 7 && lseek(b.fileDescriptor, 0, SEEK_CUR) == before + 7
    }

    @Test(.timeLimit(.minutes(4))) func aClientsStoredMembersShareOneDescriptionAndNoOtherClientsDo() throws {
        let s = TemporaryDirectory("assetpack-daemon-shared")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let clients = try (0 ..< 2).map { _ in try AssetPackClient.connect(container: manager.container) }
        let big = try clients[0].descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress")
        let tiny = try clients[0].descriptor(for: "tiny/t007", searchingInAssetPackWithID: "stress")
        let again = try clients[0].descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress")
        let own = try clients[0].descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress", options: .ownOffset)
        let others = try clients[1].descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress")
        let text = try clients[0].descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress")
        let textAgain = try clients[0].descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress")
        for d in [big, tiny, again, own, others] { #expect(d.source == .archive) }
        #expect(text.source == .memory)
        // Each handout set the one position to its member's start; the last was `again`'s.
        #expect(lseek(big.fileDescriptor, 0, SEEK_CUR) == again.offset)
        #expect(lseek(own.fileDescriptor, 0, SEEK_CUR) == own.offset)
        #expect(lseek(others.fileDescriptor, 0, SEEK_CUR) == others.offset)
        #expect(Self.shareAPosition(big, tiny) && Self.shareAPosition(tiny, again))
        #expect(!Self.shareAPosition(big, own) && !Self.shareAPosition(own, big))
        #expect(!Self.shareAPosition(big, others) && !Self.shareAPosition(others, big))
        #expect(!Self.shareAPosition(text, textAgain))
        for (d, path) in [(big, "media/big.bin"), (tiny, "tiny/t007"), (own, "media/big.bin"), (others, "media/big.bin"), (text, "text/a.txt")] {
            #expect(try d.data() == manager.contents(at: path, searchingInAssetPackWithID: "stress"), "\(path)")
        }
        // A batch shares it too, unless it asks for `.ownOffset`.
        let batch = try clients[0].descriptors(for: ["tiny/t001", "tiny/t002"], searchingInAssetPackWithID: "stress").map { try $0.get() }
        #expect(Self.shareAPosition(batch[0], big) && Self.shareAPosition(batch[1], big))
        let ownBatch = try clients[0].descriptors(for: ["tiny/t001", "tiny/t002"], searchingInAssetPackWithID: "stress", options: .ownOffset)
            .map { try $0.get() }
        #expect(!Self.shareAPosition(ownBatch[0], ownBatch[1]) && !Self.shareAPosition(ownBatch[0], big))
        #expect(lseek(ownBatch[1].fileDescriptor, 0, SEEK_CUR) == ownBatch[1].offset)
    }

    @Test(.timeLimit(.minutes(4))) func anUpdateIsHandedOutFromTheNewArchiveAndTheOldDescriptionCloses() throws {
        let s = TemporaryDirectory("assetpack-daemon-shared-update")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let packs = URL(fileURLWithPath: s.container + "/packs").resolvingSymlinksInPath().path
        let client = try AssetPackClient.connect(container: manager.container)
        let v1 = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress")
        let old = DaemonSpareDescriptorTests.target(v1.fileDescriptor)
        #expect(DaemonSpareDescriptorTests.descriptors(of: daemon.child.pid, into: packs) == [old])
        try manager.installPack(at: s.path + "/packs/v2.zip")
        let v2 = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress")
        let now = DaemonSpareDescriptorTests.target(v2.fileDescriptor)
        #expect(now != old && FileManager.default.fileExists(atPath: now), "\(now)")
        #expect(try v2.data() == manager.contents(at: "media/big.bin", searchingInAssetPackWithID: "stress"))
        #expect(!Self.shareAPosition(v1, v2))
        // The connection let go of v1's description when v2's came; the
        // client's descriptor still reads v1's bytes.
        #expect(DaemonSpareDescriptorTests.descriptors(of: daemon.child.pid, into: packs) == [now])
        #expect(try v1.data().count == Int(v1.length))
    }

    @Test(.timeLimit(.minutes(4))) func descriptionsCloseWithTheirConnection() throws {
        let s = TemporaryDirectory("assetpack-daemon-shared-close")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let packs = URL(fileURLWithPath: s.container + "/packs").resolvingSymlinksInPath().path
        var clients: [AssetPackClient] = []
        for _ in 0 ..< 3 {
            let client = try AssetPackClient.connect(container: manager.container)
            for path in ["media/big.bin", "tiny/t001", "media/big.bin"] {
                _ = try client.descriptor(for: path, searchingInAssetPackWithID: "stress")
                _ = try client.descriptor(for: path, searchingInAssetPackWithID: "other")
            }
            clients.append(client)
        }
        // One description per client and archive (stress's and other's), no spares.
        #expect(DaemonSpareDescriptorTests.descriptors(of: daemon.child.pid, into: packs).count == 6)
        clients = []
        #expect(eventually(timeout: 20) { DaemonSpareDescriptorTests.descriptors(of: daemon.child.pid, into: packs).isEmpty },
                "\(DaemonSpareDescriptorTests.descriptors(of: daemon.child.pid, into: packs))")
    }

    /// With `ulimit -n` too low to keep any (every descriptor left goes to
    /// connections and memory files), each handout is an open description
    /// of its own, as without the flag.
    @Test(.timeLimit(.minutes(4))) func withNoRoomForDescriptionsEachHandoutHasItsOwn() throws {
        let s = TemporaryDirectory("assetpack-daemon-shared-no-room")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container, descriptors: 128)
        defer { daemon.stop() }
        let client = try AssetPackClient.connect(container: manager.container)
        let a = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress")
        let b = try client.descriptor(for: "tiny/t007", searchingInAssetPackWithID: "stress")
        #expect(!Self.shareAPosition(a, b) && !Self.shareAPosition(b, a))
        #expect(lseek(b.fileDescriptor, 0, SEEK_CUR) == b.offset)
        #expect(try b.data() == manager.contents(at: "tiny/t007", searchingInAssetPackWithID: "stress"))
    }

    /// One success as a client that keeps descriptions reads it: the
    /// body's slot and reuse bytes, and whether a descriptor came.
    struct KeptReply {
        var status: UInt16
        var offset: Int64
        var slot: UInt8
        var reuse: UInt8
        var passed: Bool
    }

    static func keptReply(_ raw: DaemonTests.RawClient) throws -> KeptReply {
        var got: [UInt8] = []
        var passed = false
        while got.count < 16 {
            let m = try raw.socket.receive(upTo: 16 - got.count)
            try #require(!m.bytes.isEmpty)
            passed = passed || m.descriptor != nil
            got += m.bytes
        }
        let length = Int(got[8]) | Int(got[9]) << 8
        while got.count < 16 + length {
            let m = try raw.socket.receive(upTo: 16 + length - got.count)
            try #require(!m.bytes.isEmpty)
            passed = passed || m.descriptor != nil
            got += m.bytes
        }
        let status = UInt16(got[6]) | UInt16(got[7]) << 8
        guard status == 0 else { return KeptReply(status: status, offset: -1, slot: 0, reuse: 0, passed: passed) }
        let offset = got[16..<24].reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return KeptReply(status: status, offset: offset, slot: got[16 + 25], reuse: got[16 + 26], passed: passed)
    }

    /// With the keep flag, each description crosses the socket once, with
    /// its slot; later replies of its archive name the slot and pass
    /// nothing. A request without the flag on the same connection is still
    /// passed the description, slot 0, and does not change what the client
    /// keeps. A pack's other archive takes the slot its older one had.
    /// Keeping without the shared position is refused and the connection closes.
    @Test(.timeLimit(.minutes(4))) func aClientThatKeepsDescriptionsIsPassedEachOnceThenNamedBySlot() throws {
        let s = TemporaryDirectory("assetpack-daemon-shared-kept")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let path = manager.container.daemonSocketPath
        let raw = try DaemonTests.RawClient(path)
        func ask(_ pack: String, _ member: String, keeps: Bool = true) throws -> KeptReply {
            try raw.socket.sendAll(DaemonRequest(pack: pack, path: member, shared: true, keeps: keeps).encoded)
            return try Self.keptReply(raw)
        }
        let offset = { (member: String, pack: String) throws -> Int64 in
            try AssetPackClient.connect(container: manager.container).descriptor(for: member, searchingInAssetPackWithID: pack).offset
        }
        let first = try ask("stress", "media/big.bin")
        #expect(first.status == 0 && first.passed && first.slot == 1 && first.reuse == 0)
        let second = try ask("stress", "tiny/t007")
        #expect(second.status == 0 && !second.passed && second.slot == 1 && second.reuse == 1)
        #expect(second.offset == (try offset("tiny/t007", "stress")))
        let other = try ask("other", "media/big.bin")
        #expect(other.status == 0 && other.passed && other.slot == 2 && other.reuse == 0)
        let unkept = try ask("stress", "tiny/t001", keeps: false)
        #expect(unkept.status == 0 && unkept.passed && unkept.slot == 0 && unkept.reuse == 0)
        let third = try ask("stress", "tiny/t002")
        #expect(third.status == 0 && !third.passed && third.slot == 1 && third.reuse == 1)
        // A memory file is never kept.
        let text = try ask("stress", "text/a.txt")
        #expect(text.status == 0 && text.passed && text.slot == 0 && text.reuse == 0)
        // An update: the new archive is passed, in the slot of the old one.
        try manager.installPack(at: s.path + "/packs/v2.zip")
        let updated = try ask("stress", "media/big.bin")
        #expect(updated.status == 0 && updated.passed && updated.slot == 1 && updated.reuse == 0)
        #expect(try ask("other", "tiny/t001").slot == 2)

        let confused = try DaemonTests.RawClient(path)
        try confused.socket.sendAll(DaemonTests.header(length: 1, flags: DaemonProtocol.keepFlag, packLength: 0) + [0x61])
        #expect(try confused.replyStatus() == 65)
        #expect(try confused.isClosed())
    }

    /// The per-connection set: a pack's newer archive replaces its older
    /// one, the least recently used goes past the bound, and with no room
    /// a new one only replaces. Each kept description has a slot no other
    /// one holds, and a new one takes the lowest free one.
    @Test func theConnectionsSetKeepsOnePerArchiveAndFewPerConnection() throws {
        let s = TemporaryDirectory("assetpack-daemon-shared-set")
        let file = s.path + "/archive"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("bytes".utf8)))
        func description(_ pack: String, _ key: UInt64) throws -> DescriptorDaemon.SharedDescription {
            DescriptorDaemon.SharedDescription(archive: ArchiveID(pack: pack, archiveKey: key), descriptor: try FileDescriptor.open(file))
        }
        let bound = DescriptorDaemon.SharedDescriptions.perConnection
        var set = DescriptorDaemon.SharedDescriptions()
        #expect(set.use(ArchiveID(pack: "p0", archiveKey: 1)) == nil)
        for i in 0 ..< bound { #expect(set.keep(try description("p\(i)", 1), bound: bound) == 0) }
        #expect(set.use(ArchiveID(pack: "p0", archiveKey: 1)) != nil)        // now the most recently used
        #expect(set.keep(try description("p\(bound)", 1), bound: bound) == 1)  // p1 goes, not p0
        #expect(set.use(ArchiveID(pack: "p1", archiveKey: 1)) == nil && set.use(ArchiveID(pack: "p0", archiveKey: 1)) != nil)
        #expect(set.keep(try description("p0", 2), bound: bound) == 1)        // p0's older archive goes
        #expect(set.use(ArchiveID(pack: "p0", archiveKey: 1)) == nil && set.use(ArchiveID(pack: "p0", archiveKey: 2)) != nil)
        #expect(set.kept.count == bound)
        func slot(_ pack: String, _ key: UInt64) -> UInt8? { set.kept.first { $0.description.archive == ArchiveID(pack: pack, archiveKey: key) }?.slot }
        // p0 kept slot 1's place through its new archive; p4 took p1's slot 2.
        #expect(slot("p0", 2) == 1 && slot("p\(bound)", 1) == 2 && slot("p2", 1) == 3 && slot("p3", 1) == 4)
        #expect(set.keep(try description("q", 1), bound: bound - 2) == 3)     // no room: shrinks to the bound
        #expect(set.kept.count == bound - 2 && set.use(ArchiveID(pack: "q", archiveKey: 1)) != nil)
        #expect(Set(set.kept.map(\.slot)).count == set.kept.count)
        #expect(set.removeAll() == bound - 2 && set.isEmpty)
    }
}

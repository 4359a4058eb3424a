import Foundation
import Testing
import AssetArchive
@testable import AssetStore  // the limits record's codec
import AssetSystem
import TestSupport

/// Decompression bombs: packs whose deflated members declare more than the
/// container's ``PackLimits`` are refused before anything is inflated, and
/// members installed under looser limits are refused when read.
@Suite struct LimitTests {
    static let mebibyte: UInt64 = 1 << 20
    static let gibibyte: UInt64 = 1 << 30

    /// A container with the good pack `good` installed (a stored member `a`
    /// and a deflated text member `t`), and a snapshot of it.
    final class Fixture {
        let f = StoreFixture("limits")
        let store: AssetStore
        var before: [String: Int] = [:]
        var records: [PackRecord] = []

        init(_ options: AssetStore.Options = .init()) throws {
            store = try f.store(options)
            try store.install(packAt: try f.pack("good.zip", id: "good", ["a": [1, 2, 3], "t.txt": text(10_000)]))
            before = containerFiles(f.container.path)
            records = try store.allPackRecords()
        }

        func bomb(_ name: String, _ members: [(path: String, size: UInt64)]) throws -> String {
            try ZeroBomb.write(members, to: f.root + "/" + name)
        }

        /// Installing `path` fails with `.limitExceeded` and `problem`, and
        /// nothing in the container changes.
        func expectRefused(_ path: String, member: String?, _ problem: StoreError.LimitProblem,
                           sourceLocation: SourceLocation = #_sourceLocation) throws {
            do {
                try store.install(packAt: path, id: "bomb")
                Issue.record("installed \(path)", sourceLocation: sourceLocation)
            } catch {
                #expect(error == .limitExceeded(archive: path, pack: nil, member: member, problem: problem), sourceLocation: sourceLocation)
            }
            #expect(containerFiles(f.container.path) == before, sourceLocation: sourceLocation)
            #expect(try store.allPackRecords() == records, sourceLocation: sourceLocation)
            #expect(Array(try store.contents(at: "a", inPack: "good")) == [1, 2, 3], sourceLocation: sourceLocation)
        }
    }

    /// The bombs the other tests use are real: they parse, inflate to
    /// exactly their declared size of zeros and carry the right CRC-32.
    @Test(arguments: [1, 2, 257, 258, 259, 517, 70_000, 3 << 20] as [UInt64])
    func theHandMadeBombIsValidDeflateOfZeros(_ size: UInt64) throws {
        let zeros = [UInt8](repeating: 0, count: Int(size))
        #expect(ZeroBomb.crc32OfZeros(size) == zeros.withUnsafeBytes { CRC32.checksum($0) })
        let bytes = ZeroBomb.archive([("z", size)])
        try bytes.withUnsafeBytes { raw in
            let archive = try ZipArchive.parse(raw, name: "bomb.zip")
            let entry = try #require(archive.entries.first)
            #expect(entry.method == .deflated && entry.uncompressedSize == size)
            #expect(try ZipArchive.extract(entry, from: raw, archive: "bomb.zip") == zeros)
        }
    }

    /// The issue's bomb, scaled: 2 GiB of zeros in 2 MB. Refused for its
    /// size, with nothing inflated (the archive is 2 MB in memory).
    @Test func aTwoGiBMemberIsRefusedAndNothingChanges() throws {
        let x = try Fixture()
        let path = try x.bomb("bomb.zip", [("zeros.bin", 2 * Self.gibibyte)])
        #expect(try FileDescriptor.open(path).status().size < 2_200_000)  // deflate's ceiling, 1,032:1
        try x.expectRefused(path, member: "zeros.bin", .memberTooLarge(size: 2 * Self.gibibyte, maximum: Self.gibibyte))
        #expect(try x.store.verify(options: .init(deep: true)).findings.isEmpty)
    }

    /// A member under the size limit but at 1,032:1 is refused for its ratio.
    @Test func aHighRatioMemberIsRefused() throws {
        let x = try Fixture()
        let size = 64 * Self.mebibyte
        let path = try x.bomb("ratio.zip", [("z", size)])
        let stored = UInt64(ZeroBomb.deflatedZeros(size).count)
        try x.expectRefused(path, member: "z", .compressionRatioTooHigh(size: size, storedSize: stored, maximum: 200))
    }

    /// The limits are checked before any member is inflated: a bomb whose
    /// deflate is damaged is refused for its size, not for the damage the
    /// inflation would find.
    @Test func theLimitIsCheckedBeforeInflating() throws {
        let x = try Fixture()
        var bytes = ZeroBomb.archive([("z", 64 * Self.mebibyte)])
        bytes[30 + 1 + 40] ^= 0xFF  // inside the data, past the block header
        let path = x.f.root + "/damaged.zip"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            try x.store.install(packAt: path, id: "bomb")
            Issue.record("installed a damaged bomb")
        } catch {
            guard case .limitExceeded(_, _, "z", .compressionRatioTooHigh) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        // With the limits lifted, the same file fails when inflated.
        let lifted = PackLimits(maximumMemberSize: .max, maximumCompressionRatio: .max)
        do { _ = try PackFile.validate(path: path, limits: lifted) } catch {
            guard case .archive = error else { Issue.record("unexpected \(error)"); return }
        }
    }

    /// Small members compress arbitrarily well and are exempt from the
    /// ratio: up to and including the exempt size.
    @Test func membersUpToTheExemptSizeMayHaveAnyRatio() throws {
        let x = try Fixture()
        let limit = PackLimits.defaults.compressionRatioExemptSize
        try x.store.install(packAt: try x.bomb("small.zip", [("z", limit)]), id: "small")
        #expect(try x.store.contents(at: "z", inPack: "small") == Data(count: Int(limit)))
        let over = try x.bomb("over.zip", [("z", limit + 1)])
        do {
            try x.store.install(packAt: over, id: "over")
            Issue.record("installed a member one byte over the exempt size")
        } catch {
            guard case .limitExceeded(_, _, "z", .compressionRatioTooHigh(limit + 1, _, 200)) = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    /// The sum of the deflated members' sizes is limited too: many members,
    /// each exempt from the ratio, cannot add up past it.
    @Test func manySmallMembersAddUpToTheLimit() throws {
        let x = try Fixture()
        try x.store.setLimits(PackLimits(maximumPackSize: 3 * Self.mebibyte))
        let members = (0..<4).map { (path: "z\($0)", size: Self.mebibyte) }
        try x.store.install(packAt: try x.bomb("three.zip", Array(members.prefix(3))), id: "three")
        let path = try x.bomb("four.zip", members)
        #expect(throws: StoreError.limitExceeded(archive: path, pack: nil, member: nil,
                                                 problem: .packTooLarge(size: 4 * Self.mebibyte, maximum: 3 * Self.mebibyte))) {
            try x.store.install(packAt: path, id: "four")
        }
        #expect(try x.store.packRecord("four") == nil)
    }

    /// The container records its limits; every store that opens it (in any
    /// process) enforces them, at once.
    @Test func recordedLimitsRaiseAndLowerTheThreshold() throws {
        let x = try Fixture()
        #expect(try x.store.recordedLimits() == nil)
        #expect(try x.store.limits() == .defaults)
        let size = 64 * Self.mebibyte
        let path = try x.bomb("ratio.zip", [("z", size)])
        #expect(throws: StoreError.self) { try x.store.install(packAt: path, id: "ratio") }

        // Raised: the same pack installs and reads.
        let raised = PackLimits(maximumCompressionRatio: 2000)
        try x.store.setLimits(raised)
        #expect(try x.store.recordedLimits() == raised)
        #expect(try x.store.limits() == raised)
        try x.store.install(packAt: path, id: "ratio")
        #expect(try x.store.contents(at: "z", inPack: "ratio").count == Int(size))

        // Lowered below what is installed: reads refuse before allocating;
        // stored members and members within the limit still read.
        try x.store.setLimits(PackLimits(maximumMemberSize: Self.mebibyte))
        let archive = x.f.container.packsPath + "/" + (try #require(try x.store.packRecord("ratio"))).archiveName
        let refusal = StoreError.limitExceeded(archive: archive, pack: "ratio", member: "z",
                                               problem: .memberTooLarge(size: size, maximum: Self.mebibyte))
        #expect(throws: refusal) { try x.store.contents(at: "z", inPack: "ratio") }
        #expect(throws: refusal) { try x.store.checkedContents(at: "z") }
        #expect(throws: refusal) { _ = try x.store.descriptor(for: "z", inPack: "ratio") }
        #expect(throws: refusal) { _ = try x.store.descriptor(for: "z", inPack: "ratio", options: .standalone) }
        #expect(Array(try x.store.contents(at: "a", inPack: "good")) == [1, 2, 3])
        #expect(try x.store.contents(at: "t.txt", inPack: "good") == Data(text(10_000)))

        // Another store of the container (as another process would) sees the record.
        let other = try AssetStore(container: x.f.container)
        #expect(try other.limits().maximumMemberSize == Self.mebibyte)

        // Removed: the defaults again, which refuse the ratio.
        try x.store.setLimits(nil)
        #expect(try x.store.recordedLimits() == nil)
        #expect(throws: StoreError.self) { try x.store.contents(at: "z", inPack: "ratio") }
    }

    /// A store opened with limits of its own enforces those, whatever the
    /// container records.
    @Test func optionsWinOverTheRecordedLimits() throws {
        let x = try Fixture()
        try x.store.setLimits(PackLimits(maximumCompressionRatio: 2000))
        try x.store.install(packAt: try x.bomb("ratio.zip", [("z", 8 * Self.mebibyte)]), id: "ratio")
        var options = AssetStore.Options()
        options.limits = .defaults
        let strict = try x.f.store(options)
        #expect(try strict.limits() == .defaults)
        #expect(throws: StoreError.self) { try strict.contents(at: "z", inPack: "ratio") }
        #expect(try x.store.contents(at: "z", inPack: "ratio").count == 8 << 20)
    }

    /// A record this build cannot read (damaged, or a later format) counts
    /// as none: the defaults apply, which refuse more.
    @Test func anUnreadableRecordMeansTheDefaults() throws {
        var bytes = PackLimits(maximumMemberSize: .max).encoded
        #expect(bytes.withUnsafeBytes { PackLimits(decoding: $0) } == PackLimits(maximumMemberSize: .max))
        bytes[0] = 2
        #expect(bytes.withUnsafeBytes { PackLimits(decoding: $0) } == nil)
        #expect(Array(bytes.dropLast()).withUnsafeBytes { PackLimits(decoding: $0) } == nil)
    }

    /// A pack within the limits installs as before; stored members are
    /// never held to them.
    @Test func packsWithinTheLimitsInstall() throws {
        let x = try Fixture()
        try x.store.setLimits(PackLimits(maximumMemberSize: 1000, maximumCompressionRatio: 2, compressionRatioExemptSize: 0,
                                         maximumPackSize: 1000))
        let big = noise(200_000, seed: 3)
        let path = try x.f.pack("stored.zip", id: "stored", ["big.bin": big], compression: .stored)
        try x.store.install(packAt: path)
        #expect(Array(try x.store.contents(at: "big.bin", inPack: "stored")) == big)
    }
}

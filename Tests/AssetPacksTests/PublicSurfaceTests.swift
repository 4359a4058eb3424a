import Foundation
import Synchronization
import Testing
import AssetPacks
import AssetStore  // only to compare the public finding codes with the engine's

/// The public surface as a program meets it: errors with stable codes and
/// readable text, refusals of what it cannot do, descriptors with Apple's
/// shape that never read past their member, checked reads.
@Suite struct PublicSurfaceTests {
    /// A container and a pack with a deflated text member and a stored
    /// 70,000-byte media member, in a temporary directory.
    final class Fixture {
        let root = FileManager.default.temporaryDirectory.path + "/surface-\(UUID().uuidString.prefix(8))"
        let text = Data(String(repeating: "line of text\n", count: 300).utf8)
        let media = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        var pack: String { root + "/Pack.zip" }
        let manager: AssetPackManager

        init() throws {
            try FileManager.default.createDirectory(atPath: root + "/content", withIntermediateDirectories: true)
            try text.write(to: URL(fileURLWithPath: root + "/content/notes.txt"))
            try media.write(to: URL(fileURLWithPath: root + "/content/clip.m4v"))
            let manifest = AssetPackManifest(assetPackID: "com.example.Surface", downloadPolicy: .onDemand,
                                             fileSelectors: [.directory(".", compression: .automatic)], platforms: [])
            try Packager.package(manifest, root: root + "/content", manifestPath: "m.json", output: root + "/Pack.zip")
            manager = try AssetPackManager(container: .init(path: root + "/container"))
            try manager.installPack(at: root + "/Pack.zip")
        }
        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    /// The numbers travel on the daemon's wire and become the C library's
    /// error codes: renumbering one is a breaking change, so they are pinned.
    @Test func codesAreStable() {
        let pinned: [AssetPackError.Code: Int32] = [
            .assetPackNotFound: 1, .fileNotFound: 2, .ambiguousPath: 3, .invalidPackID: 4, .invalidPath: 5,
            .corruptRecord: 6, .archiveMissing: 7, .badArchive: 8, .system: 9, .index: 10,
            .invalidManifest: 16, .invalidRecordedManifest: 17, .lockTimeout: 18, .notAFile: 19, .noContainer: 20,
            .unsupportedSchema: 21, .unsupportedURL: 22, .daemonUnavailable: 23, .limitExceeded: 24, .symlinkInContainer: 25, .invalidOption: 26,
            .peerNotAllowed: 64, .malformedRequest: 65, .requestTooLarge: 66, .unsupportedVersion: 67,
            .daemonBusy: 68, .daemonFailed: 69, .requestNotPermitted: 70,
            .invalidCatalog: 32, .unsupportedCatalogFormat: 33, .catalogUnsigned: 34, .catalogKeyMismatch: 35,
            .catalogSignatureInvalid: 36, .catalogRollback: 37, .catalogExpired: 38, .invalidKey: 39,
            .invalidTrustState: 40, .publishRefused: 41,
            .downloadNotFound: 48, .downloadRefused: 49, .downloadSizeMismatch: 50, .downloadChecksumMismatch: 51,
            .downloadRetriesExhausted: 52, .downloadFailed: 53, .catalogUnavailable: 54,
            .downloadCancelled: 55, .noDownloadInProgress: 56, .downloadTimedOut: 57, .invalidCAFile: 58, .downloadTooLarge: 59, .catalogChannelMismatch: 42,
            .invalidPieceMap: 60,
        ]
        #expect(pinned.count == AssetPackError.Code.allCases.count)
        for code in AssetPackError.Code.allCases { #expect(pinned[code] == code.rawValue, "\(code)") }
        #expect(Set(AssetPackError.Reason.allCases.map(\.rawValue)).count == AssetPackError.Reason.allCases.count)
        let limitReasons: [AssetPackError.Reason: Int32] = [.memberTooLarge: 600, .compressionRatioTooHigh: 601, .packTooLarge: 602]
        for (reason, value) in limitReasons { #expect(reason.rawValue == value, "\(reason)") }
        let deliveryReasons: [AssetPackError.Reason: Int32] = [
            .catalogNotJSON: 700, .catalogMissingField: 701, .catalogWrongType: 702, .catalogBadSequence: 703,
            .catalogBadSHA256: 704, .catalogBadSize: 705, .catalogBadVersion: 706, .catalogDuplicatePack: 707,
            .catalogInvalidPackID: 708, .catalogBadURL: 709, .catalogBadTimestamp: 710, .catalogBadValue: 711,
            .malformedSignature: 800, .signatureMismatch: 801, .olderSequence: 810, .sequenceReused: 811,
            .malformedPrivateKey: 820, .malformedPublicKey: 821, .versionBackwards: 830, .versionReused: 831,
            .duplicatePackInPublish: 832, .signedByOtherKey: 833, .signatureRequired: 834, .packChanged: 835,
            .badPublishArgument: 836, .moreBytesThanCatalog: 840, .fewerBytesThanCatalog: 841,
            .pieceMapNotJSON: 850, .pieceMapUnsupportedFormat: 851, .pieceMapMissingField: 852, .pieceMapWrongType: 853,
            .pieceMapBadValue: 854, .pieceMapPackMismatch: 855, .pieceMapVersionMismatch: 856, .pieceMapSizeMismatch: 857,
            .pieceMapSHA256Mismatch: 858, .pieceMapNotSorted: 859, .pieceMapOverlapping: 860, .pieceMapOutsideFile: 861,
            .pieceMapGlueSizeMismatch: 862, .pieceMapTooManyMembers: 863, .pieceMapTooLarge: 864, .pieceMapReferenceMismatch: 865,
            .sourceNotConfigured: 870, .unsignedSource: 871, .otherUsersDownload: 872, .channelNotConfigured: 873,
            .catalogBadChannel: 712, .otherChannel: 812, .noChannel: 813, .channelChanged: 837,
            .caFileNotRegular: 875, .caFileTooLarge: 876, .exceedsFreeSpace: 880, .exceedsFileSizeLimit: 881,
            .belowMinimumSpeed: 885, .totalDeadline: 886,
        ]
        for (reason, value) in deliveryReasons { #expect(reason.rawValue == value, "\(reason)") }
    }

    @Test func errorsReadAsOneLineEverywhere() throws {
        let f = try Fixture()
        do {
            _ = try f.manager.contents(at: "missing.txt", searchingInAssetPackWithID: "com.example.Surface")
            Issue.record("read a missing file")
        } catch {
            #expect(error.code == .fileNotFound && error.member == "missing.txt" && error.pack == "com.example.Surface")
            let expected = "no file 'missing.txt' in asset pack 'com.example.Surface'"
            #expect(error.message == expected)
            #expect(error.description == expected)
            #expect(error.localizedDescription == expected)
            #expect((error as any Error).localizedDescription == expected)
        }
    }

    @Test func anHTTPURLIsRefusedNotOpenedAsAPath() throws {
        let f = try Fixture()
        for url in ["http://127.0.0.1:9/Pack.zip", "https://example.invalid/Pack.zip", "ftp://127.0.0.1/Pack.zip"] {
            do {
                _ = try f.manager.install(packAt: URL(string: url)!)
                Issue.record("installed \(url)")
            } catch {
                #expect(error.code == .unsupportedURL && error.path == url, "\(error)")
            }
        }
        #expect(try f.manager.install(packAt: URL(fileURLWithPath: f.pack)).id == "com.example.Surface")
    }

    @Test func aReadOnlyManagerDoesNotCreateAContainer() throws {
        let f = try Fixture()
        let typo = f.root + "/contianer"
        do {
            _ = try AssetPackManager(container: .init(path: typo), options: .init(createsContainer: false))
            Issue.record("opened a missing container")
        } catch {
            #expect(error.code == .noContainer && error.path == typo, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: typo))
    }

    @Test func anArchiveDescriptorReadsOnlyItsMember() throws {
        let f = try Fixture()
        let d = try f.manager.descriptor(for: "clip.m4v")
        defer { try? d.close() }
        #expect(d.source == .archive && d.length == Int64(f.media.count))
        // The file goes on past the member...
        #expect(lseek(d.fileDescriptor, 0, SEEK_END) > d.offset + d.length)
        // ...but the descriptor's own reads stop at its end.
        var buffer = [UInt8](repeating: 0, count: 100)
        let n = try buffer.withUnsafeMutableBytes { try d.read(into: $0, at: d.length - 10) }
        #expect(n == 10 && Array(buffer[..<10]) == Array(f.media.suffix(10)))
        #expect(try buffer.withUnsafeMutableBytes { try d.read(into: $0, at: d.length) } == 0)
        #expect(try d.data() == f.media)
    }

    @Test func aStandaloneDescriptorEndsWhereTheMemberDoes() throws {
        let f = try Fixture()
        for path in ["clip.m4v", "notes.txt"] {
            let d = try f.manager.descriptor(for: path, options: .standalone)
            #expect(d.source == .memory && d.offset == 0)
            #expect(lseek(d.fileDescriptor, 0, SEEK_END) == d.length)
            try d.close()
        }
    }

    @Test func closeFollowsApplesPattern() throws {
        let f = try Fixture()
        let number: Int32
        var file: (UInt64, UInt64) = (0, 0)
        do {
            let d = try f.manager.descriptor(for: "notes.txt")
            defer { try? d.close() }
            number = d.fileDescriptor
            file = try #require(Self.file(of: number))
        }
        #expect(Self.isClosed(number, was: file))
        // take() hands the number over: the descriptor no longer closes it.
        let d = try f.manager.descriptor(for: "notes.txt")
        let taken = d.take()
        #expect(d.isClosed)
        #expect(fcntl(taken, F_GETFD) >= 0)
        close(taken)
    }

    @Test func aDescriptorThatIsNeverClosedIsClosedWhenReleased() throws {
        let f = try Fixture()
        var number: Int32 = -1
        var file: (UInt64, UInt64) = (0, 0)
        do {
            let d = try f.manager.descriptor(for: "notes.txt")
            number = d.fileDescriptor
            file = try #require(Self.file(of: number))
        }
        #expect(Self.isClosed(number, was: file))
    }

    /// The device and inode descriptor `number` is open on, if it is open.
    static func file(of number: Int32) -> (UInt64, UInt64)? {
        var st = stat()
        return fstat(number, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
    }

    /// Whether `number` no longer refers to `file`: closed, or (other
    /// threads of the test process open files all the time, the store's
    /// memory-file pool among them) reused for another file.
    static func isClosed(_ number: Int32, was file: (UInt64, UInt64)) -> Bool {
        guard let now = Self.file(of: number) else { return errno == EBADF }
        return now != file
    }

    @Test func checkedContentsFindDamageThatZeroCopyReadsDoNot() throws {
        let f = try Fixture()
        let d = try f.manager.descriptor(for: "clip.m4v")
        let offset = d.offset
        try d.close()
        // Damage one byte of the installed archive in place.
        let archive = try FileManager.default.contentsOfDirectory(atPath: f.root + "/container/packs").first { $0.hasSuffix(".zip") }
        let fd = open(f.root + "/container/packs/" + (archive ?? ""), O_RDWR)
        #expect(fd >= 0)
        var byte: UInt8 = 0
        #expect(pread(fd, &byte, 1, off_t(offset + 100)) == 1)
        byte ^= 0xFF
        #expect(pwrite(fd, &byte, 1, off_t(offset + 100)) == 1)
        close(fd)
        #expect(try f.manager.contents(at: "clip.m4v") != f.media)
        do {
            _ = try f.manager.contents(at: "clip.m4v", verifyingChecksum: true)
            Issue.record("damaged bytes passed the check")
        } catch {
            #expect(error.code == .badArchive && error.reason == .crcMismatch && error.member == "clip.m4v", "\(error)")
        }
    }

    /// Every finding code docs/verify.md lists has its severity there too.
    @Test func everyFindingCodeHasTheEngineSeverity() throws {
        let doc = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/docs/verify.md", encoding: .utf8)
        for code in Verification.Code.allCases {
            #expect(doc.contains("`\(code.rawValue)`"), "\(code.rawValue) is not in docs/verify.md")
        }
        // The public codes are the engine's, one for one.
        #expect(Set(Verification.Code.allCases.map(\.rawValue)) == Set(FindingCode.allCases.map(\.rawValue)))
        #expect(Verification.Code.staleReader.severity == .reclaimable)
        #expect(Verification.Code.stagingUnknown.severity == .warning)
        #expect(Verification.Code.memberCRC.severity == .error)
    }

    @Test func verifyAndGarbageCollectionSpeakPublicTypes() throws {
        let f = try Fixture()
        let steps = Steps()
        let report = try f.manager.verify(.init(deep: true, progress: { steps.add($0) }))
        #expect(!report.hasErrors && report.packsChecked == 1 && report.membersChecked == 2)
        #expect(report.bytesChecked > 0)
        #expect(steps.last?.phase == .verifying && steps.last?.unit == .bytes && steps.last?.fraction == 1)
        #expect(try f.manager.collectGarbage().isEmpty)
    }

    final class Steps: Sendable {
        private let all = Mutex<[AssetPackProgress]>([])
        func add(_ p: AssetPackProgress) { all.withLock { $0.append(p) } }
        var last: AssetPackProgress? { all.withLock { $0.last } }
    }
}

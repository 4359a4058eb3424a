import Foundation
import Testing
import AssetPacks
import TestSupport

/// The daemon never passes a `dup` of what it holds: each client's
/// descriptor has a file position of its own, stored or memory file alike,
/// though the store behind the daemon hands out `dup`s of one file.
@Suite(.serialized) struct DaemonDescriptorSharingTests {
    typealias Daemon = DaemonTests.Daemon

    @Test(.timeLimit(.minutes(4))) func everyClientGetsAPositionOfItsOwn() throws {
        let s = TemporaryDirectory("assetpack-daemon-own-offset")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let clients = try (0 ..< 2).map { _ in try AssetPackClient.connect(container: manager.container) }
        let cases: [(String, AssetDescriptor.Options)] = [("media/big.bin", []), ("text/a.txt", []), ("media/mid.bin", .standalone)]
        for (path, options) in cases {
            let first = try clients[0].descriptor(for: path, searchingInAssetPackWithID: "stress", options: options)
            let second = try clients[1].descriptor(for: path, searchingInAssetPackWithID: "stress", options: options)
            let third = try clients[0].descriptor(for: path, searchingInAssetPackWithID: "stress", options: options)
            #expect(lseek(first.fileDescriptor, off_t(first.offset) + 11, SEEK_SET) == first.offset + 11)
            for d in [second, third] {
                #expect(lseek(d.fileDescriptor, 0, SEEK_CUR) == d.offset, "\(path)")
            }
            let want = try manager.contents(at: path, searchingInAssetPackWithID: "stress")
            for d in [first, second, third] { #expect(try d.data() == want, "\(path)") }
        }
    }
}

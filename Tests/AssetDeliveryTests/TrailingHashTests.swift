import Foundation
import Testing
import AssetArchive
@testable import AssetDelivery
import AssetSystem
import TestSupport

/// The hash that runs behind a download's writes reads back exactly the
/// bytes written, in order, and reports a file cut short under it.
@Suite struct TrailingHashTests {
    @Test func itHashesWhatWasWrittenInPiecesFedOutOfStep() throws {
        let dir = TemporaryDirectory("trailing-hash")
        let bytes = noise(3 * TrailingHash.piece + 12_345, seed: 3)
        let writer = try FileDescriptor.open(dir.file("f"), [.readWrite, .create])
        let hash = TrailingHash(file: try writer.reopenReadOnly(), path: dir.file("f"))
        var offset = 0
        for count in [1, 70_000, TrailingHash.piece + 5, 2 * TrailingHash.piece] where offset < bytes.count {
            let end = min(bytes.count, offset + count)
            try writer.write(Array(bytes[offset..<end]), at: Int64(offset))
            offset = end
            hash.feed(upTo: UInt64(offset))
        }
        try writer.write(Array(bytes[offset...]), at: Int64(offset))
        hash.feed(upTo: UInt64(bytes.count))
        #expect(try hash.finish() == bytes.withUnsafeBytes { SHA256.hash($0) })
    }

    @Test func aRestartForgetsWhatWasHashed() throws {
        let dir = TemporaryDirectory("trailing-hash-restart")
        let writer = try FileDescriptor.open(dir.file("f"), [.readWrite, .create])
        let hash = TrailingHash(file: try writer.reopenReadOnly(), path: dir.file("f"))
        try writer.write(noise(5000, seed: 1), at: 0)
        hash.feed(upTo: 5000)
        hash.restart()
        try writer.resize(to: 0)
        let again = noise(700, seed: 2)
        try writer.write(again, at: 0)
        hash.feed(upTo: 700)
        #expect(try hash.finish() == again.withUnsafeBytes { SHA256.hash($0) })
    }

    @Test func aFileCutShortUnderItIsAnIOErrorNamingIt() throws {
        let dir = TemporaryDirectory("trailing-hash-short")
        let path = try dir.write("f", noise(10_000, seed: 4))
        let hash = TrailingHash(file: try FileDescriptor.open(path), path: path)
        hash.feed(upTo: 20_000)
        #expect {
            _ = try hash.finish()
        } throws: { error in
            guard let e = error as? Errno else { return false }
            return e == .ioError && e.path == path
        }
    }
}

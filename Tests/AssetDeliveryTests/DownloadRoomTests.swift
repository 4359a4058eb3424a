import Foundation
import Testing
import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// A pack whose catalog size cannot fit is refused before a byte of it is
/// written or asked for, naming the pack: a size of 2^53 − 1 made a delta's
/// `ftruncate` fail with "File too large", naming nothing.
@Suite(.enabled(if: Program.available("python3"))) struct DownloadRoomTests {
    @Test(arguments: [false, true])
    func anAbsurdSizeIsRefusedBeforeAnythingIsWritten(withPieceMap: Bool) throws {
        let site = try DownloaderTests.Site()
        _ = try site.publish(version: 1, size: 4096)
        let server = try HostileServer(routes: [:])
        defer { server.stop() }
        var request = DownloadRequest(pack: "P", url: server.baseURL + "/P.zip", version: 2, size: Catalog.maximumInteger,
                                      sha256: String(repeating: "a", count: 64))
        if withPieceMap {
            // A delta would size its file to the catalog's size at once (P v1 is installed to copy from).
            try site.store.install(packAt: site.dir.file("P-1.zip"))
            request.pieces = .init(url: server.baseURL + "/P.zip.pieces", size: 100, sha256: String(repeating: "b", count: 64))
        }
        let staging = site.store.container.stagingPath
        #expect {
            try site.downloader().download(request)
        } throws: { error in
            guard case .downloadFailed(request.url, "P", .noRoom(size: Catalog.maximumInteger, let free, .freeSpace(path: staging)), "") = error as? DeliveryError
            else { return false }
            return free < Catalog.maximumInteger
                && (error as? DeliveryError)?.description == "download of 'P' from \(request.url) failed: its 9007199254740991 bytes do not fit: \(free) bytes are free on the file system of \(staging)"
        }
        #expect(server.requests().isEmpty)
        #expect(try site.partialFiles().isEmpty)
        #expect(try site.store.journalEntries().isEmpty)
    }
}

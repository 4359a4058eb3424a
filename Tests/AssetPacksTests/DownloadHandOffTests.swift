import Foundation
import Testing
import Synchronization
import AssetSystem
@testable import AssetPacks
import TestSupport

/// When `ensureLocalAvailability` does not hand its download to a daemon:
/// none listens, one that predates downloads answers, or the manager says
/// never (`downloadsInProcess`). Against nginx on 127.0.0.1.
@Suite struct DownloadHandOffTests {
    let dir = TemporaryDirectory("download-hand-off")

    func publish() throws {
        try dir.write("content/a.bin", noise(64 << 10, seed: 3))
        let manifest = AssetPackManifest(assetPackID: "A", downloadPolicy: .onDemand,
                                         fileSelectors: [.file("a.bin", compression: .stored)], platforms: [.linux])
        try Packager.package(manifest, root: dir.directory("content"), manifestPath: "m.json", output: dir.file("A.zip"))
        _ = try AssetPackPublisher.publish(packsAt: [dir.file("A.zip")], to: dir.file("site"), options: .init())
    }

    func manager(_ nginx: NginxHost, inProcess: Bool = false) throws -> AssetPackManager {
        try AssetPackManager(container: .init(path: dir.file("container")),
                             options: .init(catalog: .init(url: nginx.baseURL + "/catalog.json"), downloadsInProcess: inProcess))
    }

    /// A daemon of before downloads on the container's socket: it answers
    /// every request as such a daemon answers kind 2, and records the kinds.
    final class OldDaemon: Sendable {
        let kinds = Mutex<[UInt16]>([])
        private let listener: UnixListener

        init(socket: String) throws {
            listener = try UnixListener(path: socket)
            Thread.detachNewThread { [self] in serve() }
        }

        private func serve() {
            while let connection = try? listener.accept() {
                guard let request = try? connection.receive(upTo: 16), request.bytes.count >= 8 else { continue }
                kinds.withLock { $0.append(UInt16(request.bytes[6]) | UInt16(request.bytes[7]) << 8) }
                try? connection.sendAll(DaemonReply.failure(.malformedRequest, message: "unknown request kind 2"))
            }
        }

        /// Ends the accepting thread.
        func stop(_ socket: String) {
            try? UnixSocket.shutdown(descriptorNumber: listener.descriptor.rawValue)
            _ = try? UnixSocket.connect(to: socket)
        }
    }

    @Test func aDaemonThatPredatesDownloadsLeavesTheDownloadToTheCaller() async throws {
        try publish()
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx)
        let socket = manager.container.daemonSocketPath
        let old = try OldDaemon(socket: socket)
        defer { old.stop(socket) }
        try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: "A"))
        #expect(old.kinds.withLock { $0 } == [DaemonProtocol.downloadKind])
        #expect(try manager.contents(at: "a.bin", searchingInAssetPackWithID: "A") == Data(noise(64 << 10, seed: 3)))
        #expect(nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }.count == 1)
        // A background download needs a daemon that takes it.
        do {
            try manager.beginBackgroundDownload(of: try await manager.assetPack(withID: "A"))
            Issue.record("an old daemon took a background download")
        } catch {
            #expect(error.code == .malformedRequest && error.path == socket, "\(error)")
        }
    }

    @Test func downloadsInProcessNeverAsksTheDaemon() async throws {
        try publish()
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx, inProcess: true)
        let socket = manager.container.daemonSocketPath
        let old = try OldDaemon(socket: socket)
        defer { old.stop(socket) }
        try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: "A"))
        #expect(old.kinds.withLock { $0 }.isEmpty)
        #expect(try manager.contents(at: "a.bin", searchingInAssetPackWithID: "A").count == 64 << 10)
    }

    @Test func withoutADaemonABackgroundDownloadIsRefusedNamingTheSocket() async throws {
        try publish()
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx)
        let pack = try await manager.assetPack(withID: "A")
        do {
            try manager.beginBackgroundDownload(of: pack)
            Issue.record("no daemon, and the download was taken")
        } catch {
            #expect(error.code == .daemonUnavailable && error.path == manager.container.daemonSocketPath
                    && error.systemError == ENOENT, "\(error)")
        }
        // Without a catalog there is nothing to hand over.
        let bare = try AssetPackManager(container: manager.container)
        do {
            try bare.beginBackgroundDownload(of: pack)
            Issue.record("a manager without a catalog handed a download over")
        } catch {
            #expect(error.code == .catalogUnavailable, "\(error)")
        }
        // And the caller downloads itself.
        try await manager.ensureLocalAvailability(of: pack)
        #expect(nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }.count == 1)
    }
}

import Foundation
import Testing
import AssetSystem
import TestSupport

@Suite struct FileLockTests {
    @Test func secondDescriptionIsExcludedAndTimesOut() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/x.lock"
        let first = try FileLock(path: path)
        #expect(try FileLock.isHeld(path: path))
        #expect(throws: LockError.timedOut(LockTimeout(path: path, seconds: 0, holder: .unknown))) {
            _ = try FileLock(path: path, wait: .none)
        }
        let start = Monotonic.now
        // Linux reports no pid for an open file description lock: the
        // holder, this process, is found through /proc/self/fdinfo.
        #expect(throws: LockError.timedOut(LockTimeout(path: path, seconds: 0.2, holder: LockHolder(pids: [getpid()])))) {
            _ = try FileLock(path: path, wait: .seconds(0.2))
        }
        #expect(Monotonic.now - start >= 0.2)
        _ = consume first
        #expect(try !FileLock.isHeld(path: path))
        _ = try FileLock(path: path, wait: .none)
    }

    /// `unlock` releases a lock taken with `lock(_:kind:wait:path:)`
    /// while the descriptor stays open; it can be taken again.
    @Test func unlockReleasesWhileTheDescriptorStaysOpen() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/u.lock"
        let fd = try FileDescriptor.open(path, [.readWrite, .create])
        try FileLock.lock(fd, kind: .exclusive, wait: .none, path: path)
        #expect(try FileLock.isHeld(path: path))
        #expect(throws: LockError.timedOut(LockTimeout(path: path, seconds: 0, holder: .unknown))) { _ = try FileLock(path: path, wait: .none) }
        FileLock.unlock(fd)
        #expect(try !FileLock.isHeld(path: path))
        _ = try FileLock(path: path, wait: .none)
        try FileLock.lock(fd, kind: .exclusive, wait: .none, path: path)
        #expect(try FileLock.isHeld(path: path))
    }

    @Test func sharedLocksCoexist() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/s.lock"
        let a = try FileLock(path: path, kind: .shared)
        let b = try FileLock(path: path, kind: .shared, wait: .none)
        #expect(throws: LockError.timedOut(LockTimeout(path: path, seconds: 0, holder: .unknown))) {
            _ = try FileLock(path: path, kind: .exclusive, wait: .none)
        }
        _ = consume a
        _ = consume b
    }

    /// `O_CREAT | O_NOFOLLOW`: a symlink at the lock's path is refused, and
    /// the file it points at is not created (issue 9, finding 3).
    @Test func aSymlinkAtTheLockPathIsRefusedNotFollowed() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/l.lock"
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: dir.path + "/target")
        #expect(throws: LockError.system(Errno.tooManySymbolicLinkLevels)) { _ = try FileLock(path: path) }
        let directory = try FileDescriptor.open(dir.path, .directory)
        #expect(throws: LockError.system(Errno.tooManySymbolicLinkLevels)) {
            _ = try FileLock(name: "l.lock", relativeTo: .descriptor(directory.rawValue), path: path)
        }
        #expect(throws: Errno.tooManySymbolicLinkLevels) { _ = try FileLock.isHeld(path: path) }
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/target"))
    }
}

@Suite struct UnixSocketTests {
    @Test func passesADescriptorAndReportsCredentials() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("payload", Array("over the socket".utf8))
        let pair = try UnixSocket.pair()
        let file = try FileDescriptor.open(path)
        try pair.first.sendAll([42], passing: file.rawValue)
        var received = try pair.second.receive(upTo: 8)
        #expect(received.bytes == [42])
        guard let got = received.descriptor.take() else { Issue.record("no descriptor came"); return }
        #expect(try got.read(count: 100, at: 0) == Array("over the socket".utf8))
        let me = try pair.second.peerCredentials()
        #expect(me.uid == getuid() && me.pid == getpid())
    }

    @Test func listenerRefusesAnOverlongPath() {
        let long = "/tmp/" + String(repeating: "x", count: 200)
        #expect(throws: Errno.nameTooLong) { _ = try UnixListener(path: long) }
    }
}

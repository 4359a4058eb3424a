import Foundation
import Testing
import AssetSystem
import TestSupport

/// Who holds a lock, as a timed-out wait names it, and how the default wait
/// tells a holder at work from one that is not. The holders are other
/// processes (Python, through ``LockPeer``), so that the kernel's own
/// reports are what is checked.
@Suite struct LockHolderTests {
    static let python = Program.available("python3")

    /// Lock files are made 0600 (the umask cannot widen that), 0660 when
    /// asked although the umask takes group write away, and an existing
    /// one of this user's with a wider mode is narrowed when it is opened.
    @Test func lockFilesHaveTheirModeWhateverTheUmaskAndTheFileWas() throws {
        let dir = TemporaryDirectory()
        func mode(_ name: String) throws -> UInt32 { try FileDescriptor.status(of: dir.file(name))!.mode & 0o7777 }
        _ = try FileLock(path: dir.file("new.lock"))
        #expect(try mode("new.lock") == 0o600)
        _ = try FileLock(path: dir.file("group.lock"), mode: 0o660)
        #expect(try mode("group.lock") == 0o660)
        let old = try dir.write("old.lock", [])
        #expect(chmod(old, 0o644) == 0)
        _ = try FileLock(path: old)
        #expect(try mode("old.lock") == 0o600)
    }

    /// Linux gives no pid for an open file description lock (`F_OFD_GETLK`
    /// and `/proc/locks` say -1): the holder is found by its open file in
    /// `/proc/<pid>/fdinfo`. A process-associated lock's pid Linux reports.
    @Test(.enabled(if: python), arguments: [LockPeer.Style.openFile, .process])
    func aTimeoutNamesTheProcessHoldingTheLock(style: LockPeer.Style) throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("held.lock", [])
        let peer = try LockPeer([path], style: style)
        #expect(peer.outcomes == [.held])
        let expected = LockTimeout(path: path, seconds: 0.1, holder: LockHolder(pids: [peer.pid]))
        #expect(throws: LockError.timedOut(expected)) { _ = try FileLock(path: path, wait: .seconds(0.1)) }
        #expect(expected.description == "timed out after 0.1 s waiting for the lock (\(path)), held by pid \(peer.pid)")
        peer.release()
        _ = try FileLock(path: path, wait: .none)
    }

    /// A reader's shared lock — all a read-only descriptor can take — holds
    /// up an exclusive lock, never a shared one: files other users may read
    /// are only ever locked shared.
    @Test(.enabled(if: python)) func aReadersLockHoldsUpOnlyAnExclusiveLock() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("archive.zip", [1, 2, 3])
        let peer = try LockPeer([path])
        #expect(peer.outcomes == [.held])
        let fd = try FileDescriptor.open(path, .readOnly)
        try FileLock.lock(fd, kind: .shared, wait: .none, path: path)
        #expect(throws: LockError.timedOut(LockTimeout(path: path, seconds: 0, holder: .unknown))) {
            _ = try FileLock(path: path, wait: .none)
        }
        // The waiter's own shared lock is not in its way: only the peer is named.
        #expect(FileLock.holder(of: fd) == LockHolder(pids: [peer.pid]))
    }

    /// The default wait gives up after its patience when the holder is
    /// stopped, and says so.
    @Test(.enabled(if: python)) func theDefaultWaitGivesUpOnAStoppedHolder() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("stopped.lock", [])
        let peer = try LockPeer([path], exclusive: true)
        #expect(peer.outcomes == [.held])
        peer.signal(SIGSTOP)
        defer { peer.signal(SIGCONT) }
        do {
            _ = try FileLock(path: path, wait: .whileHolderWorks(patience: 0.3))
            Issue.record("locked a file a stopped process holds")
        } catch {
            guard case .timedOut(let t) = error else { Issue.record("\(error)"); return }
            #expect(t.holder == LockHolder(pids: [peer.pid], stopped: [peer.pid]))
            #expect(t.seconds >= 0.3)
            #expect(t.description.hasSuffix("held by pid \(peer.pid) (stopped)"))
        }
    }

    /// The default wait outlasts its patience while the holder is a
    /// running process of this user (a long install), and gets the lock
    /// once that process lets go.
    @Test(.enabled(if: python)) func theDefaultWaitWaitsForAHolderAtWork() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("busy.lock", [])
        let peer = try LockPeer([path], exclusive: true)
        #expect(peer.outcomes == [.held])
        let outcome = Shared<Result<Void, LockError>?>(nil)
        let waiter = Thread {
            let r = Result { () throws(LockError) in _ = try FileLock(path: path, wait: .whileHolderWorks(patience: 0.2)) }
            outcome.withLock { $0 = r }
        }
        waiter.start()
        // Five times the patience: a wait that gave up would have ended.
        Monotonic.sleep(1.0)
        #expect(outcome.withLock { $0 } == nil, "still waiting")
        peer.release()
        #expect(eventually(timeout: 30) { outcome.withLock { $0 } != nil })
        if case .failure(let e) = outcome.withLock({ $0 }) { Issue.record("\(e)") }
    }
}

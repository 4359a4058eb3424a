import Foundation
import Testing
import AssetPacks
import AssetSystem
import AssetStore
import TestSupport

/// Every wait for a lock ends, and says which lock and who holds it: a
/// lock another process of the owner holds legitimately (the test helper,
/// with the store's own `FileLock`), with `--lock-timeout` and with the
/// default wait; and a lock a member of the container's group holds.
@Suite struct LockWaitCommandTests {
    /// The test helper holding the lock file `path` until it is killed.
    static func holder(_ path: String) throws -> Child {
        let child = try Child(Helper.binary, ["hold-lock", "--path", path])
        guard eventually(timeout: 30, { child.stdout.contains("\"held\"") || !child.process.isRunning }), child.process.isRunning else {
            throw TestFailure("hold-lock: \(child.stderr)")
        }
        return child
    }

    static func container(_ label: String) throws -> TemporaryDirectory {
        let s = TemporaryDirectory(label)
        try Helper.makePacks(s.file("packs"), versions: 2)
        #expect(try CLI.assetpack(["install", s.file("packs/v1.zip"), "--container", s.container]).status == 0)
        return s
    }

    /// `--lock-timeout 1`, after the subcommand or before it: one line
    /// naming the lock, its file and the holder's pid (Linux reports none
    /// for an open file description lock; `/proc/<pid>/fdinfo` does), exit 1.
    @Test(.timeLimit(.minutes(3))) func aLockHeldByAnotherProcessTimesOutNamingItsHolder() throws {
        let s = try Self.container("assetpack-lock-held")
        let lockPath = GroupContainer(path: s.container).lockPath(forPack: "stress")
        let helper = try Self.holder(lockPath)
        let message = "timed out after 1 s waiting for the pack lock of 'stress' (\(lockPath)), held by pid \(helper.pid)"
        let install = try CLI.assetpack(["install", s.file("packs/v2.zip"), "--lock-timeout", "1", "--container", s.container])
        #expect(install.status == 1)
        #expect(install.stderr == "assetpack install: error: \(message)\n")
        let rm = try CLI.assetpack(["--lock-timeout", "1", "rm", "stress", "--container", s.container])
        #expect(rm.status == 1)
        #expect(rm.stderr == "assetpack rm: error: \(message)\n")
        helper.signal(SIGKILL)
        #expect(helper.wait(timeout: 30))
        #expect(try CLI.assetpack(["install", s.file("packs/v2.zip"), "--lock-timeout", "1", "--container", s.container]).status == 0)
    }

    /// The default wait gives up on a holder that is stopped (Ctrl-Z on an
    /// install in another terminal) after 10 s, and says it is.
    @Test(.timeLimit(.minutes(3))) func theDefaultWaitGivesUpOnAStoppedHolder() throws {
        let s = try Self.container("assetpack-lock-stopped")
        let lockPath = GroupContainer(path: s.container).lockPath(forPack: "stress")
        let helper = try Self.holder(lockPath)
        helper.signal(SIGSTOP)
        defer { helper.signal(SIGCONT) }
        let r = try CLI.assetpack(["install", s.file("packs/v2.zip"), "--container", s.container])
        #expect(r.status == 1)
        let line = r.stderr.trimmingCharacters(in: .newlines)
        #expect(line.hasPrefix("assetpack install: error: timed out after "), "\(line)")
        #expect(line.hasSuffix(" s waiting for the pack lock of 'stress' (\(lockPath)), held by pid \(helper.pid) (stopped)"), "\(line)")
        let seconds = line.split(separator: " ").dropFirst(6).first.flatMap { Double($0) }
        #expect((seconds ?? 0) >= 10, "\(line)")
    }

    /// A lock timeout must be a number of seconds, 0 or more, on the
    /// command line as in the API.
    @Test func aLockTimeoutMustBeANumberOfSeconds() throws {
        let s = TemporaryDirectory("assetpack-lock-usage")
        let r = try CLI.assetpack(["ls", "--lock-timeout", "-1", "--container", s.container])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: '--lock-timeout' needs a non-negative number, not '-1'"), "\(r.stderr)")
        for bad in [-1, .nan, .infinity] {
            do {
                _ = try AssetPackManager(container: .init(path: s.container), options: .init(lockTimeout: bad))
                Issue.record("a lock timeout of \(bad) was taken")
            } catch {
                #expect(error.code == .invalidOption && error.field == "lockTimeout", "\(error)")
            }
        }
        let manager = try AssetPackManager(container: .init(path: s.container))
        do {
            try manager.setLockTimeout(-0.5)
            Issue.record("a lock timeout of -0.5 was taken")
        } catch {
            #expect(error.code == .invalidOption && error.field == "lockTimeout", "\(error)")
        }
    }
}

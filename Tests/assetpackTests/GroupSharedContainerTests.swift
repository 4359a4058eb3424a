import Foundation
import Testing
import AssetSystem
import TestSupport

/// A container shared with a group (its directory set-group-ID): the
/// members read and write it through the library, and a lock a member
/// holds makes the others wait only as long as their bound, naming the
/// holder where they can see it. Someone outside the group cannot open it.
@Suite struct GroupSharedContainerTests {
    static let group: UInt32 = 4300
    static let (alice, bob, stranger): (UInt32, UInt32, UInt32) = (4242, 4243, 4244)

    /// Runs `assetpack` as `uid` in `gid`, under umask 022.
    static func run(_ args: [String], uid: UInt32, gid: UInt32) throws -> Program.Result {
        try Program.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "/bin/sh", "-c",
                                              "umask 022 && exec \"$0\" \"$@\"", CLI.binary] + args)
    }

    @Test(.enabled(if: ForeignLockTests.canActAsAnotherUser), .timeLimit(.minutes(3)))
    func membersShareTheContainerAndItsLocks() throws {
        let s = TemporaryDirectory("assetpack-group")
        #expect(chmod(s.path, 0o755) == 0)
        try Helper.makePacks(s.file("packs"), versions: 2)
        try Helper.makePacks(s.file("other"), id: "other", versions: 1)
        #expect(chmod(s.file("packs"), 0o755) == 0 && chmod(s.file("other"), 0o755) == 0)
        let c = s.container
        #expect(mkdir(c, 0o755) == 0 && chown(c, 0, Self.group) == 0 && chmod(c, 0o2775) == 0)
        #expect(try CLI.assetpack(["install", s.file("packs/v1.zip"), "--container", c]).status == 0)
        func mode(_ relative: String) -> UInt32? { (try? FileDescriptor.status(of: c + "/" + relative))??.mode }
        #expect(mode("locks/packs/stress.lock").map { $0 & 0o7777 } == 0o660)
        #expect(mode("index/lock.mdb").map { $0 & 0o7777 } == 0o660)
        #expect(mode("locks").map { $0 & 0o7777 } == 0o2770)

        // Members list, install, update the owner's pack, remove another's.
        #expect(try Self.run(["ls", "--container", c], uid: Self.alice, gid: Self.group).status == 0)
        let added = try Self.run(["install", s.file("other/v1.zip"), "--container", c], uid: Self.bob, gid: Self.group)
        #expect(added.status == 0, "\(added.stderr)")
        let updated = try Self.run(["install", s.file("packs/v2.zip"), "--container", c], uid: Self.bob, gid: Self.group)
        #expect(updated.status == 0, "\(updated.stderr)")
        #expect(try Self.run(["rm", "other", "--container", c], uid: Self.alice, gid: Self.group).status == 0)
        // Someone outside the group cannot open it at all.
        let outside = try Self.run(["ls", "--container", c], uid: Self.stranger, gid: Self.stranger)
        #expect(outside.status == 1 && outside.stderr.contains("Permission denied"), "\(outside.stderr)")

        // Alice holds the pack lock (a member may): the owner waits at most
        // its bound and names her (root sees every process's files); Bob
        // cannot see Alice's files, and is told so.
        let lockPath = c + "/locks/packs/stress.lock"
        let alice = try LockPeer([lockPath], exclusive: true, uid: Self.alice, gid: Self.group)
        defer { alice.release() }
        #expect(alice.outcomes == [.held])
        let owner = try CLI.assetpack(["rm", "stress", "--lock-timeout", "1", "--container", c])
        #expect(owner.stderr == "assetpack rm: error: timed out after 1 s waiting for the pack lock of 'stress' (\(lockPath)), held by pid \(alice.pid) (another user's)\n")
        let bob = try Self.run(["rm", "stress", "--lock-timeout", "1", "--container", c], uid: Self.bob, gid: Self.group)
        #expect(bob.status == 1)
        #expect(bob.stderr.hasPrefix("assetpack rm: error: timed out after 1 s waiting for the pack lock of 'stress' (\(lockPath)), held by a process this user cannot see"), "\(bob.stderr)")
        alice.release()
        #expect(try Self.run(["rm", "stress", "--lock-timeout", "1", "--container", c], uid: Self.bob, gid: Self.group).status == 0)
    }
}

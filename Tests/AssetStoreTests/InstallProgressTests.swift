import Foundation
import Testing
import TestSupport
import AssetArchive
import AssetStore
import AssetSystem

/// `AssetStore.install(packAt:…progress:)`'s reports.
@Suite struct InstallProgressTests {
    /// Every report of one install, in order.
    final class Reports {
        var calls: [InstallProgress] = []
        func record(_ report: InstallProgress) { calls.append(report) }

        /// The phases in the order they were reported, each once.
        var phases: [InstallProgress.Phase] {
            calls.map(\.phase).reduce(into: []) { if $0.last != $1 { $0.append($1) } }
        }

        func of(_ phase: InstallProgress.Phase) -> [InstallProgress] { calls.filter { $0.phase == phase } }
    }

    /// 2,400 stored members of 4 KiB (about 9.6 MiB): more than one piece
    /// to copy and to hash, and many members to validate and index.
    private func largePack(_ f: StoreFixture, _ name: String = "big.zip") throws -> String {
        var members: [String: [UInt8]] = [:]
        for i in 0 ..< 2400 { members["m/\(i).bin"] = [UInt8](repeating: UInt8(i % 251), count: 4096) }
        return try f.pack(name, id: "big", members, compression: .stored)
    }

    private func fileSize(_ path: String) throws -> UInt64 {
        UInt64(try #require(try FileDescriptor.status(of: path)).size)
    }

    /// Each phase starts at 0, rises, never changes its total, and ends at it.
    private func expectWellFormed(_ reports: Reports, sourceLocation line: SourceLocation = #_sourceLocation) {
        for phase in reports.phases {
            let calls = reports.of(phase)
            #expect(calls.first?.completed == 0, "\(phase)", sourceLocation: line)
            #expect(calls.allSatisfy { $0.total == calls[0].total }, "\(phase)", sourceLocation: line)
            #expect(zip(calls, calls.dropFirst()).allSatisfy { $0.completed < $1.completed }, "\(phase)", sourceLocation: line)
            #expect(calls.last.map { $0.completed == $0.total } == true, "\(phase)", sourceLocation: line)
            #expect(calls.count <= 258, "\(phase)", sourceLocation: line)
        }
    }

    @Test func everyPhaseIsMonotonicAndEndsAtItsTotal() throws {
        let f = StoreFixture()
        let path = try largePack(f)
        let reports = Reports()
        let outcome = try f.store().install(packAt: path, progress: reports.record)
        #expect(outcome.change == .installed)
        #expect(reports.phases == [.copying, .validating, .hashing, .indexing])
        expectWellFormed(reports)

        let size = try fileSize(path)
        let archive = try ZipArchive.open(path: path)
        #expect(reports.of(.copying).last?.total == size)
        #expect(reports.of(.hashing).last?.total == size)
        #expect(reports.of(.validating).last?.total == archive.entries.reduce(0) { $0 + $1.compressedSize })
        #expect(reports.of(.indexing).last?.total == 2400)
        // Reported along the way, not only at the ends.
        for phase in InstallProgress.Phase.allCases { #expect(reports.of(phase).count > 2, "\(phase)") }
    }

    @Test func indexingStaysMonotonicWhenTheIndexGrowsAndTheTransactionRunsAgain() throws {
        // 15,000 members' records and paths outgrow a 1 MiB map (LMDB's
        // smallest here): the write fails with MDB_MAP_FULL, the map grows,
        // and the body runs again from the first member.
        let f = StoreFixture()
        var options = AssetStore.Options()
        options.initialMapSize = 1 << 20
        let store = try f.store(options)
        var members: [String: [UInt8]] = [:]
        for i in 0 ..< 15_000 { members["dir-\(i % 100)/member-\(i).bin"] = [UInt8(i % 251)] }
        let reports = Reports()
        try store.install(packAt: try f.pack("many.zip", id: "many", members, compression: .stored), progress: reports.record)
        expectWellFormed(reports)
        #expect(reports.of(.indexing).last?.completed == 15_000)
        #expect(try store.members(ofPack: "many").count == 15_000)
    }

    @Test func anUnchangedInstallEndsAfterHashing() throws {
        let f = StoreFixture()
        let store = try f.store()
        let path = try f.pack("p.zip", id: "p", ["a": text(3000), "b": noise(5000, seed: 1)])
        try store.install(packAt: path)
        let reports = Reports()
        #expect(try store.install(packAt: path, progress: reports.record).change == .unchanged)
        #expect(reports.phases == [.copying, .validating, .hashing])
        expectWellFormed(reports)
    }

    @Test func anUpdateReportsEveryPhase() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("p1.zip", id: "p", ["a": [1], "b": [2]]))
        let reports = Reports()
        let outcome = try store.install(packAt: try f.pack("p2.zip", id: "p", ["a": [3], "c": [4], "d": [5]]), progress: reports.record)
        #expect(outcome.change == .replaced)
        #expect(reports.phases == [.copying, .validating, .hashing, .indexing])
        expectWellFormed(reports)
        #expect(reports.of(.indexing).last?.total == 3)
    }

    @Test func aRefusedInstallStopsReportingWhereItFailed() throws {
        let f = StoreFixture()
        let path = f.root + "/junk.zip"
        _ = FileManager.default.createFile(atPath: path, contents: Data(noise(1000, seed: 2)))
        let reports = Reports()
        #expect(throws: StoreError.self) { try f.store().install(packAt: path, progress: reports.record) }
        #expect(reports.phases == [.copying])
        expectWellFormed(reports)
    }

    @Test func progressChangesNothingInstalled() throws {
        let members: [String: [UInt8]] = ["img/a.png": noise(200_000, seed: 3), "levels/1.json": text(50_000), "e": []]
        let plain = StoreFixture("plain"), reported = StoreFixture("reported")
        let a = try plain.store().install(packAt: try plain.pack("p.zip", id: "p", members)).record
        let b = try reported.store().install(packAt: try reported.pack("p.zip", id: "p", members), progress: { _ in }).record
        #expect(a.sha256 == b.sha256)
        #expect(a.archiveSize == b.archiveSize)
        #expect(a.memberCount == b.memberCount && a.totalSize == b.totalSize && a.generation == b.generation)
        #expect(try plain.store().members(ofPack: "p") == reported.store().members(ofPack: "p"))
        for path in members.keys {
            #expect(try Array(plain.store().contents(at: path, inPack: "p")) == Array(reported.store().contents(at: path, inPack: "p")))
        }
        #expect(try reported.store().verify(options: .init(deep: true)).findings.isEmpty)
    }
}

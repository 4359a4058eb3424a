@testable import AssetArchive
import AssetSystem
import Foundation
import Testing
import TestSupport

/// `ArchiveWriter.write(_:comment:to:progress:)`'s reports.
@Suite struct WriterProgressTests {
    let directory = TemporaryDirectory()

    /// Every report of one write, in order.
    final class Reports {
        var calls: [(done: UInt64, total: UInt64)] = []
        func record(_ done: UInt64, _ total: UInt64) { calls.append((done, total)) }
    }

    /// Members from memory and from files: small, streamed and deflated,
    /// streamed and stored after deflate did not pay (read twice), stored.
    private func mixedMembers() throws -> [ArchiveWriter.Member] {
        [
            .init(path: "bytes/text.txt", source: .bytes(text(lines: 2000))),
            .init(path: "bytes/noise.bin", source: .bytes(noise(70_000))),
            .init(path: "bytes/empty", source: .bytes([])),
            .init(path: "file/small.txt", source: .file(try directory.write("in/small.txt", text(lines: 10)))),
            .init(path: "file/large.txt", source: .file(try directory.write("in/large.txt", text(lines: 60_000)))),
            .init(path: "file/large.bin", source: .file(try directory.write("in/large.bin", noise(3 << 20)))),
            .init(path: "file/large-stored.txt", source: .file(directory.file("in/large.txt")), compression: .stored),
        ]
    }

    private func inputBytes(_ members: [ArchiveWriter.Member]) throws -> UInt64 {
        try members.reduce(0) { sum, member in
            switch member.source {
            case .bytes(let bytes): return sum + UInt64(bytes.count)
            case .file(let path): return sum + UInt64(try Data(contentsOf: URL(fileURLWithPath: path)).count)
            }
        }
    }

    @Test func reportsAreMonotonicAndEndAtTheSumOfMemberSizes() throws {
        let members = try mixedMembers()
        let reports = Reports()
        try ArchiveWriter.write(members, to: directory.file("out.zip"), progress: reports.record)
        let total = try inputBytes(members)
        #expect(reports.calls.first?.done == 0)
        #expect(reports.calls.allSatisfy { $0.total == total })
        #expect(zip(reports.calls, reports.calls.dropFirst()).allSatisfy { $0.done < $1.done })
        #expect(reports.calls.last?.done == total)
        // Streamed members are reported chunk by chunk, not only at their end.
        #expect(reports.calls.count > members.count)
    }

    @Test func manyTinyMembersGetABoundedNumberOfReports() throws {
        let members = (0 ..< 5000).map { ArchiveWriter.Member(path: "m/\($0)", source: .bytes([UInt8(truncatingIfNeeded: $0), 1, 2])) }
        let reports = Reports()
        try ArchiveWriter.write(members, to: directory.file("out.zip"), progress: reports.record)
        #expect(reports.calls.count <= 258)
        #expect(reports.calls.count > 100)
        #expect(reports.calls.last.map { $0.done == $0.total && $0.total == 15_000 } == true)
    }

    @Test func noMembersReportsZeroOfZero() throws {
        let reports = Reports()
        try ArchiveWriter.write([], to: directory.file("out.zip"), progress: reports.record)
        #expect(reports.calls.map(\.done) == [0])
        #expect(reports.calls.map(\.total) == [0])
    }

    @Test func progressChangesNotOneByte() throws {
        let members = try mixedMembers()
        try ArchiveWriter.write(members, comment: [7], to: directory.file("plain.zip"))
        try ArchiveWriter.write(members, comment: [7], to: directory.file("reported.zip"), progress: { _, _ in })
        #expect(try directory.read("plain.zip") == directory.read("reported.zip"))
    }

    @Test func aSourceThatChangesSizeAfterTheFirstLookIsRefused() throws {
        let source = try directory.write("grows.txt", text(lines: 10))
        let path = directory.file("w.zip")
        var error: ArchiveError?
        do {
            // The first report comes after the sizes were looked at, before any member is read.
            try ArchiveWriter.write([.init(path: "grows.txt", source: .file(source))], to: path) { done, _ in
                if done == 0 { _ = try? directory.write("grows.txt", text(lines: 20)) }
            }
        } catch let e {
            error = e
        }
        #expect(error == .unreadableSource(archive: path, path: "grows.txt", source: source, problem: .changedWhileReading))
        #expect(!FileManagerList.exists(path))
    }

    @Test func aMissingSourceIsRefusedBeforeAnyReport() throws {
        let missing = directory.file("nope")
        let reports = Reports()
        var error: ArchiveError?
        do {
            try ArchiveWriter.write([.init(path: "a", source: .file(missing))], to: directory.file("w.zip"), progress: reports.record)
        } catch let e {
            error = e
        }
        #expect(error == .unreadableSource(archive: directory.file("w.zip"), path: "a", source: missing, problem: .system(.noSuchFile)))
        #expect(reports.calls.isEmpty)
        #expect(try FileManagerList.names(in: directory.path).isEmpty)
    }
}

@Suite struct ProgressMeterTests {
    @Test(arguments: [UInt64(0), 1, 255, 256, 257, 511, 1000, 1 << 40])
    func reportsAtMost258TimesAndEndAtTheTotal(total: UInt64) {
        var calls: [UInt64] = []
        var meter = ProgressMeter(total: total) { done, _ in calls.append(done) }
        var done: UInt64 = 0
        let piece = max(total / 1000, 1)
        while done < total {
            meter.advance(by: min(piece, total - done))
            done += min(piece, total - done)
        }
        meter.finish()
        #expect(calls.first == 0)
        #expect(calls.last == total)
        #expect(calls.count <= 258)
        #expect(zip(calls, calls.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func workStartedOverIsNotReportedAgain() {
        var calls: [UInt64] = []
        var meter = ProgressMeter(total: 1000) { done, _ in calls.append(done) }
        for i in 1 ... 600 { meter.reach(UInt64(i)) }
        for i in 1 ... 1000 { meter.reach(UInt64(i)) }
        meter.finish()
        #expect(zip(calls, calls.dropFirst()).allSatisfy { $0 < $1 })
        #expect(calls.last == 1000)
    }
}

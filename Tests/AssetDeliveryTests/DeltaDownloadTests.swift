import Foundation
import Testing
import AssetArchive
@testable import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// Delta downloads against a real nginx (and `assetpack serve` for its
/// faults) on 127.0.0.1: members copied from what the container has
/// installed, the rest fetched in ranges, the file byte-exact; every fault
/// of the delta ends in the full download, its reason in the status record.
@Suite(.timeLimit(.minutes(4)))
struct DeltaDownloadTests {
    /// A published directory and a container with pack `P` version 1
    /// installed (and pack `Q` for members moved between packs).
    final class Site {
        let dir = TemporaryDirectory("delta")
        var root: String { dir.file("site") }
        let store: AssetStore
        let board: DownloadBoard
        private var clock: Int64 = 1_796_117_400

        init() throws {
            store = try AssetStore(container: GroupContainer(path: dir.file("container")))
            board = DownloadBoard(store: store)
        }

        /// Members `m000.bin`…: noise of 3–11 KiB each (seeded by name and
        /// `salt`); those with a 3 in the name are deflated.
        static func members(_ count: Int, salt: UInt64 = 0) -> [(String, [UInt8])] {
            (0..<count).map { i in
                let name = String(format: "m%03d.bin", i)
                return (name, Self.bytes(name, salt: salt))
            }
        }

        static func bytes(_ name: String, salt: UInt64 = 0) -> [UInt8] {
            let seed = name.utf8.reduce(salt &+ 1469598103934665603) { ($0 ^ UInt64($1)) &* 1099511628211 }
            return noise(3072 + Int(seed % 8192), seed: seed)
        }

        /// Writes pack `id` in `version` with `members` and returns its path.
        func archive(_ id: String, version: UInt64, _ members: [(String, [UInt8])]) throws -> String {
            let path = dir.file("\(id)-\(version).zip")
            let list = members.map { m in
                ArchiveWriter.Member(path: m.0, source: .bytes(m.1), compression: m.0.contains("3") ? .deflated : .stored)
            }
            try ArchiveWriter.write(list, comment: PackDescription(id: id, downloadPolicy: .onDemand, platforms: [.linux], version: version).archiveComment,
                                    to: path)
            return path
        }

        /// Publishes `path` to the site; returns its catalog entry.
        @discardableResult
        func publish(_ path: String, id: String) throws -> Catalog.Entry {
            clock += 1
            _ = try Publisher.publish([path], to: root, options: .init(now: CatalogTime(seconds: clock)))
            let catalog = try Catalog.parse(try dir.read("site/catalog.json"), path: root + "/catalog.json")
            return try #require(catalog.entry(withID: id))
        }

        func install(_ path: String, id: String) throws {
            _ = try store.install(packAt: path, id: id, catalogVersion: "1", source: "test")
        }

        /// The request for `entry` from `base`, piece map included.
        func request(_ entry: Catalog.Entry, base: String) -> DownloadRequest {
            var request = DownloadRequest(entry, url: base + "/" + entry.url)
            request.pieces = entry.pieces.map { .init(url: base + "/" + $0.url, size: $0.size, sha256: $0.sha256) }
            return request
        }

        func downloader(attempts: Int = 3) throws -> Downloader {
            var options = Downloader.Options()
            options.maximumAttempts = attempts
            options.initialBackoff = 0.01
            options.maximumBackoff = 0.05
            return try Downloader(store: store, options: options)
        }

        /// Downloads `request` with a status record, returning every record written.
        func download(_ request: DownloadRequest, attempts: Int = 3) throws -> (InstallOutcome, [DownloadStatus]) {
            let reporter = DownloadReporter(board: board, request: request)
            var records: [DownloadStatus] = []
            reporter.onChange = { records.append($0) }
            let outcome = try downloader(attempts: attempts).download(request, monitor: reporter)
            return (outcome, records)
        }

        /// The installed archive of `id`.
        func archivePath(_ id: String) throws -> String {
            dir.file("container/packs/" + (try #require(try store.packRecord(id))).archiveName)
        }

        func stagingFiles() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir.file("container/staging"))
        }

        /// Flips the byte at `offset` of the file at `path`, in place.
        func flip(_ path: String, at offset: UInt64) throws {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            try handle.seek(toOffset: offset)
            let byte = try #require(try handle.read(upToCount: 1)).first!
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data([byte ^ 0x5a]))
        }
    }

    /// Version 1 of `P` (40 members) installed; version 2 — one member
    /// changed, one added, one removed — published. Returns its entry.
    static func update(_ s: Site) throws -> Catalog.Entry {
        var members = Site.members(40)
        try s.install(try s.archive("P", version: 1, members), id: "P")
        members[7].1 = Site.bytes(members[7].0, salt: 2)
        members.remove(at: 20)
        members.append(("new.bin", Site.bytes("new.bin")))
        return try s.publish(try s.archive("P", version: 2, members), id: "P")
    }

    static func map(_ s: Site, _ entry: Catalog.Entry) throws -> PieceMap {
        let pieces = try #require(entry.pieces)
        return try PieceMap.parse(try s.dir.read("site/" + pieces.url), path: pieces.url)
    }

    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hex(bytes.withUnsafeBytes { SHA256.hash($0) }) }

    // MARK: Updates

    @Test func anUpdateCopiesWhatIsInstalledAndFetchesOnlyTheChangedMembers() throws {
        let s = try Site()
        let entry = try Self.update(s)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let (outcome, records) = try s.download(s.request(entry, base: nginx.baseURL))
        #expect(outcome.change != .unchanged && SHA256.hex(outcome.record.sha256) == entry.sha256)
        #expect(Array(try s.store.contents(at: "new.bin", inPack: "P")) == Site.bytes("new.bin"))
        #expect(Array(try s.store.contents(at: "m007.bin", inPack: "P")) == Site.bytes("m007.bin", salt: 2))
        #expect(try s.store.journalEntries().isEmpty && s.stagingFiles().isEmpty)

        let map = try Self.map(s, entry)
        let changed = map.members.filter { $0.path == "m007.bin" || $0.path == "new.bin" }
        let log = nginx.accessLog(count: 3) { _ in true }
        let zip = log.filter { $0.uri.hasSuffix(".zip") }
        #expect(log.filter { $0.uri.hasSuffix(".pieces") }.map(\.status) == [200])
        #expect(log.filter { $0.uri.hasSuffix(".glue") }.map(\.status) == [200])
        // The two members not installed, each in a closed range of its own (far apart), nothing else.
        #expect(zip.count == 2 && zip.allSatisfy { $0.status == 206 }, "\(zip)")
        #expect(Set(zip.map(\.range)) == Set(changed.map { "bytes=\($0.offset)-\($0.offset + $0.size - 1)" }), "\(zip)")
        let body = changed.reduce(0) { $0 + Int($1.size) }
        let sent = zip.reduce(0) { $0 + $1.bytesSent }
        #expect(sent >= body && sent < body + 2 * 1024)

        let last = try #require(records.last)
        #expect(last.mode == .delta && last.reason == nil && last.bytes == entry.size)
        #expect(last.reused == map.members.reduce(0) { $0 + $1.size } - UInt64(body))
        #expect(last.fetched == entry.pieces!.size + map.glue.size + UInt64(body))
        #expect(s.board.status(of: "P")?.mode == .delta)
    }

    @Test func renamedAndMovedMembersAreCopiedWithoutARange() throws {
        let s = try Site()
        let members = Site.members(12)
        try s.install(try s.archive("P", version: 1, members), id: "P")
        try s.install(try s.archive("Q", version: 1, [("q/moved.bin", Site.bytes("moved"))]), id: "Q")
        // Version 2: one member renamed, one moved in from Q.
        var next = members
        next[3].0 = "renamed/" + next[3].0
        next.append(("moved.bin", Site.bytes("moved")))
        let entry = try s.publish(try s.archive("P", version: 2, next), id: "P")
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let (outcome, records) = try s.download(s.request(entry, base: nginx.baseURL))
        #expect(SHA256.hex(outcome.record.sha256) == entry.sha256)
        #expect(Array(try s.store.contents(at: "moved.bin", inPack: "P")) == Site.bytes("moved"))
        #expect(Array(try s.store.contents(at: "renamed/" + members[3].0, inPack: "P")) == members[3].1)
        _ = nginx.accessLog(count: 2) { !$0.uri.hasSuffix(".json") }
        #expect(nginx.accessLog.filter { $0.uri.hasSuffix(".zip") }.isEmpty, "\(nginx.accessLog)")
        let glue = try Self.map(s, entry).glue.size
        #expect(records.last?.mode == .delta && records.last?.fetched == entry.pieces!.size + glue)
    }

    @Test func aPackNotInstalledIsADeltaOnlyWhenAnotherPackHoldsSomeOfItsMembers() throws {
        let s = try Site()
        try s.install(try s.archive("Q", version: 1, [("q.bin", Site.bytes("shared"))]), id: "Q")
        let alone = try s.publish(try s.archive("P", version: 1, Site.members(10)), id: "P")
        let shared = try s.publish(try s.archive("R", version: 1, Site.members(10, salt: 9) + [("r.bin", Site.bytes("shared"))]), id: "R")
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        // None of P's members is installed: the whole file.
        let (_, plain) = try s.download(s.request(alone, base: nginx.baseURL))
        #expect(plain.last?.mode == .full && plain.last?.reason == nil)
        let p = nginx.accessLog(count: 1) { $0.uri == "/" + alone.url }
        #expect(p.count == 1 && p[0].status == 200 && p[0].range.isEmpty)
        // R has Q's member: copied, the rest fetched.
        let (outcome, records) = try s.download(s.request(shared, base: nginx.baseURL))
        #expect(SHA256.hex(outcome.record.sha256) == shared.sha256)
        #expect(records.last?.mode == .delta && records.last?.reused == UInt64(Site.bytes("shared").count))
        let r = nginx.accessLog(count: 1) { $0.uri == "/" + shared.url }
        #expect(!r.isEmpty && r.allSatisfy { $0.status == 206 }, "\(r)")
    }

    @Test func aDamagedInstalledMemberIsFetchedInsteadOfCopied() throws {
        let s = try Site()
        let entry = try Self.update(s)
        // A byte of m011.bin's data in the installed archive.
        let old = try PieceMap.make(archivePath: try s.archivePath("P"))
        let damaged = try #require(old.members.first { $0.path == "m011.bin" })
        try s.flip(try s.archivePath("P"), at: damaged.offset + 10)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let (outcome, records) = try s.download(s.request(entry, base: nginx.baseURL))
        #expect(SHA256.hex(outcome.record.sha256) == entry.sha256)
        #expect(Array(try s.store.contents(at: "m011.bin", inPack: "P")) == Site.bytes("m011.bin"))
        let fetched = try #require(try Self.map(s, entry).members.first { $0.path == "m011.bin" })
        let zip = nginx.accessLog(count: 2) { $0.uri.hasSuffix(".zip") }
        // In a range of its own or merged with m007.bin's, 4 members before it.
        #expect(zip.contains { r in
            let bounds = r.range.dropFirst(6).split(separator: "-").compactMap { UInt64($0) }
            return bounds.count == 2 && bounds[0] <= fetched.offset && fetched.offset + fetched.size - 1 <= bounds[1]
        }, "\(zip)")
        // Not a reason to give up the delta: the status stream says what was fetched instead.
        #expect(records.last?.mode == .delta)
        #expect(records.last?.reason == "delta: 1 installed member(s) did not match the piece map's SHA-256 (first: m011.bin in P); fetched instead",
                "\(String(describing: records.last?.reason))")
    }

    // MARK: Faults: each ends in the full download, the reason in the record

    enum Fault: String, CaseIterable, Sendable {
        case pieceMapTampered, pieceMapTruncated, pieceMapMissing, pieceMapOutsideTheFile, glueTampered, serverIgnoresRange
    }

    @Test(arguments: Fault.allCases)
    func aFailedDeltaEndsInTheFullDownloadWithItsReason(_ fault: Fault) throws {
        let s = try Site()
        let entry = try Self.update(s)
        let pieces = try #require(entry.pieces)
        let mapFile = s.root + "/" + pieces.url
        var reference = pieces
        let expected: String
        switch fault {
        case .pieceMapTampered:
            try s.flip(mapFile, at: 20)
            expected = "delta: piece map SHA-256 mismatch (\(pieces.size) bytes, the catalog gives \(pieces.size)); full download"
        case .pieceMapTruncated, .pieceMapOutsideTheFile:
            // As a catalog re-signed over the edited map would give it.
            var bytes = try s.dir.read("site/" + pieces.url)
            if fault == .pieceMapTruncated {
                bytes = Array(bytes.prefix(bytes.count / 2))
            } else {
                var map = try PieceMap.parse(bytes, path: pieces.url)
                map.members[map.members.count - 1].offset = entry.size - 2
                bytes = map.encoded()
            }
            try s.dir.write("site/" + pieces.url, bytes)
            reference = .init(url: pieces.url, size: UInt64(bytes.count), sha256: Self.sha256(bytes))
            let refusal = #expect(throws: DeliveryError.self) { try PieceMap.parse(bytes, path: "x", pack: "P") }
            guard case .badPieceMap(_, _, let problem, _) = refusal else { Issue.record("\(String(describing: refusal))"); return }
            #expect(problem == (fault == .pieceMapTruncated ? .notJSON : .outsideFile))
            expected = ""
        case .pieceMapMissing:
            try FileManager.default.removeItem(atPath: mapFile)
            expected = "delta: the piece map could not be fetched (HTTP 404); full download"
        case .glueTampered:
            try s.flip(s.root + "/" + (try Self.map(s, entry)).glue.url, at: 3)
            expected = "delta: glue SHA-256 mismatch; full download"
        case .serverIgnoresRange:
            expected = "delta: the server ignores Range (HTTP 200 to a range request); full download"
        }
        let serve = try ServeHost(root: s.root, fault == .serverIgnoresRange ? ["--ignore-range", "--fault-path", "*.zip"] : [])
        defer { serve.stop() }
        var request = s.request(entry, base: serve.baseURL)
        request.pieces = .init(url: serve.baseURL + "/" + reference.url, size: reference.size, sha256: reference.sha256)
        let (outcome, records) = try s.download(request)
        #expect(outcome.change != .unchanged && SHA256.hex(outcome.record.sha256) == entry.sha256)
        #expect(Array(try s.store.contents(at: "new.bin", inPack: "P")) == Site.bytes("new.bin"))
        let reasons = Set(records.compactMap(\.reason))
        #expect(reasons.count == 1, "\(reasons)")
        let reason = try #require(reasons.first)
        if expected.isEmpty {
            #expect(reason.hasPrefix("delta: ") && reason.hasSuffix("; full download") && reason.contains("piece map"), "\(reason)")
        } else {
            #expect(reason == expected)
        }
        // The full download: the whole file, once, and its record says so to the end.
        let last = try #require(records.last)
        #expect(last.mode == .full && last.reused == 0 && last.reason == reason && last.bytes == entry.size)
        let whole = serve.accessLog(count: 1) { $0.target.hasSuffix(".zip") && $0.status == 200 && $0.range.isEmpty }
        #expect(whole.count == 1 && whole.first?.bodyBytes == Int(entry.size), "\(serve.accessLog)")
        #expect(try s.store.journalEntries().isEmpty && s.stagingFiles().isEmpty)
    }

    // MARK: Resume

    @Test func aStoppedDeltaResumesWithoutFetchingAgainWhatItHadAndRedoesWhatDoesNotCheckOut() throws {
        let s = try Site()
        let entry = try Self.update(s)
        let map = try Self.map(s, entry)
        // While `fail` exists, every range is answered 503: the glue and the
        // copies are done, the ranges are not.
        let fail = s.dir.file("fail")
        try s.dir.write("fail", [])
        let nginx = try NginxHost(root: s.root, extra: """
            set $fail ""; if ($http_range) { set $fail R; } if (-f \(fail)) { set $fail "${fail}F"; } if ($fail = RF) { return 503; }
            """)
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL)
        #expect {
            try s.download(request, attempts: 2)
        } throws: { error in
            guard case .downloadFailed(_, "P", .retriesExhausted(2), _) = error as? DeliveryError else { return false }
            return true
        }
        try FileManager.default.removeItem(atPath: fail)
        let failed = nginx.accessLog(count: 2) { $0.status == 503 }
        let journal = try #require(try s.store.journalEntry(forPack: "P"))
        let mapBytes = try s.dir.read("site/" + entry.pieces!.url)
        #expect(journal.deltaPieceMap == mapBytes.withUnsafeBytes { SHA256.hash($0) })
        let staging = s.dir.file("container/staging/" + (try #require(journal.stagingName)))
        let lines = try String(contentsOfFile: staging + JournalEntry.rangesSuffix, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "g" && lines.dropFirst().allSatisfy { $0.hasPrefix("c ") } && lines.count == map.members.count - 2 + 1)
        // A copied member damaged in the partial file, and a torn last line.
        let damaged = try #require(map.members.first { $0.path == "m030.bin" })
        try s.flip(staging, at: damaged.offset + 1)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: staging + JournalEntry.rangesSuffix))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("f 0 ".utf8))
        try handle.close()

        let (outcome, records) = try s.download(request)
        #expect(SHA256.hex(outcome.record.sha256) == entry.sha256)
        let log = nginx.accessLog(count: 2) { $0.uri.hasSuffix(".zip") && $0.status == 206 }
        #expect(!failed.isEmpty && nginx.accessLog.filter { $0.uri.hasSuffix(".glue") }.count == 1, "the glue was fetched again: \(nginx.accessLog)")
        let changed = map.members.filter { $0.path == "m007.bin" || $0.path == "new.bin" }
        // The two members it never had, and the damaged one copied again (it is installed): no range for it.
        #expect(Set(log.map(\.range)) == Set(changed.map { "bytes=\($0.offset)-\($0.offset + $0.size - 1)" }), "\(log)")
        #expect(Array(try s.store.contents(at: "m030.bin", inPack: "P")) == Site.bytes("m030.bin"))
        #expect(records.last?.mode == .delta)
        #expect(try s.store.journalEntries().isEmpty && s.stagingFiles().isEmpty)
    }

    @Test func aCancelDuringTheDeltaDiscardsItsFileAndList() throws {
        let s = try Site()
        let entry = try Self.update(s)
        let serve = try ServeHost(root: s.root, ["--throttle", "64K", "--fault-path", "*.zip"])
        defer { serve.stop() }
        /// Cancels once members were copied and a range is under way.
        final class Canceller: DownloadMonitor {
            var reused: UInt64 = 0
            var ranges: [String] = []
            let staging: String
            init(staging: String) { self.staging = staging }
            func progressed(_ bytes: UInt64, of total: UInt64) -> DownloadInterruption? {
                ranges = ((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []).filter { $0.hasSuffix(".ranges") }
                return reused > 0 && !ranges.isEmpty && bytes > total / 2 ? .cancel : nil
            }
            func counted(fetched: UInt64, reused: UInt64) { self.reused = reused }
            func installing() {}
            func waitWhilePaused() -> DownloadInterruption? { nil }
            func sleep(_ seconds: Double) -> DownloadInterruption? { nil }
        }
        let monitor = Canceller(staging: s.dir.file("container/staging"))
        #expect {
            try s.downloader().download(s.request(entry, base: serve.baseURL), monitor: monitor)
        } throws: { error in
            guard case .downloadFailed(_, "P", .cancelled, _) = error as? DeliveryError else { return false }
            return true
        }
        #expect(monitor.reused > 0 && monitor.ranges.count == 1)
        #expect(try s.store.journalEntries().isEmpty && s.stagingFiles().isEmpty)
        #expect(try s.store.packRecord("P")?.catalogVersion == "1")
    }

    @Test func aPauseDuringTheRangesStopsThemAndTheDeltaGoesOnAfterIt() throws {
        let s = try Site()
        let entry = try Self.update(s)
        let serve = try ServeHost(root: s.root, ["--throttle", "32K", "--fault-path", "*.zip"])
        defer { serve.stop() }
        /// Pauses once, when a range has begun to arrive; resumes at once.
        final class Pauser: DownloadMonitor {
            var fetched: UInt64 = 0
            var fetchedAtPause: UInt64?
            let before: UInt64
            init(before: UInt64) { self.before = before }
            func progressed(_ bytes: UInt64, of total: UInt64) -> DownloadInterruption? {
                guard fetchedAtPause == nil, fetched > before else { return nil }
                fetchedAtPause = fetched
                return .pause
            }
            func counted(fetched: UInt64, reused: UInt64) { self.fetched = fetched }
            func installing() {}
            func waitWhilePaused() -> DownloadInterruption? { nil }
            func sleep(_ seconds: Double) -> DownloadInterruption? { nil }
        }
        // Past the piece map and the glue: bytes of a range.
        let monitor = Pauser(before: entry.pieces!.size + (try Self.map(s, entry)).glue.size)
        let outcome = try s.downloader().download(s.request(entry, base: serve.baseURL), monitor: monitor)
        #expect(SHA256.hex(outcome.record.sha256) == entry.sha256 && monitor.fetchedAtPause != nil)
        // The ranges the pause cut short were asked for again, whole.
        let zip = serve.accessLog(count: 3) { $0.target.hasSuffix(".zip") }
        #expect(zip.count >= 3 && zip.allSatisfy { $0.status == 206 } && Set(zip.map(\.range)).count == 2, "\(zip)")
    }

    @Test func aFullDownloadUnderWayIsNotTurnedIntoADelta() throws {
        let s = try Site()
        let entry = try Self.update(s)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL)
        let file = try s.dir.read("site/" + entry.url)
        try s.dir.write("container/staging/P-1234abcd.download", Array(file.prefix(5000)))
        try s.store.putJournalEntry(JournalEntry(pack: "P", state: .downloading, url: request.url, catalogVersion: "2",
                                                 stagingName: "P-1234abcd.download", expectedSize: request.size, sha256: request.sha256Bytes))
        let (outcome, records) = try s.download(request)
        #expect(SHA256.hex(outcome.record.sha256) == entry.sha256)
        let log = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(log.map(\.range) == ["bytes=5000-"] && !nginx.accessLog.contains { $0.uri.hasSuffix(".pieces") })
        #expect(records.last?.mode == .full && records.last?.reason == nil)
    }

    // MARK: Parts

    @Test func missingRangesAreMergedAcrossSmallGapsAndCut() {
        let k: UInt64 = 1 << 10
        #expect(DeltaDownload.plan([0..<10, 20..<30, 100 * k..<101 * k]) == [0..<30, 100 * k..<101 * k])
        // A gap of exactly 64 KiB is joined, one byte more is not.
        #expect(DeltaDownload.plan([0..<1, 64 * k + 1..<64 * k + 2]) == [0..<64 * k + 2])
        #expect(DeltaDownload.plan([0..<1, 64 * k + 2..<64 * k + 3]).count == 2)
        let big: UInt64 = 40 << 20
        let m: UInt64 = 16 << 20
        let cut: [Range<UInt64>] = [5..<5 + m, 5 + m..<5 + 2 * m, 5 + 2 * m..<big]
        #expect(DeltaDownload.plan([5..<big]) == cut)
        #expect(DeltaDownload.plan([]) == [] && DeltaDownload.plan([3..<3]) == [])
    }

    @Test func byteRangesMergeAndReportTheirGaps() {
        var set = ByteRanges()
        set.insert(10..<20)
        set.insert(30..<40)
        set.insert(20..<25)
        #expect(set.ranges == [10..<25, 30..<40])
        #expect(set.covers(12..<25) && !set.covers(20..<31) && set.covers(5..<5))
        #expect(set.gaps(in: 0..<50) == [0..<10, 25..<30, 40..<50])
        set.remove(12..<35)
        #expect(set.ranges == [10..<12, 35..<40])
    }

    @Test func theRangesListReadsBackAndIgnoresWhatIsNotALine() throws {
        let dir = TemporaryDirectory("delta-ledger")
        let path = dir.file("x.download.ranges")
        let ledger = try DeltaLedger(path: path)
        try ledger.append(.glue)
        try ledger.append(.copied(10..<20))
        try ledger.append(.fetched(20..<4096))
        #expect(try dir.read("x.download.ranges") == Array("g\nc 10 20\nf 20 4096\n".utf8))
        var bytes = try dir.read("x.download.ranges")
        bytes += Array("f 9 8\nc 1 99999\nx 1 2\nf 1 2 3\nf 100 200".utf8)  // bad, beyond the file, unknown, torn
        try dir.write("x.download.ranges", bytes)
        #expect(DeltaLedger.read(path, size: 5000) == [.glue, .copied(10..<20), .fetched(20..<4096)])
        #expect(DeltaLedger.read(dir.file("none"), size: 5000) == [])
    }

    @Test func aDeltaJournalEntryKeepsItsPieceMapAndOldEntriesStillRead() throws {
        let s = try Site()
        let map = [UInt8](repeating: 7, count: 32)
        let entry = JournalEntry(pack: "P", state: .downloading, url: "http://h/P.zip", catalogVersion: "2", stagingName: "P-1.download",
                                 expectedSize: 10, sha256: [UInt8](repeating: 1, count: 32), etag: "\"e\"", deltaPieceMap: map)
        try s.store.putJournalEntry(entry)
        #expect(try s.store.journalEntry(forPack: "P") == entry)
        var full = entry
        full.deltaPieceMap = nil
        try s.store.putJournalEntry(full)
        #expect(try s.store.journalEntry(forPack: "P") == full)
    }

    @Test func aRecordWithoutModeReadsAsAFullDownloadOfItsBytes() throws {
        let record = DownloadStatus(pack: "P", download: "3f9c0d2e5a7b1c44", state: .downloading, bytes: 100, total: 200,
                                    version: "2", url: "http://h/P.zip", pid: 1, started: 1, updated: 2,
                                    reason: "delta: glue SHA-256 mismatch; full download", mode: .delta, fetched: 30, reused: 70)
        #expect(DownloadStatus(parsing: record.encoded()) == record)
        let old = #"{"format":1,"pack":"P","download":"3f9c0d2e5a7b1c44","state":"downloading","bytes":100,"total":200,"rate":0,"version":"2","url":"u","pid":1,"started":1,"updated":2}"#
        let parsed = try #require(DownloadStatus(parsing: Array(old.utf8)))
        #expect(parsed.mode == .full && parsed.fetched == 100 && parsed.reused == 0)
    }

    @Test func aClosedRangeIsAskedForAndItsContentRangeRead() throws {
        let dir = TemporaryDirectory("delta-range")
        try dir.write("f.bin", noise(10_000))
        let nginx = try NginxHost(root: dir.path)
        defer { nginx.stop() }
        let client = try HTTPClient()
        var body: [UInt8] = []
        let head = try client.get(nginx.baseURL + "/f.bin", rangeStart: 0, rangeEnd: 99) { _, b in body += b; return true }
        #expect(head.isPartial(first: 0, last: 99, total: 10_000) && !head.isPartial(first: 0, last: 99, total: 10_001))
        #expect(body == Array(noise(10_000).prefix(100)))
        #expect(nginx.accessLog(count: 1) { _ in true }.first?.range == "bytes=0-99")
    }
}

import Foundation
import Testing
import TestSupport

private let soakCampaign = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1"

/// `assetpack sync` downloading a pack of a few MiB from a throttled
/// `assetpack serve`, killed with SIGKILL at 20 random moments (seeded;
/// the seed is printed, `ASSETPACKS_KILL_SEED` replays it): each next
/// process resumes from where the journal stood, the server sends little
/// more than the file in all, and the pack ends byte-exact with
/// `verify --deep` clean. `ASSETPACKS_SOAK=1` runs a longer campaign.
@Suite(.timeLimit(.minutes(soakCampaign ? 30 : 2)))
struct KillResumeTests {
    static let soak = soakCampaign

    /// Bytes the server may send per kill beyond what reached the file:
    /// what was in flight (socket buffers, one receive) when it died.
    static let inFlightBound = 256 << 10

    @Test func syncKilledAtRandomMomentsResumesFromTheJournalEachTime() throws {
        let kills = Self.soak ? 200 : 20
        let size = Self.soak ? 32 << 20 : 4 << 20
        // The file grows in steps of a fiftieth of the rate: a kill lands up
        // to a step past its growth. Half the file at most arrives killed.
        let rate = Self.soak ? "2M" : "1M"
        let maximumGrowth = size / (2 * kills)
        let seed = ProcessInfo.processInfo.environment["ASSETPACKS_KILL_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("KillResumeTests: seed \(seed) (ASSETPACKS_KILL_SEED=\(seed) replays the moments), \(kills) kills, \(size) bytes")
        var moments = SplitMix64(seed: seed)

        let s = try PublishCommandTests.Site()
        let media = noise(size, seed: seed)
        try s.dir.write("src/Big/files/big.bin", media)
        let pack = try s.pack("Big", "big", policy: DownloadCommandTests.essential)
        #expect(try s.publish([pack, "--sign", s.key]).status == 0)
        let target = "/" + (try #require(try s.files().first { $0.hasSuffix(".zip") }))
        let fileSize = try #require(Journal.size(s.out + target))
        let server = try ServeHost(root: s.out, ["--throttle", rate, "--fault-path", "*.zip"], executable: CLI.binary)
        defer { server.stop() }
        let arguments = ["sync", "--event", "first-installation", "--catalog", server.baseURL + "/catalog.json", "--key", s.pub,
                         "--container", s.dir.container]
        let journal = try Journal(container: s.dir.container)

        // Where the journal stood before each process; the last after the last kill.
        var standing = [0]
        for _ in 0..<kills {
            let before = standing.last!
            let child = try Child(CLI.binary, arguments)
            // Each kill comes once the file has grown by a random amount, at
            // most `maximumGrowth` (so the whole file cannot arrive before the
            // last kill); one in four also at a random instant before that:
            // starting, fetching the catalog, writing the journal, downloading.
            let growth = 1 + Int(moments.next() % UInt64(maximumGrowth))
            let until = moments.next() % 4 == 0 ? Date().addingTimeInterval(Double(moments.next() % 250) / 1000) : .distantFuture
            #expect(eventually(timeout: 30) {
                !child.process.isRunning || Date() >= until || ((try? journal.standing("Big")) ?? 0) >= before + growth
            })
            #expect(child.process.isRunning, "the download ended before its kill: \(child.stderr)")
            child.signal(SIGKILL)
            #expect(child.wait(timeout: 20) && child.wasKilled)
            standing.append(try journal.standing("Big"))
        }
        let last = standing.last!
        #expect(last < fileSize)

        let final = try CLI.assetpack(arguments)
        #expect(final.status == 0 && final.stderr.contains("Big: version 1 installed"), "\(final.stderr)")
        #expect(try CLI.assetpack(["cat", "files/big.bin", "--pack", "Big"], container: s.dir.container).stdoutBytes == media)
        let verify = try CLI.assetpack(["verify", "--deep"], container: s.dir.container)
        #expect(verify.status == 0, "\(verify.out)\(verify.stderr)")
        #expect(try journal.file("Big") == nil && journal.partialFiles.isEmpty)

        // The server's view. Each request asked for the range from where the journal stood.
        _ = server.accessLog(count: 1) { $0.target == target && $0.rangeStart + $0.bodyBytes == fileSize }
        let gets = server.accessLog.filter { $0.target == target }
        let stood = Set(standing)
        #expect(gets.allSatisfy { stood.contains($0.rangeStart) && $0.status == ($0.rangeStart == 0 ? 200 : 206) }, "\(gets) \(standing)")
        // A process that added bytes asked for them from where the one before left off.
        for (from, to) in zip(standing, standing.dropFirst()) where to > from {
            #expect(gets.contains { $0.rangeStart == from }, "no request from \(from): \(gets)")
        }
        // The final one was sent exactly the rest.
        #expect(gets.contains { $0.rangeStart == last && $0.bodyBytes == fileSize - last && $0.notes.isEmpty }, "\(gets)")
        let sent = gets.reduce(0) { $0 + $1.bodyBytes }
        let excess = sent - fileSize
        print("KillResumeTests: \(gets.count) requests, \(sent) bytes sent for \(fileSize): \(excess) beyond the file " +
              "(\(excess / max(gets.count - 1, 1)) per killed request on average)")
        #expect(sent >= fileSize && excess <= (gets.count - 1) * Self.inFlightBound, "\(gets)")
    }
}

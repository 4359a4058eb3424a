import Foundation
import Testing
import TestSupport

/// Several processes asking for one pack at once, without a daemon, share
/// one download: the server sees the file requested once, and every one of
/// them returns with the pack installed and readable.
@Suite(.timeLimit(.minutes(4)))
struct SharedDownloadTests {
    @Test func fiveProcessesFetchingOnePackShareOneDownload() throws {
        let s = try PublishCommandTests.Site()
        let media = noise(2 << 20, seed: 5)
        try s.dir.write("src/Big/files/big.bin", media)
        #expect(try s.publish([try s.pack("Big", "big", policy: DownloadCommandTests.onDemand), "--sign", s.key]).status == 0)
        // 2 MiB at 2 MiB/s: the download outlasts the start of all five.
        let nginx = try NginxHost(root: s.out, extra: "limit_rate 2m;")
        defer { nginx.stop() }
        let arguments = ["fetch", "Big", "--json", "--catalog", nginx.baseURL + "/catalog.json", "--key", s.pub, "--container", s.dir.container]
        let children = try (0..<5).map { _ in try Child(CLI.binary, arguments) }
        var results: [String] = []
        for child in children {
            #expect(child.wait(timeout: 60))
            #expect(child.exitStatus == 0, "\(child.stderr)")
            let line = jsonObject(child.stdout)
            #expect(line["id"] as? String == "Big" && line["version"] as? String == "1", "\(child.stdout)")
            results.append(line["result"] as? String ?? "")
        }
        // "installed" from one that asked while the pack was not there yet:
        // besides the one that downloaded, at least one waited for it (all
        // four, unless the machine is too busy to start them within 1 s).
        #expect(results.allSatisfy { $0 == "installed" || $0 == "upToDate" } && results.filter { $0 == "installed" }.count >= 2,
                "\(results)")
        #expect(!FileManager.default.fileExists(atPath: s.dir.container + "/daemon.sock"))
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1 && gets.first?.status == 200 && gets.first?.range == "", "\(gets)")
        #expect(try CLI.assetpack(["cat", "files/big.bin", "--pack", "Big"], container: s.dir.container).stdoutBytes == media)
    }
}

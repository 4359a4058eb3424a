import Foundation
import Testing
import TestSupport

/// A download past the process's file size limit (`RLIMIT_FSIZE`) is
/// refused naming the pack and the limit, in a process started with
/// `ulimit -f`, before a byte is written (which would end it by SIGXFSZ
/// or EFBIG naming nothing).
@Suite(.enabled(if: Program.available("python3"))) struct DownloadRoomCommandTests {
    @Test func aPackPastTheFileSizeLimitIsRefusedNamingIt() throws {
        let dir = TemporaryDirectory("room")
        let container = dir.file("container")
        // The container (and its index) made first, without the limit.
        try dir.write("src/files/a.txt", "a")
        try dir.write("src/m.json", #"{"assetPackID":"Small","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"directory":"files"}]}"#)
        #expect(try CLI.assetpack(["package", dir.file("src/m.json"), "-o", dir.file("Small.zip")]).status == 0)
        #expect(try CLI.assetpack(["install", dir.file("Small.zip")], container: container).status == 0)
        let url = "http://127.0.0.1:9/Big.zip"
        let r = try Program.run("/bin/sh", ["-c", "ulimit -f 2048 && exec \"$0\" \"$@\"", Helper.binary, "download", "--container", container,
                                            "--id", "Big", "--url", url, "--version", "1", "--size", "5000000",
                                            "--sha256", String(repeating: "ab", count: 32)])
        #expect(r.status == 2)
        #expect(r.stderr.contains("download of 'Big' from \(url) failed: its 5000000 bytes do not fit: this process may write files of at most 2097152 bytes (RLIMIT_FSIZE)")
                || r.stderr.contains("download of 'Big' from \(url) failed: its 5000000 bytes do not fit: this process may write files of at most 1048576 bytes (RLIMIT_FSIZE)"),
                "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: container + "/staging").filter { $0.hasSuffix(".download") }.isEmpty)
    }
}

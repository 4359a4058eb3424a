import Foundation
import Testing
import TestSupport

/// One byte-count parser for every option that takes one (`limits`' sizes,
/// `daemon --memory-cache` and `--memory-budget`): the same suffixes, the
/// same refusals, each with its own bound.
@Suite struct ByteCountOptionTests {
    @Test(arguments: [
        (["daemon", "--memory-budget", "9999999999G"], "'--memory-budget' may be at most 9223372036854775807 bytes, not '9999999999G'"),
        (["daemon", "--memory-cache", "8388608T"], "'--memory-cache' may be at most 9223372036854775807 bytes, not '8388608T'"),
        (["daemon", "--memory-cache", "lots"], "'--memory-cache' needs a number of bytes (with K, M, G or T), not 'lots'"),
        (["daemon", "--memory-budget", "-1"], "'--memory-budget' needs a number of bytes (with K, M, G or T), not '-1'"),
        (["daemon", "--memory-cache", "K"], "'--memory-cache' needs a number of bytes (with K, M, G or T), not 'K'"),
        (["daemon", "--memory-cache", "99999999999T"], "'--memory-cache' needs a number of bytes (with K, M, G or T), not '99999999999T'"),
        (["limits", "--member-size", "1.5G"], "'--member-size' needs a number of bytes (with K, M, G or T), not '1.5G'"),
        (["limits", "--ratio", "2K"], "'--ratio' needs a whole number, not '2K'"),
        (["limits", "--ratio", "18446744073709551616"], "'--ratio' needs a whole number, not '18446744073709551616'"),
    ])
    func refusedValuesAreUsageErrors(_ args: [String], _ message: String) throws {
        let s = TemporaryDirectory("byte-count")
        let r = try CLI.assetpack(args, container: s.container)
        #expect(r.status == 64 && r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.contains("See 'assetpack \(args[0]) --help'."), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.container))
    }

    /// 8388608T = 2^63 does not fit the daemon's Int64 (above); 8388607T,
    /// the largest multiple of 1 T that does, is accepted, and so is every
    /// suffix in either case: the daemon goes on to open the container,
    /// which here is a file, and fails on that instead.
    @Test func theDaemonTakesEverySuffixUpToItsBound() throws {
        let s = TemporaryDirectory("byte-count")
        try Data().write(to: URL(fileURLWithPath: s.file("not-a-container")))
        for value in ["8388607T", "2t", "512k", "64M", "1G", "65536"] {
            let r = try CLI.assetpack(["daemon", "--memory-cache", value, "--memory-budget", value], container: s.file("not-a-container"))
            #expect(r.status == 1 && !r.stderr.contains("--memory"), "\(value): \(r.stderr)")
        }
    }

    @Test func limitsTakeEverySuffix() throws {
        let s = TemporaryDirectory("byte-count")
        let set = try CLI.assetpack(["limits", "--member-size", "3t", "--ratio-exempt-size", "2k", "--pack-size", "18014398509481983K"],
                                    container: s.container)
        #expect(set.status == 0, "\(set.stderr)")
        let json = try CLI.assetpack(["limits", "--json"], container: s.container)
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["maximumMemberSize"] as? UInt64 == 3 << 40 && object["compressionRatioExemptSize"] as? Int == 2048)
        #expect(object["maximumPackSize"] as? UInt64 == 18014398509481983 << 10)
    }
}

import Foundation
import Testing
import TestSupport

/// Issue 9, finding 4, at the command line: a decompression bomb is refused
/// in one line with exit 1, and `assetpack limits` records a container's
/// limits for every process that opens it.
@Suite struct LimitsCommandTests {
    static let gibibyte: UInt64 = 1 << 30

    @Test func installRefusesABombInOneLine() throws {
        let s = TemporaryDirectory("limits-cli")
        let bomb = try ZeroBomb.write([("zeros.bin", 2 * Self.gibibyte)], to: s.file("bomb.zip"))
        let r = try CLI.assetpack(["install", bomb], container: s.container)
        #expect(r.status == 1 && r.stdout.isEmpty)
        #expect(r.stderr == "assetpack install: error: \(bomb): member 'zeros.bin' declares 2147483648 bytes inflated, "
                + "more than the limit of 1073741824 bytes\n", "\(r.stderr)")
        let ls = try CLI.assetpack(["ls"], container: s.container)
        #expect(ls.status == 0 && ls.stdout.isEmpty, "\(ls.stderr)")
        let inspect = try CLI.assetpack(["inspect", bomb])
        #expect(inspect.status == 1 && inspect.stdout.isEmpty)
        #expect(inspect.stderr.hasPrefix("assetpack inspect: error: \(bomb): member 'zeros.bin' declares 2147483648 bytes")
                && inspect.stderr.split(separator: "\n").count == 1, "\(inspect.stderr)")
    }

    @Test func limitsAreRecordedForTheContainer() throws {
        let s = TemporaryDirectory("limits-cli")
        let bomb = try ZeroBomb.write([("zeros.bin", 8 << 20)], to: s.file("ratio.zip"))
        let refused = try CLI.assetpack(["install", bomb], container: s.container)
        #expect(refused.status == 1 && refused.stderr.contains(":1), more than the limit of 200:1"), "\(refused.stderr)")

        let shown = try CLI.assetpack(["limits"], container: s.container)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.out.split(separator: "\n").map { $0.split(separator: " ").map(String.init) } == [
            ["member-size", "1073741824"], ["ratio", "200"], ["ratio-exempt-size", "1048576"], ["pack-size", "17179869184"],
        ], "\(shown.out)")
        #expect(shown.stderr.hasSuffix("the container records no limits: these are the defaults\n"), "\(shown.stderr)")

        // Raised: the same pack installs, in another process than the one that set the limits.
        let set = try CLI.assetpack(["limits", "--ratio", "2000", "--member-size", "4G"], container: s.container)
        #expect(set.status == 0, "\(set.stderr)")
        let json = try CLI.assetpack(["limits", "--json"], container: s.container)
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["recorded"] as? Bool == true && object["maximumCompressionRatio"] as? Int == 2000)
        #expect(object["maximumMemberSize"] as? Int == 4 << 30 && object["maximumPackSize"] as? Int == 16 << 30)
        let installed = try CLI.assetpack(["install", bomb], container: s.container)
        #expect(installed.status == 0, "\(installed.stderr)")

        // Lowered below what is installed: reading the member refuses, in one line.
        #expect(try CLI.assetpack(["limits", "--member-size", "1M"], container: s.container).status == 0)
        let cat = try CLI.assetpack(["cat", "zeros.bin"], container: s.container)
        #expect(cat.status == 1 && cat.stdout.isEmpty)
        #expect(cat.stderr.hasPrefix("assetpack cat: error: ") && cat.stderr.contains("member 'zeros.bin' declares 8388608 bytes")
                && cat.stderr.split(separator: "\n").count == 1, "\(cat.stderr)")

        // Reset: the defaults again.
        #expect(try CLI.assetpack(["limits", "--reset"], container: s.container).status == 0)
        let after = try CLI.assetpack(["limits", "--json"], container: s.container)
        let reset = try #require(try JSONSerialization.jsonObject(with: after.stdout) as? [String: Any])
        #expect(reset["recorded"] as? Bool == false && reset["maximumCompressionRatio"] as? Int == 200)
    }

    @Test(arguments: [
        (["limits", "--member-size", "12X"], "'--member-size' needs a number of bytes (with K, M, G or T), not '12X'"),
        (["limits", "--pack-size", "99999999999T"], "'--pack-size' needs a number of bytes (with K, M, G or T), not '99999999999T'"),
        (["limits", "--ratio", "-1"], "'--ratio' needs a whole number, not '-1'"),
        (["limits", "--reset", "--ratio", "3"], "--reset cannot be combined with a limit"),
    ])
    func badValuesAreUsageErrors(_ args: [String], _ message: String) throws {
        let s = TemporaryDirectory("limits-cli")
        let r = try CLI.assetpack(args, container: s.container)
        #expect(r.status == 64 && r.stderr.contains(message), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.container))
    }
}

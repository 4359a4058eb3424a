import Foundation
import Testing
import TestSupport

/// `ls` and `inspect` show member names with control characters and
/// bidirectional formatting characters escaped, so a name cannot drive the
/// terminal or show its letters reordered; `--json` keeps them exact.
@Suite(.enabled(if: Program.available("python3")))
struct MemberNameOutputTests {
    private static let names = [
        "red\u{1b}[31m.txt", "bell\u{07}del\u{7f}.txt", "c1\u{85}csi\u{9b}2J.txt", "tab\there.txt", "line\nbreak.txt",
        "plain/caf\u{e9}.txt", "invoice\u{202e}fdp.exe", "iso\u{2066}x\u{2069}\u{2067}.txt", "marks\u{200e}\u{200f}\u{61c}.txt",
        "sep\u{2028}para\u{2029}.txt", "embed\u{202a}\u{202b}\u{202c}\u{202d}.txt",
    ]
    private static let shown = [
        "red\\x1b[31m.txt", "bell\\x07del\\x7f.txt", "c1\\u{85}csi\\u{9b}2J.txt", "tab\\x09here.txt", "line\\x0abreak.txt",
        "plain/caf\u{e9}.txt", "invoice\\u{202e}fdp.exe", "iso\\u{2066}x\\u{2069}\\u{2067}.txt", "marks\\u{200e}\\u{200f}\\u{61c}.txt",
        "sep\\u{2028}para\\u{2029}.txt", "embed\\u{202a}\\u{202b}\\u{202c}\\u{202d}.txt",
    ]

    /// The bidirectional formatting characters and separators, which no output line may hold raw.
    private static func holdsBidiControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { [0x61c, 0x200e, 0x200f, 0x2028, 0x2029].contains($0.value)
            || (0x202a ... 0x202e).contains($0.value) || (0x2066 ... 0x2069).contains($0.value) }
    }

    /// A pack of one-byte members with `names`, written by Python's zipfile.
    private func pack(in s: TemporaryDirectory) throws -> String {
        let path = s.file("ctl.zip")
        let list = Self.names.map { name in
            "'" + name.unicodeScalars.map { String(format: "\\U%08x", $0.value) }.joined() + "'"
        }.joined(separator: ", ")
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                for name in [\(list)]: z.writestr(name, b'x')
            """
        let r = try Program.run("python3", ["-c", script, path])
        guard r.status == 0 else { throw TestFailure("python: \(r.stderr)") }
        return path
    }

    /// The last column of each line that holds a member, in `output`.
    private func shownNames(_ output: String, after header: String? = nil) -> [String] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let header, let start = lines.firstIndex(of: header) { lines = Array(lines[(start + 1)...]) }
        return lines.filter { $0.hasPrefix("stored") || $0.hasPrefix("deflated") }.map {
            String($0.split(separator: " ", omittingEmptySubsequences: true).last!)
        }
    }

    @Test func lsEscapesControlCharactersAndJSONKeepsThem() throws {
        let s = TemporaryDirectory("names-cli")
        let install = try CLI.assetpack(["install", try pack(in: s)], container: s.container)
        #expect(install.status == 0, "\(install.stderr)")
        let ls = try CLI.assetpack(["ls", "ctl"], container: s.container)
        #expect(ls.status == 0, "\(ls.stderr)")
        #expect(!ls.stdoutBytes.contains { $0 < 0x20 && $0 != 0x0a || $0 == 0x7f })
        #expect(!ls.out.unicodeScalars.contains { (0x80 ..< 0xa0).contains($0.value) })
        #expect(!Self.holdsBidiControl(ls.out))
        #expect(Set(shownNames(ls.out)) == Set(Self.shown))
        let json = try #require(try jsonValue(try CLI.assetpack(["ls", "ctl", "--json"], container: s.container)) as? [[String: Any]])
        #expect(Set(json.compactMap { $0["path"] as? String }) == Set(Self.names))
    }

    @Test func inspectEscapesControlCharactersAndJSONKeepsThem() throws {
        let s = TemporaryDirectory("names-cli")
        let path = try pack(in: s)
        let inspect = try CLI.assetpack(["inspect", path])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(!inspect.stdoutBytes.contains { $0 < 0x20 && $0 != 0x0a || $0 == 0x7f })
        #expect(!inspect.out.unicodeScalars.contains { (0x80 ..< 0xa0).contains($0.value) })
        #expect(!Self.holdsBidiControl(inspect.out))
        #expect(Set(shownNames(inspect.out)) == Set(Self.shown))
        let json = try #require(try jsonValue(try CLI.assetpack(["inspect", path, "--json"])) as? [String: Any])
        let members = try #require(json["members"] as? [[String: Any]])
        #expect(Set(members.compactMap { $0["path"] as? String }) == Set(Self.names))
    }
}

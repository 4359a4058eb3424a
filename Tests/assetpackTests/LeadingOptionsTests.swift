import Foundation
import Testing
import TestSupport

/// The container options before the subcommand mean what they mean after it.
@Suite struct LeadingOptionsTests {
    /// The environment without ASSETPACKS_CONTAINER (which would win over
    /// --group), with XDG_DATA_HOME in the scratch directory.
    func environment(_ s: TemporaryDirectory) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["ASSETPACKS_CONTAINER"] = nil
        env["XDG_DATA_HOME"] = s.path + "/data"
        return env
    }

    @Test func containerBeforeTheSubcommandIsTheSameAsAfter() throws {
        let s = TemporaryDirectory("leading-container")
        let pack = try makePack(s, id: "com.example.leading", files: ["a.txt": Array("leading\n".utf8)])
        #expect(try CLI.assetpack(["--container", s.container, "install", pack]).status == 0)
        let after = try CLI.assetpack(["ls", "--json", "--container", s.container])
        let before = try CLI.assetpack(["--container", s.container, "ls", "--json"])
        let joined = try CLI.assetpack(["--container=\(s.container)", "ls", "--json"])
        #expect(after.status == 0 && before.status == 0 && joined.status == 0)
        #expect(before.out == after.out && joined.out == after.out)
        #expect(after.out.contains("com.example.leading"))
        #expect(try CLI.assetpack(["--container", s.container, "cat", "a.txt"]).out == "leading\n")
        // Given twice, once on each side, it is refused like any other repeat.
        let twice = try CLI.assetpack(["--container", s.container, "verify", "--container", s.container])
        #expect(twice.status == 16 && twice.stderr.hasPrefix("Error: option '--container' given more than once\n"))
    }

    @Test func groupBeforeTheSubcommandIsTheSameAsAfter() throws {
        let s = TemporaryDirectory("leading-group")
        let env = environment(s)
        let pack = try makePack(s, id: "com.example.grouped", files: ["a.txt": Array("grouped\n".utf8)])
        let install = try Program.run(CLI.binary, ["--group", "G", "install", pack], environment: env)
        #expect(install.status == 0, "\(install.stderr)")
        let before = try Program.run(CLI.binary, ["--group", "G", "verify", "--json"], environment: env)
        let after = try Program.run(CLI.binary, ["verify", "--json", "--group", "G"], environment: env)
        #expect(before.status == 0 && after.status == 0, "\(before.stderr)\(after.stderr)")
        #expect(before.out == after.out)
        let report = try JSONSerialization.jsonObject(with: before.stdout) as? [String: Any]
        #expect(report?["container"] as? String == s.path + "/data/assetpacks/G")
        #expect(report?["packsChecked"] as? Int == 1)
    }

    @Test func aLeadingOptionTheSubcommandDoesNotTakeIsAUsageError() throws {
        let s = TemporaryDirectory("leading-refused")
        let r = try CLI.assetpack(["--group", "G", "package", s.path + "/m.json", "-o", s.path + "/p.zip"])
        #expect(r.status == 64)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "Error: option '--group' does not apply to 'package'")
        #expect(lines.dropFirst().first?.hasPrefix("Usage: assetpack package") == true)
        #expect(lines.last == "See 'assetpack package --help'.")
    }

    @Test func helpAndVersionBeforeTheSubcommand() throws {
        let overview = try CLI.assetpack(["--help"]).out
        #expect(try CLI.assetpack(["--container", "/nonexistent", "--help"]).out == overview)
        #expect(try CLI.assetpack(["--container", "/nonexistent", "help", "ls"]).out == (try CLI.assetpack(["ls", "--help"]).out))
        #expect(try CLI.assetpack(["--version", "ls"]).out.hasPrefix("assetpack "))
    }
}

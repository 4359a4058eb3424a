import Foundation
import Testing
import TestSupport

/// What each subcommand must offer, written out here rather than read from
/// the declarations, so that an option dropped or renamed fails a test.
struct Surface: Sendable, CustomStringConvertible {
    let name: String
    /// The OPTIONS entries, as help labels them (without `-h, --help`).
    let options: [String]
    /// The ARGUMENTS entries.
    var arguments: [String] = []
    /// Sections after OPTIONS.
    var sections: [String] = []
    /// A command line the command refuses, and what it must say.
    let refused: [String]
    let message: String
    var exitCode: Int32 = 64

    var description: String { name }

    /// `--output` from `-o, --output <pack>`.
    var longNames: [String] {
        options.map { label in
            let long = label.split(separator: " ").first { $0.hasPrefix("--") } ?? ""
            return String(long.drop { $0 == "-" }.prefix { $0 != "," })
        }
    }

    static let container = ["--container <dir>", "--group <id>", "--lock-timeout <seconds>"]
    static let deadlines = ["--min-rate <bytes>", "--min-rate-time <seconds>", "--max-time <seconds>"]
    static let catalogCache = ["--catalog-cache-count <n>", "--catalog-cache-size <bytes>", "--catalog-cache-days <days>"]

    static let all: [Surface] = [
        Surface(name: "template", options: ["-o, --output <file>"],
                refused: ["template", "extra"], message: "unexpected argument 'extra'"),
        Surface(name: "package", options: ["-o, --output <pack>", "--root <dir>", "--json"], arguments: ["<manifest>"],
                refused: ["package", "m.json"], message: "missing --output <pack>"),
        Surface(name: "inspect", options: ["--json"], arguments: ["<pack>"],
                refused: ["inspect"], message: "missing <pack>"),
        Surface(name: "install", options: ["--id <id>", "--background", "--json"] + container, arguments: ["<pack>"],
                refused: ["install", "a.zip", "b.zip"], message: "unexpected argument 'b.zip'"),
        Surface(name: "ls", options: ["--prefix <dir>", "--json"] + container, arguments: ["<pack-id>"],
                refused: ["ls", "--prefix"], message: "option '--prefix' needs a value"),
        Surface(name: "cat", options: ["--pack <id>", "--descriptor", "--daemon", "--standalone", "--no-check"] + container, arguments: ["<path>"],
                refused: ["cat", "--bogus", "a.txt"], message: "unknown option '--bogus'"),
        Surface(name: "rm", options: container, arguments: ["<pack-id>"],
                refused: ["rm", "p", "--lock-timeout", "soon"], message: "'--lock-timeout' needs a non-negative number, not 'soon'"),
        Surface(name: "verify", options: ["--deep", "--pack <id>", "--repair", "--dry-run", "--json"] + container,
                sections: ["EXIT STATUS"],
                refused: ["verify", "--deep=yes"], message: "option '--deep' takes no value", exitCode: 16),
        Surface(name: "limits", options: ["--member-size <bytes>", "--ratio <n>", "--ratio-exempt-size <bytes>",
                                          "--pack-size <bytes>", "--reset", "--json"] + container,
                refused: ["limits", "--ratio", "2K"], message: "'--ratio' needs a whole number, not '2K'"),
        Surface(name: "keygen", options: ["-o, --out <name>", "--json"],
                refused: ["keygen"], message: "missing --out <name>"),
        Surface(name: "publish", options: ["--to <dir>", "--sign <key>", "--base-url <url>", "--prune",
                                           "--expires <duration|time>", "--channel <name>", "--json"], arguments: ["<pack>"],
                refused: ["publish", "a.zip", "--expires", "soon", "--to", "d"],
                message: "'--expires' needs a duration (30m, 12h, 7d, 2w) or an RFC 3339 time, not 'soon'"),
        Surface(name: "verify-published", options: ["--key <pubkey>", "--json"], arguments: ["<dir>"],
                refused: ["verify-published"], message: "missing <dir>"),
        Surface(name: "serve", options: ["--bind <address>", "--port <n>", "--max-connections <n>", "--request-timeout <seconds>",
                                         "--idle-timeout <seconds>", "--throttle <bytes-per-second>", "--drop-after <bytes>",
                                         "--fail-rate <p>", "--stall-after <bytes>", "--ignore-range", "--fault-seed <n>",
                                         "--fault-path <glob>"], arguments: ["<dir>"],
                refused: ["serve", ".", "--fail-rate", "2"], message: "'--fail-rate' needs a number from 0 to 1"),
        Surface(name: "fetch", options: ["--catalog <url>", "--key <pubkey>", "--ca-file <file>", "--channel <name>", "--max-range-requests <n>"]
                    + deadlines + catalogCache + ["--json"] + container,
                arguments: ["<pack>"], refused: ["fetch"], message: "missing <pack>"),
        Surface(name: "sync", options: ["--catalog <url>", "--key <pubkey>", "--ca-file <file>", "--channel <name>", "--max-range-requests <n>"]
                    + deadlines + catalogCache
                    + ["--event <event>", "--json"] + container
                    + ["--max-rate <bytes>", "--max-concurrent <n>", "--max-load <load>", "--recheck-interval <seconds>", "--ignore-battery", "--background"],
                refused: ["sync", "--event", "boot"], message: "option '--event' must be one of"),
        Surface(name: "status", options: ["--watch", "--json"] + container, arguments: ["<pack>"],
                refused: ["status", "a", "b"], message: "unexpected argument 'b'"),
        Surface(name: "pause", options: ["--timeout <seconds>"] + container, arguments: ["<pack>"],
                refused: ["pause"], message: "missing <pack>"),
        Surface(name: "resume", options: ["--timeout <seconds>"] + container, arguments: ["<pack>"],
                refused: ["resume"], message: "missing <pack>"),
        Surface(name: "cancel", options: ["--timeout <seconds>"] + container, arguments: ["<pack>"],
                refused: ["cancel", "A", "--timeout", "x"], message: "'--timeout' needs a non-negative number"),
        Surface(name: "daemon", options: ["--socket-group <group>", "--allow-uid <user>", "--allow-gid <group>",
                                          "--first-request-timeout <seconds>", "--request-timeout <seconds>",
                                          "--idle-timeout <seconds>", "--max-connections <n>",
                                          "--max-connections-per-user <n>", "--memory-cache <bytes>",
                                          "--memory-budget <bytes>", "--max-downloads <n>"] + deadlines + catalogCache + container,
                refused: ["daemon", "--max-connections", "0"], message: "'--max-connections' needs a whole number of at least 1"),
        Surface(name: "sources", options: ["--key <pubkey>", "--channel <name>", "--ca-file <file>", "--json"] + container,
                arguments: ["<action>", "<url>"],
                refused: ["sources", "add", "http://127.0.0.1/catalog.json"],
                message: "add needs --key: an unsigned catalog is never a source for another user"),
        Surface(name: "demo", options: ["--keep", "--container <dir>"],
                refused: ["demo", "--keep", "--keep"], message: "option '--keep' given more than once"),
        Surface(name: "help", options: [], arguments: ["<subcommand>"],
                refused: ["help", "frobnicate"], message: "<subcommand> must be one of "),
        Surface(name: "completions", options: [], arguments: ["<shell>"],
                refused: ["completions", "ksh"], message: "<shell> must be one of bash, zsh, fish, not 'ksh'"),
        Surface(name: "manpage", options: [],
                refused: ["manpage", "extra"], message: "unexpected argument 'extra'"),
    ]
}

/// Help text split into its sections: a line at column 0 that starts with
/// capitals and a colon opens one.
struct HelpSections {
    let titles: [String]
    let bodies: [String: [String]]

    init(_ text: String) {
        var titles: [String] = []
        var bodies: [String: [String]] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let colon = line.firstIndex(of: ":"), line.first?.isUppercase == true,
               line[..<colon].allSatisfy({ $0.isUppercase || $0 == " " }) {
                let title = String(line[..<colon])
                titles.append(title)
                bodies[title] = [String(line[line.index(after: colon)...])]
            } else if let title = titles.last {
                bodies[title, default: []].append(line)
            }
        }
        self.titles = titles
        self.bodies = bodies
    }

    /// The labels of a section's entries: `-o, --output <pack>` from
    /// `  -o, --output <pack>     The pack file to write.`
    /// The entries end at the first blank line after them.
    func labels(_ title: String) -> [String] {
        var labels: [String] = []
        for line in (bodies[title] ?? []).dropFirst() {
            if line.isEmpty { if labels.isEmpty { continue } else { break } }
            guard line.hasPrefix("  "), line.dropFirst(2).first?.isWhitespace == false else { continue }
            let rest = line.dropFirst(2)
            labels.append(rest.range(of: "  ").map { String(rest[..<$0.lowerBound]) } ?? String(rest))
        }
        return labels
    }
}

@Suite struct CommandSurfaceTests {
    @Test func everySubcommandIsCovered() throws {
        let overview = try CLI.assetpack(["--help"])
        #expect(overview.status == 0)
        let listed = HelpSections(overview.out).labels("SUBCOMMANDS")
        #expect(listed == Surface.all.map(\.name))
    }

    @Test(arguments: Surface.all)
    func helpListsEveryDeclaredOption(_ surface: Surface) throws {
        let r = try CLI.assetpack([surface.name, "--help"])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        let help = HelpSections(r.out)
        let expected = ["OVERVIEW", "USAGE"] + (surface.arguments.isEmpty ? [] : ["ARGUMENTS"]) + ["OPTIONS"] + surface.sections
        #expect(help.titles == expected, "\(r.out)")
        #expect(help.labels("OPTIONS") == surface.options + ["-h, --help"], "\(r.out)")
        #expect(help.labels("ARGUMENTS") == surface.arguments)
        // USAGE names the command and every option (install's once lacked --json).
        let usage = (help.bodies["USAGE"] ?? []).joined(separator: " ")
        #expect(usage.hasPrefix(" assetpack \(surface.name)"))
        for name in surface.longNames { #expect(usage.contains("--\(name)"), "\(name) missing from \(usage)") }
        for argument in surface.arguments { #expect(usage.contains(argument)) }
        #expect(!usage.contains("--help"))
        // Nothing is wider than 80 columns.
        #expect(r.out.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(r.out)")
    }

    @Test(arguments: Surface.all)
    func helpAndDashHAndHelpSubcommandPrintTheSameText(_ surface: Surface) throws {
        let long = try CLI.assetpack([surface.name, "--help"])
        let short = try CLI.assetpack([surface.name, "-h"])
        let viaHelp = try CLI.assetpack(["help", surface.name])
        #expect(long.status == 0 && short.status == 0 && viaHelp.status == 0)
        #expect(short.out == long.out)
        #expect(viaHelp.out == long.out)
        // Help wins over everything else on the line.
        #expect(try CLI.assetpack(surface.refused + ["--help"]).out == long.out)
    }

    @Test(arguments: Surface.all)
    func usageErrorSaysWhatUsageAndWhereToLook(_ surface: Surface) throws {
        let s = TemporaryDirectory("usage-\(surface.name)")
        let r = try CLI.assetpack(surface.refused, container: s.path + "/absent")
        #expect(r.status == surface.exitCode, "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Error: \(surface.message)") == true, "\(r.stderr)")
        #expect(lines.dropFirst().first?.hasPrefix("Usage: assetpack \(surface.name)") == true, "\(r.stderr)")
        #expect(lines.last == "See 'assetpack \(surface.name) --help'.")
        // The usage line is the one help shows.
        let help = try CLI.assetpack(["help", surface.name]).out
        let usage = lines.dropFirst().dropLast().joined(separator: "\n")
        #expect(help.contains("USAGE" + usage.dropFirst("Usage".count)), "\(usage)")
        #expect(!FileManager.default.fileExists(atPath: s.path + "/absent"))
    }

    @Test func unknownSubcommandAndBadLeadingOptionsAreUsageErrors() throws {
        for (args, message) in [(["frobnicate"], "unknown subcommand 'frobnicate'"),
                                (["--bogus", "ls"], "unknown option '--bogus' before the subcommand"),
                                (["--container"], "option '--container' needs a value"),
                                (["--container", "/tmp/x"], "missing <subcommand>")] {
            let r = try CLI.assetpack(args)
            #expect(r.status == 64, "\(args)")
            let lines = r.stderr.split(separator: "\n").map(String.init)
            #expect(lines.first == "Error: \(message)", "\(r.stderr)")
            #expect(lines.dropFirst().first?.hasPrefix("Usage: assetpack [--container <dir>] [--group <id>] [--lock-timeout <seconds>]") == true)
            #expect(lines.last == "See 'assetpack --help'.")
        }
        // No arguments at all: the overview, on standard error.
        let bare = try CLI.assetpack([])
        #expect(bare.status == 64 && bare.stdout.isEmpty && bare.stderr.hasPrefix("OVERVIEW: "))
    }

    @Test func overviewHelpAndVersion() throws {
        let overview = try CLI.assetpack(["--help"])
        #expect(try CLI.assetpack(["-h"]).out == overview.out)
        #expect(try CLI.assetpack(["help"]).out == overview.out)
        let sections = HelpSections(overview.out)
        #expect(sections.titles == ["OVERVIEW", "USAGE", "OPTIONS", "SUBCOMMANDS"])
        #expect(sections.labels("OPTIONS") == ["--container <dir>", "--group <id>", "--lock-timeout <seconds>", "--version", "-h, --help"])
        #expect(overview.out.contains("'assetpack manpage"))
        let version = try CLI.assetpack(["--version"])
        #expect(version.status == 0 && version.out.hasPrefix("assetpack ") && version.out.split(separator: "\n").count == 1)
    }
}

import Foundation
import Testing
import TestSupport

/// Whether `program` is on PATH (zsh and fish may not be installed).
func onPath(_ program: String) -> Bool {
    (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/\(program)")
    }
}

@Suite struct CompletionsAndManPageTests {
    @Test func bashScriptLoadsAndRegisters() throws {
        let r = try Program.run("bash", ["-c", "source <(\"$0\" completions bash) && complete -p assetpack", CLI.binary])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        #expect(r.out == "complete -F _assetpack assetpack\n")
    }

    /// Runs the bash completion function on `words` (the last one being
    /// typed) in `directory`; returns what it offers.
    func bashComplete(_ words: [String], in directory: String) throws -> [String] {
        let script = """
            source <("$0" completions bash) || exit 9
            COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
            _assetpack
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try Program.run("bash", ["-c", script, CLI.binary, "assetpack"] + words, directory: directory)
        #expect(r.status == 0, "\(words): \(r.stderr)")
        return r.out.split(separator: "\n").map(String.init).sorted()
    }

    @Test func bashCompletesSubcommandsOptionsAndPaths() throws {
        let s = TemporaryDirectory("complete-bash")
        try s.write("pack.zip", "x")
        try s.write("dir/inner.txt", "x")
        let names = Surface.all.map(\.name)
        #expect(try bashComplete([""], in: s.path) == names.sorted())
        #expect(try bashComplete(["in"], in: s.path) == ["inspect", "install"])
        #expect(try bashComplete(["--container", "/tmp", "l"], in: s.path) == ["limits", "ls"])
        #expect(try bashComplete(["--gr"], in: s.path) == ["--group"])
        #expect(try bashComplete(["install", "--j"], in: s.path) == ["--json"])
        #expect(try bashComplete(["package", "-"], in: s.path).contains("-o"))
        #expect(try bashComplete(["install", "pa"], in: s.path) == ["pack.zip"])
        #expect(try bashComplete(["install", "--id", "x", "p"], in: s.path) == ["pack.zip"])
        #expect(try bashComplete(["ls", "--container", ""], in: s.path) == ["dir"])
        #expect(try bashComplete(["package", "-o", "p"], in: s.path) == ["pack.zip"])
        #expect(try bashComplete(["completions", ""], in: s.path) == ["bash", "fish", "zsh"])
        #expect(try bashComplete(["help", "ver"], in: s.path) == ["verify", "verify-published"])
        #expect(try bashComplete(["daemon", "--socket-group", "roo"], in: s.path).contains("root"))
        // A free value (a pack ID) gets no file names.
        #expect(try bashComplete(["install", "--id", ""], in: s.path) == [])
        // Every option of every subcommand is offered after a dash.
        for surface in Surface.all {
            let offered = try bashComplete([surface.name, "--"], in: s.path)
            #expect(offered == (surface.longNames + ["help"]).map { "--" + $0 }.sorted(), "\(surface.name)")
        }
    }

    @Test(arguments: ["zsh", "fish"])
    func zshAndFishScriptsNameEverySubcommandAndOption(_ shell: String) throws {
        let r = try CLI.assetpack(["completions", shell])
        #expect(r.status == 0 && !r.out.isEmpty)
        if shell == "zsh" { #expect(r.out.hasPrefix("#compdef assetpack\n")) }
        for surface in Surface.all {
            #expect(r.out.contains(shell == "zsh" ? "'\(surface.name):" : "-a \(surface.name) "), "\(surface.name)")
            for name in surface.longNames {
                let spelled = shell == "zsh" ? "--\(name)" : "-l \(name)"
                #expect(r.out.contains(spelled), "\(surface.name) \(name)")
            }
        }
        // When the shell is there, the script must at least parse.
        if onPath(shell) {
            let path = FileManager.default.temporaryDirectory.path + "/assetpack-completion-\(UUID().uuidString).\(shell)"
            try r.stdout.write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let check = try Program.run(shell, [shell == "zsh" ? "-n" : "--no-execute", path])
            #expect(check.status == 0, "\(check.stderr)")
        }
    }

    @Test func manPageHasItsSectionsEveryCommandAndEveryOption() throws {
        let r = try CLI.assetpack(["manpage"])
        #expect(r.status == 0)
        let page = r.out
        #expect(page.contains("\n.TH ASSETPACK 1 "))
        var headings: [String] = []
        for line in page.split(separator: "\n") where line.hasPrefix(".SH ") { headings.append(String(line.dropFirst(4))) }
        #expect(headings == ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "\"EXIT STATUS\"", "ENVIRONMENT", "SEE ALSO"])
        #expect(page.contains("\n.B ASSETPACKS_CONTAINER\n") && page.contains("\n.B XDG_DATA_HOME\n"))
        // verify's own exit codes are in EXIT STATUS.
        let exitStatus = page.components(separatedBy: ".SH \"EXIT STATUS\"").last?.components(separatedBy: ".SH ENVIRONMENT").first ?? ""
        for code in ["0", "1", "4", "8", "16", "64"] { #expect(exitStatus.contains("\n.B \(code)\n"), "exit \(code)") }
        // A subsection per command, each with its options (dashes escaped).
        let subsections = page.components(separatedBy: "\n.SS ").dropFirst()
        #expect(subsections.map { String($0.prefix { $0 != "\n" }) } == Surface.all.map(\.name))
        for (surface, text) in zip(Surface.all, subsections) {
            let body = text.components(separatedBy: "\n.SH ").first ?? ""
            for name in surface.longNames {
                let roff = "\\fB\\-\\-" + name.replacingOccurrences(of: "-", with: "\\-") + "\\fR"
                #expect(body.contains(roff), "\(surface.name): \(name)")
            }
        }
        // groff formats it without a warning.
        if onPath("groff") {
            let path = FileManager.default.temporaryDirectory.path + "/assetpack-\(UUID().uuidString).1"
            try r.stdout.write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let check = try Program.run("groff", ["-man", "-Tutf8", "-ww", "-z", path])
            #expect(check.status == 0 && check.stderr.isEmpty, "\(check.stderr)")
        }
    }
}

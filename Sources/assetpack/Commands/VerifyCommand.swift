import AssetPacks

/// `assetpack verify`: an fsck for the container.
enum VerifyCommand: Command {
    static let name = "verify"
    static let summary = "Check (and repair) the container's index and archives, like fsck."
    static let discussion = """
        Checks the index against the archives in packs/ and reports each finding with a stable code. \
        Like fsck's, the exit status says whether errors were found and whether all were corrected.
        """

    static let deep = Option.flag("deep", help: "Also check each archive's SHA-256 and every member's CRC-32.")
    static let pack = Option.value("pack", placeholder: "id",
                                   help: "Check only this pack; skips container-wide checks.", repeatable: true)
    static let repair = Option.flag("repair", help: """
        Fix what can be fixed without losing installed data: remove what dead writers left, rebuild the \
        path index, re-index packs from intact archives, quarantine damaged archives.
        """)
    static let dryRun = Option.flag("dry-run", help: "With --repair (or alone): say what repair would do; change nothing.")

    static let options = [deep, pack, repair, dryRun, CommonOptions.json] + CommonOptions.containerOptions
    static let sections = [
        HelpSection("EXIT STATUS", rows: [
            ("0", "No errors (reclaimable leftovers of interrupted work are reported, not errors)."),
            ("1", "Errors found and all corrected."),
            ("4", "Errors left uncorrected."),
            ("8", "Operational error."),
            ("16", "Usage error."),
        ]),
    ]
    static let usageExitCode: Int32 = 16

    static let corrected: Int32 = 1
    static let uncorrected: Int32 = 4
    static let operational: Int32 = 8

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        // Looking changes nothing: no container is made, no reader slot freed.
        let manager: AssetPackManager
        do { manager = try StoreOptions.manager(arguments, createsContainer: false, clearsStaleReaders: false) } catch {
            if case .failure(let message, _) = error { throw .failure(message, code: operational) }
            throw error
        }
        let dryRun = arguments.flag(Self.dryRun)
        let repair = arguments.flag(Self.repair) || dryRun
        let bar = ProgressBar.onTerminal()
        var options = Verification.Options(deep: arguments.flag(deep), packs: arguments.values(pack), repair: repair, dryRun: dryRun)
        options.progress = bar?.callback
        let report: Verification.Report
        do throws(AssetPackError) { report = try manager.verify(options) } catch {
            bar?.finish()
            throw .failure(error.message, code: operational)
        }
        bar?.finish()
        if arguments.flag(CommonOptions.json) {
            try Output.json(ReportJSON(report, container: manager.container.path, options: options))
        } else {
            printHuman(report, deep: options.deep, repaired: repair && !dryRun)
        }
        return exitStatus(report, repaired: repair && !dryRun)
    }

    static func exitStatus(_ report: Verification.Report, repaired: Bool) -> Int32 {
        guard report.hasErrors else { return ExitCode.success }
        guard repaired else { return uncorrected }
        return report.remaining.contains { $0.severity == .error } ? uncorrected : corrected
    }

    static func printHuman(_ report: Verification.Report, deep: Bool, repaired: Bool) {
        let byPack = Dictionary(grouping: report.findings) { $0.pack ?? "" }
        for pack in byPack.keys.sorted() {
            Output.line(pack.isEmpty ? "container:" : "\(pack):")
            for f in byPack[pack] ?? [] {
                Output.line("  \(f.severity.rawValue) \(f.code.rawValue): \(f.message)")
            }
        }
        for r in report.repairs {
            Output.line("\(r.done ? "repaired" : "would repair"): \(r.action)")
        }
        let errors = report.findings.filter { $0.severity == .error }.count
        let reclaimable = report.findings.filter { $0.severity == .reclaimable }.count
        var summary = "\(TextLayout.count(report.packsChecked, "pack")), \(TextLayout.count(report.membersChecked, "member")) checked"
        if deep { summary += ", \(TextLayout.count(report.bytesChecked, "byte")) hashed" }
        summary += ": " + (errors == 0 ? "no damage" : TextLayout.count(errors, "error"))
        if reclaimable > 0 { summary += ", \(reclaimable) reclaimable" }
        if repaired && errors > 0 {
            let left = report.remaining.filter { $0.severity == .error }.count
            summary += left == 0 ? ", all corrected" : ", \(left) left uncorrected"
        }
        Output.line(summary)
    }
}

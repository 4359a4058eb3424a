import AssetPacks

/// `assetpack verify`: an fsck for the container.
enum VerifyCommand: Command {
    static let name = "verify"
    static let summary = "Check (and repair) the container's index and archives, like fsck."
    static let usage = "verify [--deep] [--pack <id>]... [--repair] [--dry-run] [--json] [--container <dir>]"
    static let options = """
          --deep                  Also check each archive's SHA-256 and every member's CRC-32.
          --pack <id>             Check only this pack (repeatable); skips container-wide checks.
          --repair                Fix what can be fixed without losing installed data: remove
                                  what dead writers left, rebuild the path index, re-index packs
                                  from intact archives, quarantine damaged archives.
          --dry-run               With --repair (or alone): say what repair would do; change nothing.
          --json                  Print one JSON document.
        \(ContainerOptions.help)

        EXIT STATUS (as fsck):
          0  no errors (reclaimable leftovers of interrupted work are reported, not errors)
          1  errors found and all corrected
          4  errors left uncorrected
          8  operational error
          16 usage error
        """
    static let valueOptions = ContainerOptions.names.union(["pack"])
    static let flagOptions: Set<String> = ["deep", "json", "repair", "dry-run"]
    static let usageExitCode: Int32 = 16

    static let corrected: Int32 = 1
    static let uncorrected: Int32 = 4
    static let operational: Int32 = 8

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        _ = try arguments.expect([])
        var storeOptions = AssetStore.Options()
        storeOptions.createsContainer = false
        storeOptions.clearsStaleReaders = false
        let manager: AssetPackManager
        do { manager = try StoreOptions.manager(arguments, options: storeOptions) } catch {
            if case .failure(let message, _) = error { throw .failure(message, code: operational) }
            throw error
        }
        let dryRun = arguments.flag("dry-run")
        let repair = arguments.flag("repair") || dryRun
        let bar: ProgressBar? = Output.stderrIsTerminal ? ProgressBar(unit: arguments.flag("deep") ? "bytes" : "members") : nil
        var options = VerificationOptions(deep: arguments.flag("deep"), packs: arguments.values("pack"), repair: repair, dryRun: dryRun)
        if let bar { options.progress = { done, total in bar.update(done, total) } }
        let report: VerificationReport
        do throws(StoreError) { report = try manager.store.verify(options: options) } catch {
            bar?.finish()
            throw .failure(error.description, code: operational)
        }
        bar?.finish()
        if arguments.flag("json") {
            Output.json(json(report, container: manager.container.path, options: options))
        } else {
            printHuman(report, deep: options.deep, repaired: repair && !dryRun)
        }
        return exitStatus(report, repaired: repair && !dryRun)
    }

    static func exitStatus(_ report: VerificationReport, repaired: Bool) -> Int32 {
        guard report.hasErrors else { return ExitCode.success }
        guard repaired else { return uncorrected }
        return report.remaining.contains { $0.severity == .error } ? uncorrected : corrected
    }

    static func printHuman(_ report: VerificationReport, deep: Bool, repaired: Bool) {
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
        var summary = "\(report.packsChecked) packs, \(report.membersChecked) members checked"
        if deep { summary += ", \(report.bytesChecked) bytes hashed" }
        summary += ": " + (errors == 0 ? "no damage" : "\(errors) error\(errors == 1 ? "" : "s")")
        if reclaimable > 0 { summary += ", \(reclaimable) reclaimable" }
        if repaired && errors > 0 {
            let left = report.remaining.filter { $0.severity == .error }.count
            summary += left == 0 ? ", all corrected" : ", \(left) left uncorrected"
        }
        Output.line(summary)
    }

    static func json(_ report: VerificationReport, container: String, options: VerificationOptions) -> [String: Any] {
        func finding(_ f: VerificationReport.Finding) -> [String: Any] {
            var o: [String: Any] = ["code": f.code.rawValue, "severity": f.severity.rawValue, "message": f.message]
            if let p = f.pack { o["pack"] = p }
            if let x = f.object { o["object"] = x }
            return o
        }
        var object: [String: Any] = [
            "container": container, "deep": options.deep, "repair": options.repair, "dryRun": options.dryRun,
            "packsChecked": report.packsChecked, "membersChecked": report.membersChecked, "bytesChecked": report.bytesChecked,
            "findings": report.findings.map(finding),
            "repairs": report.repairs.map { r -> [String: Any] in
                var o: [String: Any] = ["codes": r.codes.map(\.rawValue), "action": r.action, "done": r.done]
                if let p = r.pack { o["pack"] = p }
                return o
            },
            "exitStatus": exitStatus(report, repaired: options.repair && !options.dryRun),
        ]
        if options.repair && !options.dryRun { object["remaining"] = report.remaining.map(finding) }
        return object
    }
}

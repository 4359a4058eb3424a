import AssetPacks

/// `assetpack verify`: checks a container, like fsck.
enum VerifyCommand: Command {
    static let name = "verify"
    static let summary = "Check the container's index and archives (fsck exit codes)."
    static let usage = "verify [--deep] [--pack <id>]... [--json] [--container <dir>]"
    static let options = """
          --deep                  Also check every member's CRC-32 and each archive's SHA-256.
          --pack <id>             Check only this pack (repeatable).
          --json                  Print one JSON document.
        \(ContainerOptions.help)

        EXIT STATUS:
          0 clean (reclaimable leftovers of interrupted work are reported, not errors),
          4 errors found, 8 operational error.
        """
    static let valueOptions = ContainerOptions.names.union(["pack"])
    static let flagOptions: Set<String> = ["deep", "json"]

    static let errorsLeft: Int32 = 4
    static let operationalError: Int32 = 8

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        _ = try arguments.expect([])
        let manager: AssetPackManager
        do { manager = try StoreOptions.manager(arguments) } catch {
            if case .failure(let message, _) = error { throw .failure(message, code: operationalError) }
            throw error
        }
        let report: VerificationReport
        do {
            report = try manager.store.verify(options: VerificationOptions(deep: arguments.flag("deep"), packs: arguments.values("pack")))
        } catch {
            throw .failure(error.description, code: operationalError)
        }
        if arguments.flag("json") {
            Output.json([
                "container": manager.container.path,
                "deep": arguments.flag("deep"),
                "packsChecked": report.packsChecked,
                "membersChecked": report.membersChecked,
                "bytesChecked": report.bytesChecked,
                "findings": report.findings.map { f -> [String: Any] in
                    var o: [String: Any] = ["code": f.code, "severity": f.severity.rawValue, "message": f.message]
                    if let p = f.pack { o["pack"] = p }
                    if let x = f.object { o["object"] = x }
                    return o
                },
            ] as [String: Any])
        } else {
            let byPack = Dictionary(grouping: report.findings) { $0.pack ?? "" }
            for pack in byPack.keys.sorted() {
                Output.line(pack.isEmpty ? "container:" : "\(pack):")
                for f in byPack[pack] ?? [] {
                    Output.line("  \(f.severity == .error ? "error" : "reclaimable") \(f.code): \(f.message)")
                }
            }
            let errors = report.findings.filter { $0.severity == .error }.count
            Output.line("\(report.packsChecked) packs, \(report.membersChecked) members checked\(arguments.flag("deep") ? ", \(report.bytesChecked) bytes read" : ""): " +
                        (errors == 0 ? "no damage" : "\(errors) error\(errors == 1 ? "" : "s")"))
        }
        return report.hasErrors ? errorsLeft : ExitCode.success
    }
}

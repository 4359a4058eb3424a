import AssetPacks

/// `assetpack inspect`: shows and checks a pack file.
enum InspectCommand: Command {
    static let name = "inspect"
    static let summary = "Check a pack file and list its manifest and members."
    static let discussion = """
        Reads the whole file: the ZIP structure, the sizes its deflated members declare (held to the default \
        limits, as 'assetpack limits' describes, before anything is inflated), every member's data and \
        CRC-32, and the manifest recorded in the archive comment. Lists each member's method, size, size in the archive and path.
        """

    static let pack = Positional("pack", help: "The pack file to check.", completion: .file)

    static let positionals = [pack]
    static let options = [CommonOptions.json]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let path = arguments.positional(pack)
        let bar = ProgressBar.onTerminal()
        let file: AssetPackFile
        do { file = try AssetPackFile.inspect(at: path, progress: bar?.callback) } catch {
            bar?.finish()
            throw .from(error)
        }
        bar?.finish()
        if arguments.flag(CommonOptions.json) {
            try Output.json(PackFileJSON(file))
            return ExitCode.success
        }
        if file.recordsManifest {
            let policy = file.downloadPolicy
            Output.line("asset pack \(file.id)")
            Output.line("  download policy: \(policy.name)" +
                        (policy.installationEventTypes.isEmpty ? "" : " (\(policy.installationEventTypes.map(\.rawValue).joined(separator: ", ")))"))
            Output.line("  platforms: \(file.platforms.isEmpty ? "all (none listed)" : file.platforms.map(\.rawValue).joined(separator: ", "))")
            if let version = file.version { Output.line("  version: \(version)") }
        } else {
            Output.line("ZIP archive without a recorded manifest (installs as on-demand pack '\(file.id)')")
        }
        Output.line("  sha256: \(file.sha256)")
        Output.line("  \(TextLayout.count(file.members.count, "file")), \(TextLayout.count(file.totalSize, "byte"))" +
                    " (\(file.size) in the archive)\(file.usesZip64 ? ", ZIP64" : "")")
        Output.line()
        var table = TextTable([.left, .right, .right, .left])
        for m in file.members {
            table.add([m.method.rawValue, "\(m.size)", "\(m.storedSize)", AssetMember.printable(m.path)])
        }
        table.lines.forEach { Output.line($0) }
        return ExitCode.success
    }
}

import AssetPacks
import AssetArchive
import AssetSystem

/// `assetpack inspect`: shows and checks a pack file.
enum InspectCommand: Command {
    static let name = "inspect"
    static let summary = "Check a pack file and list its manifest and members."
    static let discussion = """
        Reads the whole file: the ZIP structure, every member's data and CRC-32, and the manifest recorded \
        in the archive comment. Lists each member's method, size, size in the archive and path.
        """

    static let pack = Positional("pack", help: "The pack file to check.", completion: .file)

    static let positionals = [pack]
    static let options = [CommonOptions.json]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let path = arguments.positional(pack)
        let report: PackFile
        do { report = try PackFile.validate(path: path) } catch { throw .from(error) }
        if arguments.flag(CommonOptions.json) {
            try Output.json(PackFileJSON(report))
            return ExitCode.success
        }
        if let d = report.description {
            Output.line("asset pack \(d.id)")
            Output.line("  download policy: \(d.downloadPolicy.name)" +
                        (d.downloadPolicy.installationEventTypes.isEmpty ? "" : " (\(d.downloadPolicy.installationEventTypes.map(\.rawValue).joined(separator: ", ")))"))
            Output.line("  platforms: \(d.platforms.isEmpty ? "(none)" : d.platforms.map(\.rawValue).joined(separator: ", "))")
        } else {
            Output.line("ZIP archive without a recorded manifest (installs as on-demand pack '\(report.defaultID)')")
        }
        Output.line("  sha256: \(SHA256.hex(report.sha256))")
        Output.line("  \(TextLayout.count(report.archive.entries.count, "file")), \(TextLayout.count(report.totalSize, "byte"))" +
                    " (\(report.size) in the archive)\(report.archive.usesZip64 ? ", ZIP64" : "")")
        Output.line()
        var table = TextTable([.left, .right, .right, .left])
        for e in report.archive.entries {
            table.add([e.method == .stored ? "stored" : "deflated", "\(e.uncompressedSize)", "\(e.compressedSize)", e.path])
        }
        table.lines.forEach { Output.line($0) }
        return ExitCode.success
    }
}

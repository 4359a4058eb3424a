import AssetPacks
import AssetArchive
import AssetSystem

/// `assetpack inspect`: shows and checks a pack file.
enum InspectCommand: Command {
    static let name = "inspect"
    static let summary = "Check a pack file and list its manifest and members."
    static let usage = "inspect <pack> [--json]"
    static let options = """
          --json                  Print one JSON document.
        """
    static let flagOptions: Set<String> = ["json"]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let path = try arguments.expect(["<pack>"])[0]
        let report: PackFile
        do { report = try PackFile.validate(path: path) } catch { throw .from(error) }
        if arguments.flag("json") {
            Output.json(json(report))
            return ExitCode.success
        }
        if let d = report.description {
            Output.line("asset pack \(d.id)")
            Output.line("  download policy: \(d.downloadPolicy.name)" +
                        (d.downloadPolicy.installationEventTypes.isEmpty ? "" : " (\(d.downloadPolicy.installationEventTypes.map(\.rawValue).joined(separator: ", ")))"))
            Output.line("  platforms: \(d.platforms.map(\.rawValue).joined(separator: ", "))")
        } else {
            Output.line("ZIP archive without a recorded manifest (installs as on-demand pack '\(report.defaultID)')")
        }
        Output.line("  sha256: \(SHA256.hex(report.sha256))")
        Output.line("  \(report.archive.entries.count) files, \(report.totalSize) bytes (\(report.size) in the archive)\(report.archive.usesZip64 ? ", ZIP64" : "")")
        Output.line()
        for e in report.archive.entries {
            let method = e.method == .stored ? "stored  " : "deflated"
            Output.line("\(method) \(pad(e.uncompressedSize, 12)) \(pad(e.compressedSize, 12))  \(e.path)")
        }
        return ExitCode.success
    }

    static func json(_ report: PackFile) -> [String: Any] {
        var object: [String: Any] = [
            "path": report.path,
            "size": report.size,
            "sha256": SHA256.hex(report.sha256),
            "zip64": report.archive.usesZip64,
            "members": report.archive.entries.map { e -> [String: Any] in
                ["path": e.path, "method": e.method == .stored ? "stored" : "deflated",
                 "size": e.uncompressedSize, "storedSize": e.compressedSize,
                 "crc32": String(e.crc32, radix: 16), "dataOffset": e.dataOffset]
            },
        ]
        if let d = report.description {
            object["assetPackID"] = d.id
            object["downloadPolicy"] = d.downloadPolicy.name
            object["installationEventTypes"] = d.downloadPolicy.installationEventTypes.map(\.rawValue)
            object["platforms"] = d.platforms.map(\.rawValue)
        } else {
            object["assetPackID"] = report.defaultID
            object["recordedManifest"] = false
        }
        return object
    }

    private static func pad(_ n: UInt64, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(0, width - s.count)) + s
    }
}

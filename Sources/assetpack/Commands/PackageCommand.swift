import AssetPacks

/// `assetpack package`: builds a pack from a manifest.
enum PackageCommand: Command {
    static let name = "package"
    static let summary = "Package the files a manifest selects into a pack (a ZIP archive)."

    static let manifest = Positional("manifest", help: "The manifest (JSON with comments) that selects the files.", completion: .file)
    static let output = Option.value("output", short: "o", placeholder: "pack", help: "The pack file to write.",
                                     required: true, completion: .file)
    static let root = Option.value("root", placeholder: "dir",
                                   help: "Resolve file selectors against <dir> (default: the manifest's directory).",
                                   completion: .directory)

    static let positionals = [manifest]
    static let options = [output, root, CommonOptions.json]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let manifest = arguments.positional(Self.manifest)
        let output = arguments.requiredValue(Self.output)
        let bar = ProgressBar.onTerminal()
        let pack: AssetPackFile
        do { pack = try Packager.package(manifestAt: manifest, root: arguments.value(root), output: output, progress: bar?.callback) } catch {
            bar?.finish()
            throw .from(error)
        }
        bar?.finish()
        if arguments.flag(CommonOptions.json) {
            try Output.json(InspectCommand.PackFileJSON(pack))
            return ExitCode.success
        }
        let deflated = pack.members.filter { $0.method == .deflated }.count
        Output.error("packaged \(TextLayout.count(pack.members.count, "file")) (\(TextLayout.count(pack.totalSize, "byte")), \(deflated) deflated) into \(output)")
        return ExitCode.success
    }
}

import AssetPacks

/// `assetpack package`: builds a pack from a manifest.
enum PackageCommand: Command {
    static let name = "package"
    static let summary = "Package the files a manifest selects into a pack (a ZIP archive)."
    static let usage = "package <manifest> -o <pack> [--root <dir>]"
    static let options = """
          -o, --output <pack>     The pack file to write.
          --root <dir>            Resolve file selectors against <dir> (default: the
                                  manifest's directory).
        """
    static let valueOptions: Set<String> = ["output", "o", "root"]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let manifest = try arguments.expect(["<manifest>"])[0]
        guard let output = arguments.value("output") ?? arguments.value("o") else {
            throw .usage("missing -o <pack>")
        }
        do {
            let archive = try Packager.package(manifestAt: manifest, root: arguments.value("root"), output: output)
            let size = archive.entries.reduce(UInt64(0)) { $0 + $1.uncompressedSize }
            let deflated = archive.entries.filter { $0.method == .deflated }.count
            Output.error("packaged \(archive.entries.count) files (\(size) bytes, \(deflated) deflated) into \(output)")
            return ExitCode.success
        } catch {
            throw .from(error)
        }
    }
}

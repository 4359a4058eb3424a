import Foundation
import AssetPacks

/// `assetpack template`: prints a manifest to start from.
enum TemplateCommand: Command {
    static let name = "template"
    static let summary = "Print a manifest template (JSON with comments)."
    static let usage = "template [-o <file>]"
    static let options = """
          -o, --output <file>     Write the template to <file> (refuses to overwrite).
        """
    static let valueOptions: Set<String> = ["output", "o"]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        _ = try arguments.expect([])
        guard let output = arguments.value("output") ?? arguments.value("o") else {
            Output.line(AssetPackManifest.template.trimmingCharacters(in: .newlines))
            return ExitCode.success
        }
        guard !FileManager.default.fileExists(atPath: output) else {
            throw .failure("\(output) already exists")
        }
        guard FileManager.default.createFile(atPath: output, contents: Data(AssetPackManifest.template.utf8)) else {
            throw .failure("cannot write \(output)")
        }
        return ExitCode.success
    }
}

import Foundation
import AssetPacks

/// `assetpack template`: prints a manifest to start from.
enum TemplateCommand: Command {
    static let name = "template"
    static let summary = "Print a manifest template (JSON with comments)."

    static let output = Option.value("output", short: "o", placeholder: "file",
                                     help: "Write the template to <file> (refuses to overwrite).", completion: .file)

    static let options = [output]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        guard let output = arguments.value(Self.output) else {
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

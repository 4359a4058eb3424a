import Foundation
import AssetPacks

/// `assetpack install`: installs a local pack file.
enum InstallCommand: Command {
    static let name = "install"
    static let summary = "Install a pack file into the container (replacing an older version)."

    static let pack = Positional("pack", help: "The pack file to install.", completion: .file)
    static let id = Option.value(
        "id", placeholder: "id",
        help: "The pack ID for a plain ZIP without a recorded manifest (default: the file name without its extension).")

    static let background = Option.flag(
        "background",
        help: "Install at nice 19, giving way to every other program (for updates nobody waits on).")

    static let positionals = [pack]
    static let options = [id, background, CommonOptions.json] + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let path = arguments.positional(pack)
        let manager = try StoreOptions.manager(arguments)
        let priority: AssetPackManager.WorkPriority = arguments.flag(background) ? .background : .normal
        let bar = ProgressBar.onTerminal()
        defer { bar?.finish() }
        do {
            // A URL is refused by the library unless it is file: (downloads
            // are not this command's); a plain path is a file.
            if path.contains("://"), let url = URL(string: path), !url.isFileURL {
                _ = try manager.install(packAt: url, id: arguments.value(id), priority: priority)
            }
            let local = path.hasPrefix("file://") ? (URL(string: path)?.path ?? path) : path
            let outcome = try manager.installPack(at: local, id: arguments.value(id), priority: priority, progress: bar?.callback)
            bar?.finish()
            if arguments.flag(CommonOptions.json) {
                try Output.json(ListCommand.PackJSON(outcome.pack, change: outcome.change.rawValue))
            } else {
                let verb: String
                switch outcome.change {
                case .installed: verb = "installed"
                case .replaced: verb = "updated"
                case .unchanged: verb = "already installed (identical)"
                }
                Output.error("\(outcome.pack.id) \(verb): version \(outcome.pack.version), \(TextLayout.count(outcome.pack.memberCount, "file"))")
            }
            return ExitCode.success
        } catch let error as AssetPackError {
            throw .from(error)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(error)")
        }
    }
}

import Foundation
import AssetPacks

/// `assetpack ls`: lists installed packs, or one pack's members.
enum ListCommand: Command {
    static let name = "ls"
    static let summary = "List installed packs, or the members of one pack."

    static let packID = Positional("pack-id", help: "List the members of this pack instead of the packs.", optional: true)
    static let prefix = Option.value("prefix", placeholder: "dir", help: "Only members below this directory (with a pack ID).")

    static let positionals = [packID]
    static let options = [prefix, CommonOptions.json] + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let json = arguments.flag(CommonOptions.json)
        let manager = try StoreOptions.manager(arguments, createsContainer: false)
        do {
            if let id = arguments.optionalPositional(packID) {
                let members = try manager.members(inAssetPackWithID: id, under: arguments.value(prefix))
                if json {
                    try Output.json(members.map(MemberJSON.init))
                } else {
                    var table = TextTable([.left, .right, .left])
                    for m in members { table.add([m.method.rawValue, "\(m.size)", AssetMember.printable(m.path)]) }
                    table.lines.forEach { Output.line($0) }
                }
            } else {
                guard arguments.value(prefix) == nil else { throw CLIError.usage("--prefix needs a pack ID") }
                let packs = try manager.allAssetPacks()
                if json {
                    try Output.json(packs.map { PackJSON($0) })
                } else {
                    // ID, version, policy, then counts whose numbers and units line up.
                    var table = TextTable([.left, .left, .left, .right, .left, .right, .left], gaps: [2, 2, 2, 1, 2, 1])
                    for p in packs {
                        table.add([p.id, p.version, p.downloadPolicy.name]
                                  + TextTable.counted(p.memberCount, "file") + TextTable.counted(p.totalSize, "byte"))
                    }
                    table.lines.forEach { Output.line($0) }
                }
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

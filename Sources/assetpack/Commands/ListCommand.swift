import Foundation
import AssetPacks

/// `assetpack ls`: lists installed packs, or one pack's members.
enum ListCommand: Command {
    static let name = "ls"
    static let summary = "List installed packs, or the members of one pack."
    static let usage = "ls [<pack-id>] [--prefix <dir>] [--json] [--container <dir>]"
    static let options = """
          --prefix <dir>          Only members below this directory (with a pack ID).
          --json                  Print JSON.
        \(ContainerOptions.help)
        """
    static let valueOptions = ContainerOptions.names.union(["prefix"])
    static let flagOptions: Set<String> = ["json"]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let args = try arguments.expect(["<pack-id>"], optional: 1)
        let manager = try StoreOptions.manager(arguments)
        do {
            if let id = args.first {
                let members = try manager.members(inAssetPackWithID: id, under: arguments.value("prefix"))
                if arguments.flag("json") {
                    Output.json(members.map { ["path": $0.path, "size": $0.size, "storedSize": $0.storedSize,
                                               "method": $0.isCompressed ? "deflated" : "stored"] as [String: Any] })
                } else {
                    for m in members {
                        Output.line("\(m.isCompressed ? "deflated" : "stored  ") \(pad(m.size)) \(m.path)")
                    }
                }
            } else {
                guard arguments.value("prefix") == nil else { throw CLIError.usage("--prefix needs a pack ID") }
                let packs = try manager.allAssetPacks()
                if arguments.flag("json") {
                    Output.json(packs.map(json))
                } else {
                    for p in packs {
                        Output.line("\(p.id)\t\(p.version)\t\(p.downloadPolicy.name)\t\(p.memberCount) files\t\(p.totalSize) bytes")
                    }
                }
            }
            return ExitCode.success
        } catch let error as StoreError {
            throw .from(error)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(error)")
        }
    }

    static func json(_ p: AssetPack) -> [String: Any] {
        [
            "id": p.id, "version": p.version, "downloadPolicy": p.downloadPolicy.name,
            "installationEventTypes": p.downloadPolicy.installationEventTypes.map(\.rawValue),
            "platforms": p.platforms.map(\.rawValue), "memberCount": p.memberCount,
            "totalSize": p.totalSize, "archiveSize": p.archiveSize, "sha256": p.sha256,
            "installDate": ISO8601DateFormatter().string(from: p.installDate),
        ]
    }

    private static func pad(_ n: UInt64) -> String {
        let s = String(n)
        return String(repeating: " ", count: max(0, 12 - s.count)) + s
    }
}

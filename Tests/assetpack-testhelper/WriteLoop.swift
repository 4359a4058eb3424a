import Foundation
import AssetIndex
import AssetStore

/// A writer process for the stress test: installs versions of the stress
/// pack one after another, and every other round removes it, until the time
/// is up. Two of these run at once, starting at different versions.
enum WriteLoop {
    static func run(_ options: Options) throws -> [String: Any] {
        let id = options.string("id")
        let dir = options.string("dir")
        let versions = options.int("versions")
        let deadline = Date().addingTimeInterval(options.double("seconds", default: 3))
        let store = try AssetStore(container: GroupContainer(path: options.string("container")), options: options.storeOptions())
        var counts: [String: Int] = [:]
        var errors: [String] = []
        var step = options.int("start", default: 0)
        while Date() < deadline && errors.count < 20 {
            let round = step / (versions + 1)
            let slot = step % (versions + 1)
            step += 1
            do throws(StoreError) {
                if slot == versions {
                    guard round % 2 == 1 else { continue }
                    try store.remove(pack: id)
                    counts["removed", default: 0] += 1
                } else {
                    let result = try store.install(packAt: dir + "/v\(slot + 1).zip")
                    counts[result.change.rawValue, default: 0] += 1
                }
            } catch .assetPackNotFound {
                counts["removeFoundNothing", default: 0] += 1
            } catch {
                errors.append("\(error)")
            }
        }
        return ["counts": counts, "errors": errors]
    }
}

/// Opens the container's index, starts a read transaction, says `ready` on
/// standard output, and waits to be killed: a reader that dies holding a
/// snapshot, whose slot in the reader table the next process to open the
/// index must clear.
enum HoldSnapshot {
    static func run(_ options: Options) throws {
        let environment = try Environment(path: GroupContainer(path: options.string("container")).indexPath, databases: [])
        try environment.read { (_) throws(Never) in
            FileHandle.standardOutput.write(Data("ready \(getpid())\n".utf8))
            while true { pause() }
        }
    }
}

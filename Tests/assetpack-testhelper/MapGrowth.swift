import Foundation
import AssetIndex
import AssetSystem

/// Two processes and one index whose map grows: the case where a writable
/// map (`MDB_WRITEMAP`) could lose a writer's pages to another process's
/// open.
///
///     grow-map --dir D --helper PATH
///         Opens (creating) an environment in D with a 4 MiB map and commits
///         a record, so that the file records 4 MiB. Then begins a write that
///         reserves 64 MiB: the map, and so the file, grow before it begins,
///         but no commit records it yet. Inside the write it runs
///         `PATH open-map --dir D`, waits for it, then writes a 32 MiB value,
///         whose pages lie past 4 MiB, commits, and reads it back.
///         Reports the file's length before the other process opened, after
///         it, and whether the value read back is the one written.
///     open-map --dir D
///         Opens the environment with a 4 MiB map, reads the record, exits.
enum MapGrowth {
    static let small = 4 << 20
    static let bigValue = 32 << 20

    static func environment(_ dir: String) throws -> Environment {
        var options = Environment.Options()
        options.mapSize = small
        return try Environment(path: dir, databases: [("values", .plain)], options: options)
    }

    static func length(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    static func grow(_ options: Options) throws -> [String: Any] {
        let dir = options.string("dir")
        let env = try environment(dir)
        let values = env.database("values")
        try env.write { (txn) throws(LMDBError) in try txn.put(values, key: "small", value: Array("kept".utf8)) }
        let data = dir + "/data.mdb"
        var before = 0
        var after = 0
        var helperStatus: Int32 = -1
        let pattern = (0..<bigValue).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        try env.write(reserving: 64 << 20) { (txn) throws(LMDBError) in
            before = length(data)
            let child = Process()
            child.executableURL = URL(fileURLWithPath: options.string("helper"))
            child.arguments = ["open-map", "--dir", dir]
            do { try child.run() } catch { throw LMDBError(ECHILD, operation: "run open-map: \(error)", path: dir) }
            child.waitUntilExit()
            helperStatus = child.terminationStatus
            after = length(data)
            try txn.put(values, key: "big", value: pattern)
        }
        let intact = try env.read { (txn) throws(LMDBError) in
            try txn.get(values, key: "big").map { Array($0) == pattern } ?? false
        }
        return ["before": before, "after": after, "helperStatus": Int(helperStatus), "intact": intact]
    }

    static func open(_ options: Options) throws -> [String: Any] {
        let env = try environment(options.string("dir"))
        let values = env.database("values")
        let kept = try env.read { (txn) throws(LMDBError) in try txn.get(values, key: "small").map { Array($0) } }
        return ["kept": kept == Array("kept".utf8)]
    }
}

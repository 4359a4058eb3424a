import Foundation

/// A fresh directory under the system's temporary directory, removed at deinit.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "assetsystem") {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String, contents: [UInt8]) -> String {
        let p = path + "/" + name
        _ = FileManager.default.createFile(atPath: p, contents: Data(contents))
        return p
    }
}

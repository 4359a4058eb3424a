import Foundation

/// A fresh directory under the system's temporary directory, made with
/// `mkdtemp` and removed with everything in it when the value goes away.
package final class TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    package let path: String

    /// Makes `<tmp>/<label>-XXXXXX`.
    package init(_ label: String = "assetpacks-tests") {
        var template = Array((FileManager.default.temporaryDirectory.path + "/\(label)-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed for '\(label)': errno \(errno)")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `relative` inside the directory; nothing is created.
    package func file(_ relative: String) -> String { path + "/" + relative }

    /// Creates the subdirectory `relative` (and its parents) and returns its path.
    @discardableResult
    package func directory(_ relative: String) -> String {
        let full = file(relative)
        do {
            try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        } catch {
            preconditionFailure("cannot create \(full): \(error)")
        }
        return full
    }

    /// Writes `bytes` to `relative`, creating its parent directories, and
    /// returns the file's path.
    @discardableResult
    package func write(_ relative: String, _ bytes: [UInt8]) throws -> String {
        let full = file(relative)
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        return full
    }

    /// Writes `text` as UTF-8 to `relative`, as the bytes overload does.
    @discardableResult
    package func write(_ relative: String, _ text: String) throws -> String {
        try write(relative, Array(text.utf8))
    }

    /// The bytes of the file `relative`.
    package func read(_ relative: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: file(relative))))
    }
}

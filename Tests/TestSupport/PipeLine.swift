import Foundation

extension Pipe {
    /// What the process writing to this pipe prints up to its first newline
    /// (a server's port), or all it printed when it ends first.
    package func firstLine() -> String {
        var line = ""
        while !line.hasSuffix("\n") {
            let chunk = fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += String(decoding: chunk, as: UTF8.self)
        }
        return line
    }
}

import Foundation

/// Every entry under the group container at `path` except its index and
/// locks, with its size (-1 when it cannot be read): to show that a refused
/// operation changed nothing.
package func containerFiles(_ path: String) -> [String: Int] {
    var result: [String: Int] = [:]
    guard let entries = FileManager.default.enumerator(atPath: path) else { return [:] }
    while let name = entries.nextObject() as? String {
        if name.hasPrefix("index/") || name.hasPrefix("locks/") { continue }
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
        result[name] = (attributes?[.size] as? Int) ?? -1
    }
    return result
}

import AssetIndex
import Foundation

/// A fresh directory under the system's temporary directory, removed with
/// everything in it when the value goes away.
final class Scratch: Sendable {
    let path: String

    init() {
        var template = Array((NSTemporaryDirectory() + "assetindex-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A new subdirectory of the scratch directory.
    func directory(_ name: String) -> String {
        let sub = path + "/" + name
        try! FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        return sub
    }
}

/// The databases most tests declare.
let standardDatabases: [(name: String, flags: Environment.DatabaseFlags)] = [
    ("packs", .plain), ("members", .plain), ("paths", .duplicateSorted),
]

/// An 8-byte big-endian key, so that numeric order is byte order.
func key(_ n: Int) -> [UInt8] {
    var w = ByteWriter(capacity: 8)
    w.u64BigEndian(UInt64(n))
    return w.bytes
}

/// A value of `count` bytes derived from `seed`: its first bytes are the
/// seed, the rest one byte of it repeated (cheap to make in debug builds).
func value(_ seed: Int, count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: seed &* 31), count: count)
    for i in 0..<min(8, count) { bytes[i] = UInt8(truncatingIfNeeded: seed >> (8 * i)) }
    return bytes
}

/// Runs `body(0..<count)` on `count` new threads at once and waits for all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

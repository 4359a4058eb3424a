import AssetIndex
import Foundation

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

/// One contender's operation on item `item` of a scenario's data set: obtain
/// (and, in the consuming scenarios, use) one member's bytes.
///
/// `run` returns a value derived from what it obtained (a length, a sum), so
/// the optimizer cannot remove the work.
protocol Operation {
    mutating func run(_ item: Int) throws -> Int
}

/// A named contender: an ``Operation`` behind closures that run its timing
/// loops. The loops are generic functions specialized for the concrete
/// operation, so a contender's per-operation cost carries no dynamic dispatch.
final class Contender {
    let name: String
    /// How many bytes item `i` delivers, for bytes/s; `nil` when not a throughput contender.
    let itemBytes: [Int]?
    let timeUntimedPass: (UnsafeBufferPointer<Int32>) throws -> UInt64
    let timeBatches: (UnsafeBufferPointer<Int32>, Int, inout Histogram) throws -> Void

    init<Op: Operation>(_ name: String, bytes: [Int]? = nil, _ op: Op) {
        self.name = name
        self.itemBytes = bytes
        let box = Box(op)
        timeUntimedPass = { order in try Contender.pass(&box.value, order) }
        timeBatches = { order, batch, histogram in try Contender.batches(&box.value, order, batch: batch, into: &histogram) }
    }

    private final class Box<T> {
        var value: T
        init(_ value: T) { self.value = value }
    }

    /// Runs every item of `order` between two clock reads; returns the
    /// elapsed nanoseconds.
    @inline(__always)
    static func pass<Op: Operation>(_ op: inout Op, _ order: UnsafeBufferPointer<Int32>) throws -> UInt64 {
        var sink = 0
        let start = Clock.now()
        for item in order { sink &+= try op.run(Int(item)) }
        let end = Clock.now()
        blackHole(sink)
        return end &- start
    }

    /// Times `order` in consecutive batches of `batch` operations, two clock
    /// reads around each batch, and records each batch's per-operation time
    /// (elapsed minus the clock's own cost, divided by `batch`) `batch` times.
    @inline(__always)
    /// Returns the longest batch's time in nanoseconds, undivided (an
    /// upper bound of its slowest operation).
    @discardableResult
    static func batches<Op: Operation>(
        _ op: inout Op, _ order: UnsafeBufferPointer<Int32>, batch: Int, into histogram: inout Histogram
    ) throws -> UInt64 {
        var sink = 0
        var k = 0
        var longest: UInt64 = 0
        let overhead = Clock.overhead
        while k + batch <= order.count {
            let start = Clock.now()
            for j in k ..< k + batch { sink &+= try op.run(Int(order[j])) }
            let end = Clock.now()
            histogram.record((Double(end &- start) - overhead) / Double(batch), count: batch)
            longest = max(longest, end &- start)
            k += batch
        }
        blackHole(sink)
        return longest
    }
}

/// Contenders whose operation is a whole pass (an install, a verify of a
/// container) that takes far longer than a clock read: each round runs every
/// contender once, in an order that rotates from round to round.
enum Passes {
    /// Runs each contender `rounds` times; a contender returns the seconds
    /// its timed part took (setup and cleanup stay outside). Returns the
    /// seconds per contender, in the contenders' order.
    static func run(_ contenders: [(name: String, pass: () throws -> Double)], rounds: Int) throws -> [[Double]] {
        var seconds = [[Double]](repeating: [], count: contenders.count)
        for round in 0 ..< rounds {
            for k in 0 ..< contenders.count {
                let i = (k + round) % contenders.count
                seconds[i].append(try contenders[i].pass())
            }
        }
        return seconds
    }

    /// Measurements from pass times: a pass does `units` operations over
    /// `bytes` bytes; ops/s and bytes/s come from the median pass, p50/p99
    /// from the time per operation over all passes.
    static func measurements(names: [String], seconds: [[Double]], units: Int, bytes: Double) -> [Measurement] {
        names.indices.map { i in
            var h = Histogram()
            for s in seconds[i] { h.record(s * 1e9 / Double(units), count: units) }
            let typical = median(seconds[i])
            return Measurement(contender: names[i], opsPerSecond: Double(units) / typical, histogram: h,
                               batch: units, bytesPerSecond: bytes / typical)
        }
    }
}

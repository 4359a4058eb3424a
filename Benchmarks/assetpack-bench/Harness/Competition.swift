/// How long and how often to measure the contenders of one scenario.
struct Plan {
    /// Rounds; every contender runs once per round, in an order that rotates
    /// each round, so slow drift on the machine spreads over all of them.
    var rounds: Int
    /// The target length of one pass.
    var passSeconds: Double
    var minOpsPerPass = 5
    var maxOpsPerPass = 1_000_000
    /// Items run once before measuring; `nil` runs every item once.
    var warmUpItems: Int?
    /// When set (`--only`), only these contenders run, for profiling one of them.
    var only: Set<String>?
}

/// What was measured for one contender.
struct Measurement {
    var contender: String
    /// The median over rounds of operations per second in untimed passes.
    var opsPerSecond: Double
    /// Per-operation latencies from the timed passes.
    var histogram: Histogram
    /// Operations per timed batch (1: every operation timed on its own).
    var batch: Int
    var bytesPerSecond: Double?

    var p50: Double { histogram.percentile(0.50) }
    var p99: Double { histogram.percentile(0.99) }
}

/// Runs contenders against the same items in the same random order.
///
/// Per contender: a warm-up pass over every item (shuffled) also estimates
/// the cost of one operation, which sets the pass length (about
/// ``Plan/passSeconds``) and the batch size. Then, per round and contender:
///
/// - a throughput pass: `n` operations between two clock reads, giving
///   operations per second with no timing inside the loop;
/// - a latency pass over `n` other items, timed in batches of `B`
///   operations. `B` is 1 (every operation timed alone) unless the
///   operation costs less than ten clock reads, in which case `B` is the
///   smallest count that makes a batch cost ten clock reads. The clock's
///   own cost (``Clock/overhead``) is subtracted from every batch. For
///   `B = 1` the percentiles are those of single operations; for `B > 1`
///   they are percentiles of `B`-operation means, which match per-operation
///   percentiles for the median and understate a rare tail by up to `B`×.
///
/// Operations slower than 50 µs skip the throughput pass: timing each
/// costs nothing measurable, so one timed pass gives both figures.
enum Competition {
    static func run(_ all: [Contender], items: Int, plan: Plan, seed: UInt64) throws -> [Measurement] {
        let contenders = all.filter { plan.only?.contains($0.name) ?? true }
        guard !contenders.isEmpty else { return [] }
        precondition(items > 0)
        var shapes: [(n: Int, batch: Int, slow: Bool)] = []
        for c in contenders {
            var rng = SplitMix64(seed: seed ^ 0x5741_524D)
            var warm = Array(0 ..< Int32(items))
            warm.shuffle(using: &rng)
            if let cap = plan.warmUpItems { warm = Array(warm.prefix(max(1, cap))) }
            let elapsed = try warm.withUnsafeBufferPointer { try c.timeUntimedPass($0) }
            let mean = max(1, Double(elapsed) / Double(warm.count))
            let n = min(plan.maxOpsPerPass, max(plan.minOpsPerPass, Int(plan.passSeconds * 1e9 / mean)))
            let batch = batch(forMean: mean)
            shapes.append((n - n % batch + batch, batch, mean >= 50_000))
        }
        let longest = shapes.map(\.n).max()!
        var histograms = [Histogram](repeating: Histogram(), count: contenders.count)
        var rates = [[Double]](repeating: [], count: contenders.count)
        var byteRates = [[Double]](repeating: [], count: contenders.count)
        for round in 0 ..< plan.rounds {
            let order = randomOrder(count: 2 * longest, items: items, seed: seed &+ UInt64(round) &* 7919)
            for k in 0 ..< contenders.count {
                let i = (k + round) % contenders.count
                let c = contenders[i]
                let (n, batch, slow) = shapes[i]
                try order.withUnsafeBufferPointer { all in
                    let first = UnsafeBufferPointer(rebasing: all[0 ..< n])
                    let second = UnsafeBufferPointer(rebasing: all[longest ..< longest + n])
                    if slow {
                        var h = Histogram()
                        let start = Clock.now()
                        try c.timeBatches(first, 1, &h)
                        let elapsed = Double(Clock.now() &- start)
                        histograms[i].merge(h)
                        rates[i].append(Double(n) / (elapsed / 1e9))
                        if let bytes = c.itemBytes {
                            byteRates[i].append(Double(first.reduce(0) { $0 + bytes[Int($1)] }) / (elapsed / 1e9))
                        }
                        return
                    }
                    let elapsed = Double(try c.timeUntimedPass(first)) / 1e9
                    rates[i].append(Double(n) / elapsed)
                    if let bytes = c.itemBytes {
                        byteRates[i].append(Double(first.reduce(0) { $0 + bytes[Int($1)] }) / elapsed)
                    }
                    try c.timeBatches(second, batch, &histograms[i])
                }
            }
        }
        return contenders.indices.map { i in
            Measurement(contender: contenders[i].name, opsPerSecond: median(rates[i]), histogram: histograms[i],
                        batch: shapes[i].batch, bytesPerSecond: byteRates[i].isEmpty ? nil : median(byteRates[i]))
        }
    }
}

extension Competition {
    /// Operations per timed batch for an operation of `mean` nanoseconds:
    /// 1, unless it costs less than ten clock reads; then the fewest that cost ten.
    static func batch(forMean mean: Double) -> Int {
        mean >= 10 * Clock.overhead ? 1 : Int((10 * Clock.overhead / mean).rounded(.up))
    }
}

/// The median of `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// A log-linear latency histogram in nanoseconds: exact below 128 ns, then
/// 128 buckets per power of two (at most 0.8 % relative error). Histograms
/// merge exactly, so worker processes send theirs and the parent combines them.
struct Histogram: Sendable, Codable {
    private static let subBits = 7
    private static let sub = 1 << subBits
    private static let bucketCount = (64 - subBits + 1) * sub

    private(set) var counts: [UInt64]
    private(set) var total: UInt64 = 0

    init() { counts = [UInt64](repeating: 0, count: Histogram.bucketCount) }

    private static func bucket(_ value: UInt64) -> Int {
        if value < UInt64(sub) { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount
        let shift = exponent - subBits
        return (shift + 1) * sub + Int((value >> UInt64(shift)) & UInt64(sub - 1))
    }

    /// The middle of the range of values a bucket holds.
    private static func value(ofBucket index: Int) -> Double {
        if index < sub { return Double(index) }
        let shift = index / sub - 1
        let mantissa = UInt64(sub + index % sub)
        let low = mantissa << UInt64(shift)
        return Double(low) + Double((UInt64(1) << UInt64(shift)) - 1) / 2
    }

    /// Records `count` operations that each took `nanoseconds`.
    mutating func record(_ nanoseconds: Double, count: Int = 1) {
        let v = nanoseconds <= 0 ? 0 : UInt64(min(nanoseconds.rounded(), 1.8e19))
        counts[Histogram.bucket(v)] &+= UInt64(count)
        total &+= UInt64(count)
    }

    mutating func merge(_ other: Histogram) {
        for i in 0..<counts.count { counts[i] &+= other.counts[i] }
        total &+= other.total
    }

    /// The value below which `fraction` of the recorded operations fall
    /// (nearest rank); 0 when empty.
    func percentile(_ fraction: Double) -> Double {
        guard total > 0 else { return 0 }
        let rank = max(1, UInt64((fraction * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += c
            if seen >= rank { return Histogram.value(ofBucket: i) }
        }
        return 0
    }

    /// The histogram with only its non-empty buckets, for sending between
    /// processes, and back.
    var sparse: [[UInt64]] { counts.enumerated().compactMap { $0.element > 0 ? [UInt64($0.offset), $0.element] : nil } }

    init(sparse: [[UInt64]]) {
        self.init()
        for pair in sparse where pair.count == 2 && Int(pair[0]) < counts.count {
            counts[Int(pair[0])] += pair[1]
            total += pair[1]
        }
    }
}

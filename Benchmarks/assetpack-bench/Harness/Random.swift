/// SplitMix64: a small, fast, fixed-seed generator, so every run generates
/// the same data and the same access order.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    @inline(__always)
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (bound > 0), by multiply-shift.
    @inline(__always)
    mutating func below(_ bound: Int) -> Int {
        Int((UInt64(bound).multipliedFullWidth(by: next())).high)
    }

    /// A value in `range`.
    @inline(__always)
    mutating func within(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.count)
    }
}

/// `count` indices drawn uniformly from `0..<items`, for one pass.
func randomOrder(count: Int, items: Int, seed: UInt64) -> [Int32] {
    var rng = SplitMix64(seed: seed)
    return (0..<count).map { _ in Int32(rng.below(items)) }
}

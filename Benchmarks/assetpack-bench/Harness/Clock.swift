#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time in nanoseconds (`clock_gettime(CLOCK_MONOTONIC)`, a vDSO
/// call on Linux), and what reading it costs.
enum Clock {
    /// Nanoseconds since an arbitrary fixed point.
    @inline(__always)
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// The cost of an empty timed interval (two back-to-back reads), in
    /// nanoseconds: the median of many, subtracted from every timed batch.
    static let overhead: Double = {
        var samples: [UInt64] = []
        samples.reserveCapacity(20_000)
        for _ in 0..<20_000 {
            let t0 = now()
            let t1 = now()
            samples.append(t1 &- t0)
        }
        samples.sort()
        return Double(samples[samples.count / 2])
    }()

    /// Seconds since an arbitrary fixed point.
    static var seconds: Double { Double(now()) / 1e9 }
}

/// Keeps `value` alive as far as the optimizer can tell, so the work that
/// produced it is not removed.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Deterministic pseudo-random bytes (xorshift64 from `seed | 1`):
/// incompressible, and the same for the same seed in every run.
package func noise(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed | 1
    var bytes = [UInt8](repeating: 0, count: count)
    for i in 0..<count {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        bytes[i] = UInt8(truncatingIfNeeded: state)
    }
    return bytes
}

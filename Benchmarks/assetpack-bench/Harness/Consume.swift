/// Sums the bytes at `base` (each as an unsigned integer, wrapping): the one
/// consumer every contender runs in the `-consume` scenarios, so the only
/// difference between contenders is how the bytes reached memory.
///
/// Eight bytes at a time into four 16-bit lanes (128 words fit before a
/// lane could overflow), which the compiler vectorizes: it runs at memory
/// bandwidth, not at one byte per cycle.
@inline(never)
func sumBytes(_ base: UnsafeRawPointer?, _ count: Int) -> UInt64 {
    guard let base, count > 0 else { return 0 }
    let mask: UInt64 = 0x00FF_00FF_00FF_00FF
    let words = count / 8
    var total: UInt64 = 0
    var i = 0
    while i < words {
        let end = min(words, i + 128)
        var lanes: UInt64 = 0
        while i < end {
            let w = base.loadUnaligned(fromByteOffset: i &* 8, as: UInt64.self)
            lanes &+= (w & mask) &+ ((w >> 8) & mask)
            i &+= 1
        }
        total &+= (lanes & 0xFFFF) &+ ((lanes >> 16) & 0xFFFF) &+ ((lanes >> 32) & 0xFFFF) &+ (lanes >> 48)
    }
    var j = words &* 8
    while j < count {
        total &+= UInt64(base.load(fromByteOffset: j, as: UInt8.self))
        j &+= 1
    }
    return total
}

/// ``sumBytes(_:_:)`` of a buffer.
@inline(__always)
func sumBytes(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    sumBytes(bytes.baseAddress, bytes.count)
}

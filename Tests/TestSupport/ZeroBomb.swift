import Foundation

/// Decompression bombs, written by hand: plain ZIP archives whose members
/// are raw deflate of nothing but zero bytes, at deflate's ceiling of 1,032
/// to 1 (two bits per 258 bytes). Nothing the size of a member is ever
/// allocated or computed over: a 2 GiB member is about 2 MB of deflate, and
/// its CRC-32 comes from polynomial arithmetic, so a bomb is made in
/// milliseconds and is valid through and through — it inflates to exactly
/// its declared size with the right CRC-32.
package enum ZeroBomb {
    /// A ZIP archive (no comment, no ZIP64) with one deflated member of
    /// `size` zero bytes per entry of `members`, in order.
    package static func archive(_ members: [(path: String, size: UInt64)]) -> [UInt8] {
        var out: [UInt8] = []
        var central: [UInt8] = []
        for member in members {
            precondition(member.size < UInt64(UInt32.max), "ZeroBomb writes no ZIP64")
            let data = deflatedZeros(member.size)
            let crc = crc32OfZeros(member.size)
            let name = Array(member.path.utf8)
            let offset = UInt32(out.count)
            func common(_ bytes: inout [UInt8]) {
                bytes.le16(20); bytes.le16(0); bytes.le16(8)  // version needed, flags, method: deflate
                bytes.le16(0); bytes.le16(0x21)                // 00:00, 1980-01-01
                bytes.le32(crc); bytes.le32(UInt32(data.count)); bytes.le32(UInt32(member.size))
                bytes.le16(UInt16(name.count)); bytes.le16(0)  // name length, extra length
            }
            out.le32(0x0403_4b50)
            common(&out)
            out += name
            out += data
            central.le32(0x0201_4b50)
            central.le16(3 << 8 | 20)                          // made by Unix
            common(&central)
            central.le16(0); central.le16(0); central.le16(0)  // comment, disk, internal attributes
            central.le32(0o100644 << 16)
            central.le32(offset)
            central += name
        }
        let directoryOffset = UInt32(out.count)
        out += central
        out.le32(0x0605_4b50)
        out.le16(0); out.le16(0)
        out.le16(UInt16(members.count)); out.le16(UInt16(members.count))
        out.le32(UInt32(central.count)); out.le32(directoryOffset)
        out.le16(0)
        return out
    }

    /// Writes ``archive(_:)`` to `path` and returns `path`.
    @discardableResult
    package static func write(_ members: [(path: String, size: UInt64)], to path: String) throws -> String {
        try Data(archive(members)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Raw deflate of `count` zero bytes (at least 1): one dynamic-Huffman
    /// block whose length-258 code and distance-1 code are one bit each, so
    /// that after a literal zero every 258 bytes cost two zero bits.
    package static func deflatedZeros(_ count: UInt64) -> [UInt8] {
        precondition(count >= 1)
        var bits = BitWriter()
        bits.put(1, 1); bits.put(2, 2)           // final block, dynamic Huffman
        bits.put(286 - 257, 5)                   // HLIT: codes 0...285
        bits.put(2 - 1, 5)                       // HDIST: distance codes 0 and 1
        bits.put(18 - 4, 4)                      // HCLEN: 18 code-length code lengths
        // Code-length code lengths in the order RFC 1951 sends them: 18 has
        // one bit (code 0), 1 and 2 have two (codes 10 and 11).
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1]
        for symbol in order { bits.put(symbol == 18 ? 1 : symbol == 1 || symbol == 2 ? 2 : 0, 3) }
        // Literal/length lengths: 0 → 2, 1...255 → 0, 256 → 2, 257...284 → 0,
        // 285 → 1; distance lengths: 0 → 1, 1 → 1.
        bits.code(0b11, 2)                                   // length 2 (literal 0)
        bits.code(0, 1); bits.put(138 - 11, 7)               // 138 zero lengths
        bits.code(0, 1); bits.put(117 - 11, 7)               // 117 more: 1...255
        bits.code(0b11, 2)                                   // length 2 (end of block)
        bits.code(0, 1); bits.put(28 - 11, 7)                // 257...284
        bits.code(0b10, 2); bits.code(0b10, 2); bits.code(0b10, 2)  // 285, distances 0 and 1
        // Literal/length codes: 285 → 0, literal 0 → 10, end of block → 11.
        bits.code(0b10, 2)                                   // one literal zero
        let matches = (count - 1) / 258
        bits.zeros(matches * 2)                              // length 258, distance 1, each
        for _ in 0 ..< (count - 1) % 258 { bits.code(0b10, 2) }
        bits.code(0b11, 2)
        return bits.finish()
    }

    /// The CRC-32 (ISO-HDLC, as ZIP uses) of `count` zero bytes: the
    /// register's start value times x^(8·count) modulo the polynomial, as
    /// zlib's `crc32_combine` computes it.
    package static func crc32OfZeros(_ count: UInt64) -> UInt32 {
        var power: UInt32 = 1 << 30                          // x^1, reflected
        var table: [UInt32] = []
        for _ in 0..<64 { table.append(power); power = multiply(power, power) }
        var p: UInt32 = 1 << 31                              // x^0
        var n = count
        var k = 3                                            // x^(8n) = x^(n·2^3)
        while n != 0 {
            if n & 1 != 0 { p = multiply(table[k & 63], p) }
            n >>= 1
            k += 1
        }
        return ~multiply(p, 0xFFFF_FFFF)
    }

    /// a·b modulo the CRC-32 polynomial, bit-reflected.
    private static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var m: UInt32 = 1 << 31
        var product: UInt32 = 0
        var b = b
        while true {
            if a & m != 0 {
                product ^= b
                if a & (m - 1) == 0 { break }
            }
            m >>= 1
            b = b & 1 != 0 ? (b >> 1) ^ 0xEDB8_8320 : b >> 1
        }
        return product
    }

    /// Bits in deflate's order: values from the least significant bit,
    /// Huffman codes from the most.
    private struct BitWriter {
        var bytes: [UInt8] = []
        var buffer: UInt64 = 0
        var count = 0

        mutating func put(_ value: UInt64, _ width: Int) {
            buffer |= value << UInt64(count)
            count += width
            while count >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                count -= 8
            }
        }

        mutating func code(_ code: UInt64, _ width: Int) {
            var reversed: UInt64 = 0
            for i in 0..<width where code & (1 << UInt64(i)) != 0 { reversed |= 1 << UInt64(width - 1 - i) }
            put(reversed, width)
        }

        mutating func zeros(_ n: UInt64) {
            var n = n
            while n > 0 && count != 0 { put(0, 1); n -= 1 }
            bytes += [UInt8](repeating: 0, count: Int(n / 8))
            put(0, Int(n % 8))
        }

        mutating func finish() -> [UInt8] {
            if count > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
            return bytes
        }
    }
}

private extension [UInt8] {
    mutating func le16(_ v: UInt16) { append(UInt8(v & 0xff)); append(UInt8(v >> 8)) }
    mutating func le32(_ v: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) } }
}

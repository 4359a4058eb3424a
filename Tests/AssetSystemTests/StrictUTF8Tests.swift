import Testing
import AssetSystem
import TestSupport

@Suite struct StrictUTF8Tests {
    private func strict(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { String(strictUTF8: $0) }
    }

    private func standard(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// Valid text, ASCII (past the eight-byte steps and in the tail) and
    /// not, comes back as the same string.
    @Test func validBytesGiveTheirString() {
        for text in ["", "a", "packs/level-1/texture.png", "0123456789abcdef0", "é", "naïve/файл/路径/🎮.bin", "\u{FFFD}", "a\u{0}b"] {
            #expect(strict(Array(text.utf8)) == text)
        }
    }

    /// Each kind of ill-formed sequence is refused, at the start, in the
    /// middle and at the end of ASCII around it.
    @Test func illFormedBytesAreRefused() {
        let bad: [[UInt8]] = [
            [0x80],                    // a lone continuation byte
            [0xC3],                    // a lead byte cut short
            [0xC0, 0xAF],              // an overlong '/'
            [0xE0, 0x80, 0xAF],        // an overlong three-byte '/'
            [0xED, 0xA0, 0x80],        // a surrogate (U+D800)
            [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
            [0xFF], [0xFE],
            [0xEF, 0xBF],              // U+FFFD's bytes cut short
        ]
        for b in bad {
            for wrapped in [b, Array("abcdefghij".utf8) + b, b + Array("abcdefghij".utf8), Array("ab".utf8) + b + Array("cd".utf8)] {
                #expect(strict(wrapped) == nil, "\(wrapped)")
                #expect(standard(wrapped) == nil, "\(wrapped)")
            }
        }
    }

    /// On random bytes (mostly ASCII, with multi-byte and stray bytes mixed
    /// in) it agrees with the standard library's validating initializer.
    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var rng = SplitMix64(seed: 0x5EED_0F_07F8)
        let pieces: [[UInt8]] = [[0x61], [0x2F], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x8E, 0xAE], [0x80], [0xC3], [0xED, 0xA0, 0x80], [0xFF], [0xEF, 0xBF, 0xBD]]
        var refused = 0
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(rng.next() % 24) {
                let r = rng.next() % 100
                bytes += r < 70 ? [UInt8(0x20 + rng.next() % 0x5F)] : pieces[Int(rng.next() % UInt64(pieces.count))]
            }
            let expected = standard(bytes)
            #expect(strict(bytes) == expected, "\(bytes)")
            if expected == nil { refused += 1 }
        }
        #expect(refused > 1000, "the random inputs should include many invalid ones")
    }
}

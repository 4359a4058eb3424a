import AssetArchive
import Testing
import TestSupport

@Suite struct ChecksumTests {
    @Test func crc32KnownValues() {
        #expect(CRC32.of([]) == 0)
        #expect(CRC32.of(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.of(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
    }

    @Test func crc32Continues() {
        let bytes = Array("123456789".utf8)
        let first = bytes[..<4].withUnsafeBytes { CRC32.checksum($0) }
        let whole = bytes[4...].withUnsafeBytes { CRC32.checksum($0, continuing: first) }
        #expect(whole == 0xCBF4_3926)
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func sha256KnownValues(input: String, digest: String) {
        let bytes = Array(input.utf8)
        #expect(SHA256.hex(bytes.withUnsafeBytes { SHA256.hash($0) }) == digest)
    }

    @Test func sha256StreamsLikeOneShot() {
        let bytes = noise(100_003)
        var hasher = SHA256()
        var offset = 0
        for size in [1, 63, 64, 65, 4096, 30_000] {
            bytes[offset ..< offset + size].withUnsafeBytes { hasher.update($0) }
            offset += size
        }
        bytes[offset...].withUnsafeBytes { hasher.update($0) }
        #expect(hasher.finalize() == bytes.withUnsafeBytes { SHA256.hash($0) })
    }
}

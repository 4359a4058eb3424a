import AssetIndex
import Testing
import TestSupport

@Suite struct ByteCodecTests {
    /// A record like the store's pack record.
    func record() -> ByteWriter {
        var w = ByteWriter()
        w.u8(7)
        w.u16(0xBEEF)
        w.u32(0xDEAD_BEEF)
        w.u64(0x0123_4567_89AB_CDEF)
        w.i64(-42)
        w.u64BigEndian(1)
        w.string("pack-π.zip")
        w.lengthPrefixed([9, 8, 7])
        w.bytes([1, 2, 3, 4])
        return w
    }

    @Test func roundTrip() {
        let w = record()
        w.bytes.withUnsafeBytes { bytes in
            var r = ByteReader(bytes)
            #expect(r.u8() == 7)
            #expect(r.u16() == 0xBEEF)
            #expect(r.u32() == 0xDEAD_BEEF)
            #expect(r.u64() == 0x0123_4567_89AB_CDEF)
            #expect(r.i64() == -42)
            #expect(r.u64BigEndian() == 1)
            #expect(r.string() == "pack-π.zip")
            #expect(r.lengthPrefixed().map(Array.init) == [9, 8, 7])
            #expect(r.remaining == 4)
            #expect(r.array(count: 4) == [1, 2, 3, 4])
            #expect(r.isAtEnd)
            #expect(r.u8() == nil)
        }
    }

    @Test func layoutIsLittleEndianWithU32Lengths() {
        var w = ByteWriter()
        w.u32(1)
        w.u16(0x0102)
        w.string("ab")
        w.u64BigEndian(0x0102)
        #expect(w.bytes == [1, 0, 0, 0, 2, 1, 2, 0, 0, 0, 97, 98, 0, 0, 0, 0, 0, 0, 1, 2])
    }

    /// Every truncation of a record decodes to `nil` somewhere, never
    /// crashes, and a failed read consumes nothing.
    @Test func truncatedInputIsNilNotACrash() {
        let full = record().bytes
        for length in 0..<full.count {
            full.withUnsafeBytes { all in
                var r = ByteReader(UnsafeRawBufferPointer(rebasing: all[..<length]))
                var complete = true
                let before = r.offset
                if r.u8() == nil || r.u16() == nil || r.u32() == nil || r.u64() == nil || r.i64() == nil
                    || r.u64BigEndian() == nil || r.string() == nil || r.lengthPrefixed() == nil || r.bytes(count: 4) == nil {
                    complete = false
                }
                #expect(!complete, "length \(length)")
                #expect(r.offset >= before && r.offset <= length)
            }
        }
    }

    @Test func failedReadsConsumeNothing() {
        var w = ByteWriter()
        w.u32(100)          // a length far beyond the input
        w.bytes([1, 2])
        w.bytes.withUnsafeBytes { bytes in
            var r = ByteReader(bytes)
            #expect(r.string() == nil)
            #expect(r.offset == 0)
            #expect(r.lengthPrefixed() == nil)
            #expect(r.offset == 0)
            #expect(r.bytes(count: -1) == nil)
            #expect(r.u64() == nil)
            #expect(r.offset == 0)
            #expect(r.u32() == 100)
        }
    }

    @Test func invalidUTF8IsNil() {
        var w = ByteWriter()
        w.lengthPrefixed([0xFF, 0xFE])
        w.bytes.withUnsafeBytes { bytes in
            var r = ByteReader(bytes)
            #expect(r.string() == nil)
            #expect(r.offset == 0)
        }
        [0xC3, 0x28].withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var r = ByteReader(bytes)
            #expect(r.remainingString() == nil)
        }
        Array("pack\u{0}path".utf8).withUnsafeBytes { bytes in
            var r = ByteReader(bytes)
            #expect(r.remainingString() == "pack\u{0}path")
        }
    }

    @Test func writerOutputServesAsKeyAndValue() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
        let members = env.database("members")
        var k = ByteWriter()
        k.rawString("game")
        k.u8(0)
        k.rawString("textures/a.png")
        try env.write { txn in try txn.put(members, key: k, value: record()) }
        let decoded = try env.read { txn -> String? in
            guard let bytes = try txn.get(members, key: k) else { return nil }
            var r = ByteReader(bytes)
            _ = r.bytes(count: 1 + 2 + 4 + 8 + 8 + 8)
            return r.string()
        }
        #expect(decoded == "pack-π.zip")
    }
}

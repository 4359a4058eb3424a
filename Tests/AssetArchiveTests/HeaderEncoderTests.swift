@testable import AssetArchive
import Testing

/// The writer's ZIP64 encoding, checked field by field: members of 4 GiB
/// and more are too large to write in a test, so the header bytes are
/// examined directly.
@Suite struct HeaderEncoderTests {
    private static let gib: UInt64 = 1 << 30

    private func member(size: UInt64, compressed: UInt64, offset: UInt64, zip64Local: Bool) -> WrittenMember {
        WrittenMember(name: Array("big.bin".utf8), method: .deflated, crc32: 0xDEAD_BEEF, compressedSize: compressed,
                      uncompressedSize: size, localHeaderOffset: offset, zip64Local: zip64Local)
    }

    private func u64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0 ..< 8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    @Test func centralRecordDefersOnlyLargeValuesInAPPNOTEOrder() {
        var record: [UInt8] = []
        HeaderEncoder.appendCentralRecord(member(size: 5 * Self.gib, compressed: 100, offset: 6 * Self.gib, zip64Local: true), to: &record)
        #expect(record.u32(20) == 100)                 // compressed size fits
        #expect(record.u32(24) == 0xFFFF_FFFF)         // uncompressed size deferred
        #expect(record.u32(42) == 0xFFFF_FFFF)         // offset deferred
        #expect(record.u16(6) == 45)
        let extra = 46 + 7
        #expect(record.u16(30) == 20)
        #expect(record.u16(extra) == 1 && record.u16(extra + 2) == 16)
        #expect(u64(record, extra + 4) == 5 * Self.gib)
        #expect(u64(record, extra + 12) == 6 * Self.gib)

        var small: [UInt8] = []
        HeaderEncoder.appendCentralRecord(member(size: 10, compressed: 12, offset: 0xFFFF_FFFF, zip64Local: false), to: &small)
        #expect(small.u16(30) == 12)
        #expect(u64(small, 46 + 7 + 4) == 0xFFFF_FFFF, "a value equal to the placeholder is deferred too")
    }

    @Test func localHeaderCarriesBothSizes() {
        let header = HeaderEncoder.localHeader(member(size: 5 * Self.gib, compressed: 4 * Self.gib + 1, offset: 0, zip64Local: true),
                                               alignment: nil, padding: 0)
        #expect(header.u32(18) == 0xFFFF_FFFF && header.u32(22) == 0xFFFF_FFFF)
        #expect(header.u16(28) == 20)
        #expect(u64(header, 30 + 7 + 4) == 5 * Self.gib)
        #expect(u64(header, 30 + 7 + 12) == 4 * Self.gib + 1)
    }

    @Test func endRecordsGoZip64ForLargeOffsets() {
        let plain = HeaderEncoder.endRecords(count: 3, offset: 1000, size: 100, comment: [])
        #expect(plain.count == 22)
        let wide = HeaderEncoder.endRecords(count: 3, offset: 5 * Self.gib, size: 100, comment: [7])
        #expect(wide.count == 56 + 20 + 22 + 1)
        #expect(wide.u32(0) == 0x0606_4b50 && wide.u32(56) == 0x0706_4b50)
        #expect(u64(wide, 48) == 5 * Self.gib)
        #expect(u64(wide, 56 + 8) == 5 * Self.gib + 100, "the locator points just past the central directory")
        let end = 76
        #expect(wide.u16(end + 10) == 3)
        #expect(wide.u32(end + 16) == 0xFFFF_FFFF)
    }

    @Test func zipalignPaddingField() {
        let stored = WrittenMember(name: Array("a.png".utf8), method: .stored, crc32: 0, compressedSize: 10,
                                   uncompressedSize: 10, localHeaderOffset: 100, zip64Local: false)
        let padding = HeaderEncoder.padding(offset: 100, nameCount: 5, zip64: false, alignment: 16)
        let header = HeaderEncoder.localHeader(stored, alignment: 16, padding: padding)
        #expect((100 + header.count) % 16 == 0)
        #expect(header.u16(35) == 0xD935 && header.u16(37) == UInt16(2 + padding) && header.u16(39) == 16)
    }
}

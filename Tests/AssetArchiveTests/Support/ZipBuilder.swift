@testable import AssetArchive

/// Builds ZIP archives byte by byte, with every field open to a lie, for
/// tests that feed the reader bad input.
struct ZipBuilder {
    /// How a member's data descriptor is written (flag bit 3 is set).
    struct Descriptor {
        var signed = true
        var wide = false
        /// A CRC-32 that differs from the central record's.
        var crc: UInt32?
    }

    /// Values a local header may hold that differ from the central record.
    struct LocalOverrides {
        var name: [UInt8]?
        var method: UInt16?
        var flags: UInt16?
        var crc: UInt32?
        var compressedSize: UInt32?
        var uncompressedSize: UInt32?
    }

    struct Member {
        var name: [UInt8]
        /// The uncompressed bytes.
        var content: [UInt8]
        var method: UInt16 = 0
        /// The bytes written as data; by default `content`, deflated for method 8.
        var data: [UInt8]?
        var flags: UInt16 = 0
        var versionMadeBy: UInt16 = 3 << 8 | 30
        var externalAttributes: UInt32 = 0o100644 << 16
        var crc: UInt32?
        var compressedSize: UInt64?
        var uncompressedSize: UInt64?
        var localHeaderOffset: UInt64?
        /// Added to the real local header offset in the central record.
        var localHeaderShift: Int = 0
        var local = LocalOverrides()
        /// Bytes written after the member (a gap).
        var gapAfter: [UInt8] = []
        /// Replaces the central record's extra field.
        var centralExtra: [UInt8]?
        var descriptor: Descriptor?
        /// Sizes and offset go to ZIP64 extra fields (local and central).
        var zip64 = false

        init(_ name: String, _ content: [UInt8] = Array("hello".utf8), method: UInt16 = 0) {
            self.name = Array(name.utf8)
            self.content = content
            self.method = method
        }

        init(rawName: [UInt8], _ content: [UInt8] = []) {
            self.name = rawName
            self.content = content
        }
    }

    var members: [Member] = []
    var comment: [UInt8] = []
    var prefix: [UInt8] = []
    /// Central records to write, as member indices (a repeat points two
    /// records at one local header); by default each member once.
    var centralOrder: [Int]?
    var entryCount: UInt64?
    var directoryOffset: UInt64?
    var directorySize: UInt64?
    var diskNumber: UInt16 = 0
    /// Write ZIP64 end records.
    var zip64End = false

    init(_ members: [Member] = []) { self.members = members }

    func build() -> [UInt8] {
        var out = prefix
        var offsets: [UInt64] = []
        var datas: [[UInt8]] = []
        for member in members {
            offsets.append(UInt64(out.count))
            let data = member.data ?? (member.method == 8 ? Deflate.raw(member.content) : member.content)
            datas.append(data)
            let crc = member.crc ?? CRC32.of(member.content)
            let csize = member.compressedSize ?? UInt64(data.count)
            let usize = member.uncompressedSize ?? UInt64(member.content.count)
            let streamed = member.descriptor != nil
            let name = member.local.name ?? member.name
            var extra: [UInt8] = []
            if member.zip64 {
                extra.append16(1); extra.append16(16)
                extra.append64(streamed ? 0 : usize); extra.append64(streamed ? 0 : csize)
            }
            out.append32(0x0403_4b50)
            out.append16(member.zip64 ? 45 : 20)
            out.append16(member.local.flags ?? (member.flags | (streamed ? 8 : 0)))
            out.append16(member.local.method ?? member.method)
            out.append16(0); out.append16(0x21)
            out.append32(member.local.crc ?? (streamed ? 0 : crc))
            out.append32(member.local.compressedSize ?? (member.zip64 ? 0xFFFF_FFFF : streamed ? 0 : UInt32(truncatingIfNeeded: csize)))
            out.append32(member.local.uncompressedSize ?? (member.zip64 ? 0xFFFF_FFFF : streamed ? 0 : UInt32(truncatingIfNeeded: usize)))
            out.append16(UInt16(name.count)); out.append16(UInt16(extra.count))
            out += name + extra + data
            if let d = member.descriptor {
                if d.signed { out.append32(0x0807_4b50) }
                out.append32(d.crc ?? crc)
                if d.wide { out.append64(csize); out.append64(usize) } else {
                    out.append32(UInt32(truncatingIfNeeded: csize)); out.append32(UInt32(truncatingIfNeeded: usize))
                }
            }
            out += member.gapAfter
        }
        let cdStart = UInt64(out.count)
        var count: UInt64 = 0
        for index in centralOrder ?? Array(members.indices) {
            let member = members[index]
            let crc = member.crc ?? CRC32.of(member.content)
            let csize = member.compressedSize ?? UInt64(datas[index].count)
            let usize = member.uncompressedSize ?? UInt64(member.content.count)
            let lho = member.localHeaderOffset ?? UInt64(Int(offsets[index]) + member.localHeaderShift)
            var extra: [UInt8] = []
            if member.zip64 {
                extra.append16(1); extra.append16(24)
                extra.append64(usize); extra.append64(csize); extra.append64(lho)
            }
            if let replacement = member.centralExtra { extra = replacement }
            out.append32(0x0201_4b50)
            out.append16(member.versionMadeBy)
            out.append16(member.zip64 ? 45 : 20)
            out.append16(member.flags | (member.descriptor != nil ? 8 : 0))
            out.append16(member.method)
            out.append16(0); out.append16(0x21)
            out.append32(crc)
            out.append32(member.zip64 ? 0xFFFF_FFFF : UInt32(truncatingIfNeeded: csize))
            out.append32(member.zip64 ? 0xFFFF_FFFF : UInt32(truncatingIfNeeded: usize))
            out.append16(UInt16(member.name.count)); out.append16(UInt16(extra.count)); out.append16(0)
            out.append16(0); out.append16(0)
            out.append32(member.externalAttributes)
            out.append32(member.zip64 ? 0xFFFF_FFFF : UInt32(truncatingIfNeeded: lho))
            out += member.name + extra
            count += 1
        }
        let cdSize = UInt64(out.count) - cdStart
        let declaredCount = entryCount ?? count
        let declaredOffset = directoryOffset ?? cdStart
        let declaredSize = directorySize ?? cdSize
        if zip64End {
            let record = UInt64(out.count)
            out.append32(0x0606_4b50); out.append64(44); out.append16(0x031E); out.append16(45)
            out.append32(0); out.append32(0)
            out.append64(declaredCount); out.append64(declaredCount); out.append64(declaredSize); out.append64(declaredOffset)
            out.append32(0x0706_4b50); out.append32(0); out.append64(record); out.append32(1)
        }
        out.append32(0x0605_4b50)
        out.append16(diskNumber); out.append16(diskNumber)
        let count16 = zip64End ? 0xFFFF : UInt16(truncatingIfNeeded: declaredCount)
        out.append16(count16); out.append16(count16)
        out.append32(zip64End ? 0xFFFF_FFFF : UInt32(truncatingIfNeeded: declaredSize))
        out.append32(zip64End ? 0xFFFF_FFFF : UInt32(truncatingIfNeeded: declaredOffset))
        out.append16(UInt16(comment.count))
        out += comment
        return out
    }
}

extension CRC32 {
    static func of(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { checksum($0) } }
}

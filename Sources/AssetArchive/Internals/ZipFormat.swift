/// Record signatures, fixed sizes and flag bits of the ZIP format
/// (PKWARE APPNOTE 6.3), in one place.
enum ZipFormat {
    static let localHeaderSignature: UInt32 = 0x0403_4b50
    static let centralHeaderSignature: UInt32 = 0x0201_4b50
    static let endRecordSignature: UInt32 = 0x0605_4b50
    static let zip64EndRecordSignature: UInt32 = 0x0606_4b50
    static let zip64LocatorSignature: UInt32 = 0x0706_4b50
    static let dataDescriptorSignature: UInt32 = 0x0807_4b50

    static let localHeaderSize = 30
    static let centralHeaderSize = 46
    static let endRecordSize = 22
    static let zip64EndRecordSize = 56
    static let zip64LocatorSize = 20
    /// The end record plus the longest comment: how far from the end its
    /// signature can be.
    static let endRecordSearchSpan = 22 + 0xFFFF

    /// Extra-field ID of the ZIP64 extended information.
    static let zip64ExtraID: UInt16 = 0x0001
    /// The Info-ZIP Unicode Path extra field (APPNOTE 4.6.9).
    static let unicodePathExtraID: UInt16 = 0x7075
    /// Extra-field ID of alignment padding, as Android's zipalign writes it:
    /// a 2-byte alignment followed by zero bytes.
    static let alignmentExtraID: UInt16 = 0xD935

    /// Flag bit 0: traditional PKWARE encryption.
    static let flagEncrypted: UInt16 = 1 << 0
    /// Flag bit 1: with deflate, "maximum compression" was used.
    static let flagMaximumCompression: UInt16 = 1 << 1
    /// Flag bit 3: CRC and sizes follow the data in a data descriptor.
    static let flagDataDescriptor: UInt16 = 1 << 3
    /// Flag bit 6: strong encryption.
    static let flagStrongEncryption: UInt16 = 1 << 6
    /// Flag bit 11: the name is UTF-8.
    static let flagUTF8: UInt16 = 1 << 11
    /// Flag bit 13: the central directory is encrypted and local headers masked.
    static let flagMaskedHeaders: UInt16 = 1 << 13
    /// Bits whose local and central values must agree: they change how the
    /// member is read.
    static let flagsThatMustAgree: UInt16 = flagEncrypted | flagDataDescriptor | flagStrongEncryption | flagUTF8
    static let flagsMeaningEncrypted: UInt16 = flagEncrypted | flagStrongEncryption | flagMaskedHeaders

    static let max16: UInt16 = 0xFFFF
    static let max32: UInt32 = 0xFFFF_FFFF

    /// "Version made by" host numbers whose external attributes carry a Unix
    /// mode in their upper 16 bits: Unix (3) and OS X (19).
    static func hostHasUnixMode(_ versionMadeBy: UInt16) -> Bool {
        let host = versionMadeBy >> 8
        return host == 3 || host == 19
    }

    /// The largest factor deflate can expand data by (258 bytes from one
    /// 2-bit length/distance pair), with slack for block headers.
    static let maximumDeflateRatio: UInt64 = 1033
}

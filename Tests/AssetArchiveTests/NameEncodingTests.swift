@testable import AssetArchive
import Foundation
import Testing
import TestSupport

/// How member names are decoded: UTF-8 when flagged (general-purpose bit
/// 11), the Info-ZIP Unicode Path field (0x7075) when its CRC-32 matches,
/// CP437 for unflagged names that are not UTF-8; all in NFC.
@Suite struct NameEncodingTests {
    /// `filename_with_æoå.txt` in CP437, as CPython's `zip_cp437_header.zip` spells it.
    private static let cp437Name: [UInt8] = Array("filename_with_".utf8) + [0x91, 0x6f, 0x86] + Array(".txt".utf8)

    /// A Unicode Path extra field (APPNOTE 4.6.9) for the raw name `raw`.
    private static func unicodePathField(_ name: String, for raw: [UInt8], crc: UInt32? = nil, version: UInt8 = 1) -> [UInt8] {
        var field: [UInt8] = []
        field.append16(0x7075)
        field.append16(UInt16(5 + name.utf8.count))
        field.append(version)
        field.append32(crc ?? CRC32.of(raw))
        return field + Array(name.utf8)
    }

    @Test func unflaggedNonUTF8NameIsCP437() throws {
        let archive = try parse(ZipBuilder([.init(rawName: Self.cp437Name, [1])]).build())
        #expect(archive.entries.map(\.path) == ["filename_with_\u{e6}o\u{e5}.txt"])
    }

    @Test func cp437TableIsExactFor0x80Through0xFF() throws {
        let high = (0x80 ... 0xFF).map { UInt8($0) }
        let archive = try parse(ZipBuilder([.init(rawName: high, [1])]).build())
        let expected: String
        if Program.available("python3") {
            let output = try Program.output("python3", ["-c", "import sys; sys.stdout.buffer.write(bytes(range(128, 256)).decode('cp437').encode())"])
            expected = String(decoding: output, as: UTF8.self)
        } else {
            expected = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}"
        }
        #expect(Array(archive.entries[0].path.unicodeScalars) == Array(expected.unicodeScalars))
        #expect(archive.entries[0].path.unicodeScalars.count == 128)
    }

    @Test func cpythonCP437TestArchive() throws {
        // CPython's Lib/test/archivetestdata/zip_cp437_header.zip, byte for byte.
        let archive = try parse(Array(Data(base64Encoded: Self.cpythonArchive, options: .ignoreUnknownCharacters)!))
        #expect(archive.entries.map(\.path) == ["filename_with_\u{e6}o\u{e5}.txt", "filename_without.txt"])
    }

    @Test func flaggedNameMustBeUTF8() {
        var member = ZipBuilder.Member(rawName: Self.cp437Name, [1])
        member.flags = 0x0800
        #expect(parseError(ZipBuilder([member]).build())
            == .unsafePath(archive: "t.zip", path: "filename_with_\u{FFFD}o\u{FFFD}.txt", reason: .invalidUTF8))
    }

    @Test func unflaggedUTF8StaysUTF8() throws {
        let archive = try parse(ZipBuilder([.init("caf\u{e9}.txt")]).build())
        #expect(archive.entries.map(\.path) == ["caf\u{e9}.txt"])
    }

    @Test func unicodePathFieldWithMatchingCRCIsUsed() throws {
        var member = ZipBuilder.Member(rawName: Self.cp437Name, [1])
        member.centralExtra = Self.unicodePathField("données/日本.txt", for: Self.cp437Name)
        let archive = try parse(ZipBuilder([member]).build())
        #expect(archive.entries.map(\.path) == ["données/日本.txt"])
    }

    @Test(arguments: [(UInt32?.some(0x1234_5678), UInt8(1)), (nil, 2)])
    func unicodePathFieldWithWrongCRCOrVersionIsIgnored(crc: UInt32?, version: UInt8) throws {
        var cp437 = ZipBuilder.Member(rawName: Self.cp437Name, [1])
        cp437.centralExtra = Self.unicodePathField("other.txt", for: Self.cp437Name, crc: crc, version: version)
        var ascii = ZipBuilder.Member("plain.txt", [2])
        ascii.centralExtra = Self.unicodePathField("other2.txt", for: Array("plain.txt".utf8), crc: crc, version: version)
        let archive = try parse(ZipBuilder([cp437, ascii]).build())
        #expect(archive.entries.map(\.path) == ["filename_with_\u{e6}o\u{e5}.txt", "plain.txt"])
    }

    @Test func unicodePathFieldIsIgnoredWhenFlagged() throws {
        var member = ZipBuilder.Member("plain.txt", [1])
        member.flags = 0x0800
        member.centralExtra = Self.unicodePathField("other.txt", for: Array("plain.txt".utf8))
        #expect(try parse(ZipBuilder([member]).build()).entries.map(\.path) == ["plain.txt"])
    }

    @Test(arguments: [
        ("../evil.txt", "../evil.txt", ArchiveError.PathProblem.parentTraversal),
        ("/etc/passwd", "/etc/passwd", .absolute),
        ("a\\b", "a\\b", .backslash),
    ])
    func unsafeUnicodePathIsRefused(name: String, shown: String, reason: ArchiveError.PathProblem) {
        var member = ZipBuilder.Member(rawName: Self.cp437Name, [1])
        member.centralExtra = Self.unicodePathField(name, for: Self.cp437Name)
        #expect(parseError(ZipBuilder([member]).build()) == .unsafePath(archive: "t.zip", path: shown, reason: reason))
    }

    @Test func invalidUTF8InUnicodePathIsRefused() {
        var member = ZipBuilder.Member(rawName: Self.cp437Name, [1])
        var field: [UInt8] = []
        field.append16(0x7075); field.append16(7); field.append(1); field.append32(CRC32.of(Self.cp437Name))
        field += [0x61, 0xff]
        member.centralExtra = field
        #expect(parseError(ZipBuilder([member]).build()) == .unsafePath(archive: "t.zip", path: "a\u{FFFD}", reason: .invalidUTF8))
    }

    @Test func unsafeCP437NameIsRefusedAndShownAsCP437() {
        let raw = Array("../".utf8) + [0x91]
        #expect(parseError(ZipBuilder([.init(rawName: raw, [1])]).build())
            == .unsafePath(archive: "t.zip", path: "../\u{e6}", reason: .parentTraversal))
    }

    @Test func namesAreNFC() throws {
        let archive = try parse(ZipBuilder([.init("cafe\u{301}/n\u{303}.txt")]).build())
        #expect(archive.entries[0].path.unicodeScalars.map(\.value) == "caf\u{e9}/\u{f1}.txt".unicodeScalars.map(\.value))
    }

    @Test func controlCharactersAreAcceptedAndEscapedInMessages() throws {
        let archive = try parse(ZipBuilder([.init("a\u{1b}[31mred\u{7f}\u{85}.txt")]).build())
        #expect(archive.entries.map(\.path) == ["a\u{1b}[31mred\u{7f}\u{85}.txt"])
        let error = ArchiveError.duplicateMember(archive: "t.zip", path: "a\u{1b}[31mred\u{7f}\u{85}.txt")
        #expect(error.description == "archive 't.zip', member 'a\\x1b[31mred\\x7f\\u{85}.txt': the path appears more than once")
    }

    @Test func normalizedLeavesASCIIAlone() {
        #expect(MemberPath.normalized("dir/file-1.txt") == "dir/file-1.txt")
        #expect(MemberPath.normalized("cafe\u{301}").unicodeScalars.map(\.value) == [0x63, 0x61, 0x66, 0xe9])
        #expect(MemberPath.normalized("\u{e9}").unicodeScalars.map(\.value) == [0xe9])
    }

    @Test(arguments: 0 ..< 20)
    func normalizedFindsANonASCIIByteAtAnyOffset(offset: Int) {
        let path = String(repeating: "a", count: offset) + "e\u{301}" + String(repeating: "b", count: 19 - offset)
        let expected = String(repeating: "a", count: offset) + "\u{e9}" + String(repeating: "b", count: 19 - offset)
        #expect(Array(MemberPath.normalized(path).utf8) == Array(expected.utf8))
        #expect(MemberPath.normalized(String(repeating: "x", count: offset)) == String(repeating: "x", count: offset))
    }

    private static let cpythonArchive = """
        UEsDBBQAAgAIAMNpnz1uDiq0BwAAAAUAAAAVAAAAZmlsZW5hbWVfd2l0aF+Rb4YudHh0c/V34+UCAFBLAwQUAAIACADDaZ89
        bg4qtAcAAAAFAAAAFAAAAGZpbGVuYW1lX3dpdGhvdXQudHh0c/V34+UCAFBLAQIUABQAAgAIAMNpnz1uDiq0BwAAAAUAAAAV
        AAAAAAAAAAAAIAAAAAAAAABmaWxlbmFtZV93aXRoX5Fvhi50eHRQSwECFAAUAAIACADDaZ89bg4qtAcAAAAFAAAAFAAAAAAA
        AAAAACAAAAA6AAAAZmlsZW5hbWVfd2l0aG91dC50eHRQSwUGAAAAAAIAAgCFAAAAcwAAAAAA
        """
}

import Foundation
import Testing
import TestSupport

/// CRC-32 (IEEE, as ZIP uses), computed here so the test does not trust the
/// code it checks.
func crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
    }
    return ~crc
}

/// Packages `files` under a manifest for pack `id` with `assetpack package`;
/// returns the pack's path.
func makePack(_ s: TemporaryDirectory, id: String, files: [String: [UInt8]]) throws -> String {
    let dir = "src-\(id)"
    for (path, bytes) in files { try s.write("\(dir)/\(path)", bytes) }
    let selectors = files.keys.sorted().map { "{ \"file\": \"\($0)\" }" }.joined(separator: ", ")
    try s.write("\(dir)/manifest.json", """
        { "assetPackID": "\(id)", "downloadPolicy": { "onDemand": {} }, "fileSelectors": [\(selectors)], "platforms": ["linux"] }
        """)
    let pack = s.path + "/\(id).zip"
    let r = try CLI.assetpack(["package", s.path + "/\(dir)/manifest.json", "-o", pack])
    guard r.status == 0 else { throw TestFailure("package \(id): \(r.stderr)") }
    return pack
}

/// The words of a line and the columns each starts and ends at.
func words(_ line: String) -> [(word: String, start: Int, end: Int)] {
    var result: [(String, Int, Int)] = []
    var current = "", start = 0
    for (i, c) in line.enumerated() {
        if c == " " {
            if !current.isEmpty { result.append((current, start, i)); current = "" }
        } else {
            if current.isEmpty { start = i }
            current.append(c)
        }
    }
    if !current.isEmpty { result.append((current, start, line.count)) }
    return result
}

func jsonValue(_ r: Program.Result) throws -> Any {
    #expect(r.status == 0, "\(r.stderr)")
    return try JSONSerialization.jsonObject(with: r.stdout)
}

@Suite struct CommandOutputTests {
    static let packKeys: Set<String> = ["id", "version", "downloadPolicy", "installationEventTypes", "platforms",
                                        "memberCount", "totalSize", "archiveSize", "sha256", "installDate"]

    let text = Array(String(repeating: "level data, level data. ", count: 400).utf8)
    let media = noise(5_000, seed: 9)

    @Test func installAndListJSONKeepTheirKeysAndValues() throws {
        let s = TemporaryDirectory("json-install")
        let one = try makePack(s, id: "com.example.one", files: ["only.txt": Array("hello\n".utf8)])
        let installed = try #require(try jsonValue(CLI.assetpack(["install", one, "--json"], container: s.container)) as? [String: Any])
        #expect(Set(installed.keys) == Self.packKeys.union(["change"]))
        #expect(installed["change"] as? String == "installed")
        #expect(installed["id"] as? String == "com.example.one")
        #expect(installed["version"] as? String == "1")
        #expect(installed["downloadPolicy"] as? String == "onDemand")
        #expect(installed["installationEventTypes"] as? [String] == [])
        #expect(installed["platforms"] as? [String] == ["linux"])
        #expect(installed["memberCount"] as? Int == 1)
        #expect(installed["totalSize"] as? Int == 6)
        #expect(installed["archiveSize"] as? Int == (try s.read("com.example.one.zip").count))
        #expect((installed["sha256"] as? String)?.count == 64)
        let date = try #require(installed["installDate"] as? String)
        #expect(ISO8601DateFormatter().date(from: date) != nil, "\(date)")
        let again = try #require(try jsonValue(CLI.assetpack(["install", one, "--json"], container: s.container)) as? [String: Any])
        #expect(again["change"] as? String == "unchanged")

        let ls = try CLI.assetpack(["ls", "--json"], container: s.container)
        // One encoder configuration: pretty, sorted keys, slashes as they are.
        #expect(ls.out.hasPrefix("[\n") && ls.out.hasSuffix("\n"))
        let listed = try #require(try jsonValue(ls) as? [[String: Any]])
        #expect(listed.count == 1)
        #expect(Set(listed[0].keys) == Self.packKeys)
        for key in Self.packKeys { #expect("\(listed[0][key]!)" == "\(installed[key]!)", "\(key)") }
        let order = ["archiveSize", "downloadPolicy", "id", "installDate", "installationEventTypes", "memberCount",
                     "platforms", "sha256", "totalSize", "version"].map { ls.out.range(of: "\"\($0)\"")!.lowerBound }
        #expect(order == order.sorted())
    }

    @Test func memberListJSON() throws {
        let s = TemporaryDirectory("json-members")
        let pack = try makePack(s, id: "members", files: ["levels/1.txt": text, "media/click.ogg": media])
        #expect(try CLI.assetpack(["install", pack], container: s.container).status == 0)
        let r = try CLI.assetpack(["ls", "members", "--json"], container: s.container)
        let members = try #require(try jsonValue(r) as? [[String: Any]])
        #expect(members.map { Set($0.keys) } == Array(repeating: ["path", "size", "storedSize", "method"], count: 2))
        let byPath = Dictionary(uniqueKeysWithValues: members.map { ($0["path"] as! String, $0) })
        #expect(byPath["levels/1.txt"]?["method"] as? String == "deflated")
        #expect(byPath["levels/1.txt"]?["size"] as? Int == text.count)
        #expect((byPath["levels/1.txt"]?["storedSize"] as? Int).map { $0 < text.count } == true)
        #expect(byPath["media/click.ogg"]?["method"] as? String == "stored")
        #expect(byPath["media/click.ogg"]?["storedSize"] as? Int == media.count)
        // Slashes are not escaped.
        #expect(r.out.contains("\"levels/1.txt\"") && !r.out.contains("\\/"))
    }

    /// `package --json` prints the written pack as `inspect --json` does.
    @Test func packageJSONIsWhatInspectSays() throws {
        let s = TemporaryDirectory("json-package")
        let pack = try makePack(s, id: "com.example.pkg", files: ["levels/1.txt": text, "media/click.ogg": media])
        let r = try CLI.assetpack(["package", s.path + "/src-com.example.pkg/manifest.json", "-o", s.path + "/again.zip", "--json"])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r.stderr)")
        var packaged = try #require(try jsonValue(r) as? [String: Any])
        var inspected = try #require(try jsonValue(CLI.assetpack(["inspect", pack, "--json"])) as? [String: Any])
        #expect(packaged["path"] as? String == s.path + "/again.zip")
        packaged["path"] = nil
        inspected["path"] = nil
        #expect(NSDictionary(dictionary: packaged) == NSDictionary(dictionary: inspected))
    }

    @Test func inspectJSONWritesEveryCRCInEightHexDigits() throws {
        let s = TemporaryDirectory("json-inspect")
        // A member whose CRC-32 has a leading zero hex digit.
        let probe = try #require((0..<10_000).lazy.map { Array("crc probe \($0)\n".utf8) }.first { crc32($0) < 0x1000_0000 })
        let files = ["probe.txt": probe, "levels/1.txt": text, "media/click.ogg": media]
        let pack = try makePack(s, id: "com.example.inspect", files: files)
        let r = try CLI.assetpack(["inspect", pack, "--json"])
        let object = try #require(try jsonValue(r) as? [String: Any])
        #expect(Set(object.keys) == ["path", "size", "sha256", "zip64", "members", "assetPackID", "downloadPolicy",
                                     "installationEventTypes", "platforms"])
        #expect(object["assetPackID"] as? String == "com.example.inspect")
        #expect(object["path"] as? String == pack)
        #expect(object["zip64"] as? Bool == false)
        #expect(object["platforms"] as? [String] == ["linux"])
        let members = try #require(object["members"] as? [[String: Any]])
        #expect(members.count == 3)
        for m in members {
            #expect(Set(m.keys) == ["path", "method", "size", "storedSize", "crc32", "dataOffset"])
            let path = try #require(m["path"] as? String)
            let expected = String(crc32(files[path]!), radix: 16)
            #expect(m["crc32"] as? String == String(repeating: "0", count: 8 - expected.count) + expected, "\(path)")
        }
        let probeCRC = members.first { $0["path"] as? String == "probe.txt" }?["crc32"] as? String
        #expect(probeCRC?.count == 8 && probeCRC?.hasPrefix("0") == true, "\(probeCRC ?? "none")")

        // A plain ZIP says it has no recorded manifest, and what it installs as.
        let script = "import zipfile,sys\nwith zipfile.ZipFile(sys.argv[1],'w') as z: z.writestr('a.txt','x')"
        #expect(try Program.run("python3", ["-c", script, s.path + "/plain.zip"]).status == 0)
        let plain = try #require(try jsonValue(CLI.assetpack(["inspect", s.path + "/plain.zip", "--json"])) as? [String: Any])
        #expect(plain["recordedManifest"] as? Bool == false)
        #expect(plain["assetPackID"] as? String == "plain")
        #expect(plain["downloadPolicy"] == nil && plain["platforms"] == nil)
    }

    /// A version the manifest records is shown by `inspect`, in text and
    /// JSON; a pack without one has no `version` key.
    @Test func inspectShowsTheRecordedVersion() throws {
        let s = TemporaryDirectory("inspect-version")
        try s.write("src/a.txt", text)
        try s.write("src/manifest.json", Array("""
            { "assetPackID": "versioned", "downloadPolicy": { "onDemand": {} }, "fileSelectors": [{ "file": "a.txt" }],
              "platforms": ["linux"], "version": 7 }
            """.utf8))
        let pack = s.path + "/versioned.zip"
        let packaged = try CLI.assetpack(["package", s.path + "/src/manifest.json", "-o", pack])
        #expect(packaged.status == 0, "\(packaged.stderr)")
        let object = try #require(try jsonValue(CLI.assetpack(["inspect", pack, "--json"])) as? [String: Any])
        #expect(object["version"] as? Int == 7)
        let shown = try CLI.assetpack(["inspect", pack])
        #expect(shown.status == 0)
        #expect(shown.out.split(separator: "\n").contains("  version: 7"), "\(shown.out)")
        // Without one: no key, no line.
        let plain = try makePack(s, id: "unversioned", files: ["a.txt": text])
        let none = try #require(try jsonValue(CLI.assetpack(["inspect", plain, "--json"])) as? [String: Any])
        #expect(none["version"] == nil)
        #expect(!(try CLI.assetpack(["inspect", plain])).out.contains("version:"))
    }

    @Test func verifyJSONKeepsItsKeys() throws {
        let s = TemporaryDirectory("json-verify")
        let pack = try makePack(s, id: "checked", files: ["levels/1.txt": text, "media/click.ogg": media])
        #expect(try CLI.assetpack(["install", pack], container: s.container).status == 0)
        let keys: Set<String> = ["container", "deep", "repair", "dryRun", "packsChecked", "membersChecked",
                                 "bytesChecked", "findings", "repairs", "exitStatus"]
        let plain = try #require(try jsonValue(CLI.assetpack(["verify", "--json"], container: s.container)) as? [String: Any])
        #expect(Set(plain.keys) == keys)
        #expect(plain["container"] as? String == s.container)
        #expect(plain["deep"] as? Bool == false && plain["repair"] as? Bool == false && plain["dryRun"] as? Bool == false)
        #expect(plain["packsChecked"] as? Int == 1 && plain["membersChecked"] as? Int == 2)
        #expect((plain["findings"] as? [Any])?.isEmpty == true && (plain["repairs"] as? [Any])?.isEmpty == true)
        #expect(plain["exitStatus"] as? Int == 0)
        // A repair that is not a dry run says what a second pass still found.
        let repaired = try #require(try jsonValue(CLI.assetpack(["verify", "--deep", "--repair", "--json"], container: s.container)) as? [String: Any])
        #expect(Set(repaired.keys) == keys.union(["remaining"]))
        #expect((repaired["remaining"] as? [Any])?.isEmpty == true)
        #expect(repaired["deep"] as? Bool == true && repaired["repair"] as? Bool == true)
        #expect((repaired["bytesChecked"] as? Int ?? 0) > 0)
    }

    @Test func lsAndInspectAlignColumnsAndCountFiles() throws {
        let s = TemporaryDirectory("columns")
        let one = try makePack(s, id: "com.example.one", files: ["only.txt": Array("hello\n".utf8)])
        let many = try makePack(s, id: "com.example.a-longer-id", files: ["levels/1.txt": text, "media/click.ogg": media,
                                                                          "a.txt": Array("a\n".utf8)])
        let install = try CLI.assetpack(["install", one], container: s.container)
        #expect(install.stderr == "com.example.one installed: version 1, 1 file\n")
        #expect(try CLI.assetpack(["install", many], container: s.container).stderr.hasSuffix(", 3 files\n"))

        let ls = try CLI.assetpack(["ls"], container: s.container)
        #expect(ls.status == 0 && !ls.out.contains("\t"))
        let rows = ls.out.split(separator: "\n").map { words(String($0)) }
        #expect(rows.count == 2 && rows.allSatisfy { $0.count == 7 }, "\(ls.out)")
        guard rows.count == 2, rows.allSatisfy({ $0.count == 7 }) else { return }
        // ID, version, policy start together; counts end together; units start together.
        for column in [1, 2, 4, 6] { #expect(rows[0][column].start == rows[1][column].start, "column \(column):\n\(ls.out)") }
        for column in [3, 5] { #expect(rows[0][column].end == rows[1][column].end, "column \(column):\n\(ls.out)") }
        let oneRow = try #require(rows.first { $0[0].word == "com.example.one" })
        #expect(oneRow.map(\.word) == ["com.example.one", "1", "onDemand", "1", "file", "6", "bytes"])
        let manyRow = try #require(rows.first { $0[0].word == "com.example.a-longer-id" })
        #expect(manyRow[3].word == "3" && manyRow[4].word == "files")

        let members = try CLI.assetpack(["ls", "com.example.a-longer-id"], container: s.container)
        let memberRows = members.out.split(separator: "\n").map { words(String($0)) }
        #expect(memberRows.map { $0.count } == [3, 3, 3], "\(members.out)")
        #expect(Set(memberRows.map { $0[1].end }).count == 1, "sizes end together:\n\(members.out)")
        #expect(Set(memberRows.map { $0[2].start }).count == 1, "paths start together:\n\(members.out)")

        let inspect = try CLI.assetpack(["inspect", one])
        #expect(inspect.out.contains("\n  1 file, 6 bytes ("), "\(inspect.out)")
        let table = try CLI.assetpack(["inspect", many]).out.components(separatedBy: "\n\n").last ?? ""
        let inspectRows = table.split(separator: "\n").map { words(String($0)) }
        #expect(inspectRows.map { $0.count } == [4, 4, 4], "\(table)")
        for column in [1, 2] { #expect(Set(inspectRows.map { $0[column].end }).count == 1, "\(table)") }
        #expect(Set(inspectRows.map { $0[3].start }).count == 1, "\(table)")
    }
}

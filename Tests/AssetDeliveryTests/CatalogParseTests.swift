import Foundation
import Testing
import AssetDelivery
import AssetStore

/// Catalog JSON in, a catalog or the specific refusal out.
@Suite struct CatalogParseTests {
    static let sha = String(repeating: "ab", count: 32)

    /// A valid catalog's JSON with `entry` as its one pack and `top` merged
    /// into (or replacing) its top-level fields.
    static func json(entry: [String: String] = [:], top: [String: String] = [:]) -> [UInt8] {
        var e: [String: String] = [
            "assetPackID": "\"Tutorial\"", "version": "3", "size": "1234", "sha256": "\"\(sha)\"",
            "downloadPolicy": #"{"prefetch":{"installationEventTypes":["firstInstallation"]}}"#,
            "platforms": #"["linux"]"#, "url": "\"Tutorial-abababababab.zip\"",
        ]
        e.merge(entry) { $1 }
        let entryText = "{" + e.filter { $0.value != "-" }.map { "\"\($0.key)\":\($0.value)" }.sorted().joined(separator: ",") + "}"
        var t: [String: String] = [
            "format": "1", "sequence": "7", "published": "\"2026-12-01T09:30:00Z\"", "packs": "[\(entryText)]",
        ]
        t.merge(top) { $1 }
        return Array(("{" + t.filter { $0.value != "-" }.map { "\"\($0.key)\":\($0.value)" }.sorted().joined(separator: ",") + "}").utf8)
    }

    static func problem(_ bytes: [UInt8]) -> (DeliveryError.CatalogProblem, String?)? {
        do {
            _ = try Catalog.parse(bytes, path: "c.json")
            return nil
        } catch {
            guard case .invalidCatalog(let path, let field, let problem, _) = error, path == "c.json" else { return nil }
            return (problem, field)
        }
    }

    @Test func parsesAValidCatalog() throws {
        let c = try Catalog.parse(Self.json(top: ["expires": "\"2026-12-08T09:30:00.250Z\""]), path: "c.json")
        #expect(c.sequence == 7)
        #expect(c.published.description == "2026-12-01T09:30:00Z")
        #expect(c.expires?.description == "2026-12-08T09:30:00Z")
        #expect(c.packs == [Catalog.Entry(id: "Tutorial", version: 3, size: 1234, sha256: Self.sha,
                                          downloadPolicy: .prefetch([.firstInstallation]), platforms: [.linux],
                                          url: "Tutorial-abababababab.zip")])
    }

    @Test func unknownFieldsAreIgnored() throws {
        let c = try Catalog.parse(Self.json(entry: ["delta": "{}"], top: ["mirror": "\"x\""]), path: "c.json")
        #expect(c.packs.count == 1)
    }

    @Test(arguments: [
        ("{", DeliveryError.CatalogProblem.notJSON, nil),
        ("[]", .wrongType, nil),
        (#"{"format":1,"sequence":1,"published":"2026-12-01T00:00:00Z","packs":{}}"#, .wrongType, "packs"),
    ] as [(String, DeliveryError.CatalogProblem, String?)])
    func refusesBadStructure(text: String, expected: DeliveryError.CatalogProblem, field: String?) {
        let found = Self.problem(Array(text.utf8))
        #expect(found?.0 == expected)
        #expect(found?.1 == field)
    }

    @Test(arguments: [
        // top-level fields
        ([:], ["format": "\"1\""], .wrongType, "format"),
        ([:], ["sequence": "-"], DeliveryError.CatalogProblem.missingField, "sequence"),
        ([:], ["sequence": "-1"], .badSequence, "sequence"),
        ([:], ["sequence": "1.5"], .badSequence, "sequence"),
        ([:], ["sequence": "1e3"], .badSequence, "sequence"),
        ([:], ["sequence": "9007199254740992"], .badSequence, "sequence"),
        ([:], ["sequence": "\"7\""], .wrongType, "sequence"),
        ([:], ["published": "-"], .missingField, "published"),
        ([:], ["published": "\"2026-12-01 09:30:00Z\""], .badTimestamp, "published"),
        ([:], ["published": "\"2026-02-30T09:30:00Z\""], .badTimestamp, "published"),
        ([:], ["published": "\"2026-12-01T09:30:00+01:00\""], .badTimestamp, "published"),
        ([:], ["expires": "\"tomorrow\""], .badTimestamp, "expires"),
        ([:], ["expires": "12"], .wrongType, "expires"),
        ([:], ["packs": "-"], .missingField, "packs"),
        // entries
        (["sha256": "\"\(String(repeating: "AB", count: 32))\""], [:], .badSHA256, "packs[0].sha256"),
        (["sha256": "\"\(String(repeating: "a", count: 63))\""], [:], .badSHA256, "packs[0].sha256"),
        (["sha256": "\"\(String(repeating: "g", count: 64))\""], [:], .badSHA256, "packs[0].sha256"),
        (["sha256": "-"], [:], .missingField, "packs[0].sha256"),
        (["size": "-5"], [:], .badSize, "packs[0].size"),
        (["size": "9007199254740992"], [:], .badSize, "packs[0].size"),
        (["size": "true"], [:], .wrongType, "packs[0].size"),
        (["version": "0"], [:], .badVersion, "packs[0].version"),
        (["version": "2.0"], [:], .badVersion, "packs[0].version"),
        (["version": "-"], [:], .missingField, "packs[0].version"),
        (["assetPackID": "\"../etc\""], [:], .invalidPackID, "packs[0].assetPackID"),
        (["assetPackID": "\"\""], [:], .invalidPackID, "packs[0].assetPackID"),
        (["assetPackID": "7"], [:], .wrongType, "packs[0].assetPackID"),
        (["url": "\"file:///etc/passwd\""], [:], .badURL, "packs[0].url"),
        (["url": "\"ftp://example.com/a.zip\""], [:], .badURL, "packs[0].url"),
        (["url": "\"../secret.zip\""], [:], .badURL, "packs[0].url"),
        (["url": "\"a/../../b.zip\""], [:], .badURL, "packs[0].url"),
        (["url": "\"%2e%2e/b.zip\""], [:], .badURL, "packs[0].url"),
        (["url": "\"/abs/a.zip\""], [:], .badURL, "packs[0].url"),
        (["url": "\"a\\\\b.zip\""], [:], .badURL, "packs[0].url"),
        (["url": "\"https:///a.zip\""], [:], .badURL, "packs[0].url"),
        (["url": "\"\""], [:], .badURL, "packs[0].url"),
        (["downloadPolicy": #"{"later":{}}"#], [:], .badValue, "packs[0].downloadPolicy.later"),
        (["downloadPolicy": #"{"essential":{"installationEventTypes":[]}}"#], [:], .badValue,
         "packs[0].downloadPolicy.essential.installationEventTypes"),
        (["downloadPolicy": #"{"onDemand":{},"prefetch":{}}"#], [:], .badValue, "packs[0].downloadPolicy"),
        (["platforms": #"["amiga"]"#], [:], .badValue, "packs[0].platforms[0]"),
    ] as [([String: String], [String: String], DeliveryError.CatalogProblem, String)])
    func refusesBadFields(entry: [String: String], top: [String: String], expected: DeliveryError.CatalogProblem, field: String) {
        let found = Self.problem(Self.json(entry: entry, top: top))
        #expect(found?.0 == expected)
        #expect(found?.1 == field)
    }

    @Test func messagesStayOnOneLine() {
        for entry in [["url": #""a\nb.zip""#], ["assetPackID": #""a\u001b[2Jb""#]] {
            #expect {
                try Catalog.parse(Self.json(entry: entry), path: "c.json")
            } throws: { error in
                let text = (error as? DeliveryError)?.description ?? "\n"
                return !text.contains("\n") && !text.contains("\u{1b}")
            }
        }
    }

    @Test func refusesDuplicatePackIDs() throws {
        let one = try Catalog.parse(Self.json(), path: "c.json").packs[0]
        let twice = Catalog(sequence: 1, published: CatalogTime(seconds: 0), expires: nil, packs: [one, one]).encoded()
        #expect(Self.problem(twice)?.0 == .duplicatePackID)
        #expect(Self.problem(twice)?.1 == "packs[1].assetPackID")
    }

    @Test(arguments: ["2", "0", "1.0", "-1"])
    func refusesOtherFormats(format: String) {
        #expect(throws: DeliveryError.unsupportedCatalogFormat(path: "c.json", format: format)) {
            try Catalog.parse(Self.json(top: ["format": format]), path: "c.json")
        }
    }

    @Test func refusesAMissingFormat() {
        #expect(Self.problem(Self.json(top: ["format": "-"]))?.0 == .missingField)
    }

    @Test func acceptsAbsoluteAndNestedURLs() throws {
        for url in ["https://cdn.example.com/packs/T-1.zip", "HTTP://cdn.example.com:8080/T.zip", "packs/T-1.zip"] {
            #expect(try Catalog.parse(Self.json(entry: ["url": "\"\(url)\""]), path: "c.json").packs[0].url == url)
        }
    }

    @Test func encodingRoundTripsAndIsDeterministic() throws {
        let catalog = Catalog(sequence: 42, published: CatalogTime(seconds: 1_796_000_000), expires: CatalogTime(seconds: 1_797_000_000), packs: [
            Catalog.Entry(id: "A", version: 1, size: 0, sha256: Self.sha, downloadPolicy: .onDemand, platforms: [], url: "A-abababababab.zip"),
            Catalog.Entry(id: "b.c-d_e", version: 9_007_199_254_740_991, size: 9_007_199_254_740_991, sha256: Self.sha,
                          downloadPolicy: .essential([.subsequentUpdate, .firstInstallation]), platforms: [.linux, .iOS],
                          url: "https://cdn.example.com/x/b.zip"),
        ])
        let bytes = catalog.encoded()
        #expect(try Catalog.parse(bytes, path: "c.json") == catalog)
        #expect(catalog.encoded() == bytes)
        #expect(try Catalog.parse(bytes, path: "c.json").encoded() == bytes)
        #expect(bytes.last == 0x0a)
        let noExpiry = Catalog(sequence: 0, published: CatalogTime(seconds: 0), expires: nil, packs: [])
        #expect(String(decoding: noExpiry.encoded(), as: UTF8.self)
                == #"{"format":1,"packs":[],"published":"1970-01-01T00:00:00Z","sequence":0}"# + "\n")
    }

    @Test(arguments: [
        ("1970-01-01T00:00:00Z", Int64(0)), ("2000-02-29T23:59:59Z", 951_868_799), ("1969-12-31T23:59:59Z", -1),
        ("2026-12-01t09:30:00.999999z", 1_796_117_400), ("0000-03-01T00:00:00Z", -62_162_035_200), ("9999-12-31T23:59:59Z", 253_402_300_799),
    ])
    func timesReadAndWrite(text: String, seconds: Int64) throws {
        let time = try #require(CatalogTime(rfc3339: text))
        #expect(time.seconds == seconds)
        #expect(CatalogTime(rfc3339: time.description) == time)
    }

    @Test(arguments: ["2026-13-01T00:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T23:60:00Z", "2026-12-01T23:59:60Z",
                      "2100-02-29T00:00:00Z", "2026-12-01T00:00:00", "2026-12-01T00:00:00.Z", "+2026-12-01T00:00:00Z", ""])
    func badTimesAreRefused(text: String) {
        #expect(CatalogTime(rfc3339: text) == nil)
    }
}

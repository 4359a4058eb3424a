import Foundation
import Testing
import TestSupport

/// `assetpack keygen`, `publish` and `verify-published` through the real binary.
@Suite struct PublishCommandTests {
    /// A scratch directory with packs made by `assetpack package` and a key pair.
    final class Site {
        let dir = TemporaryDirectory("assetpack-publish")
        var out: String { dir.file("out") }
        var key: String { dir.file("k.key") }
        var pub: String { dir.file("k.pub") }

        init(keys: Bool = true) throws {
            if keys {
                let r = try CLI.assetpack(["keygen", "--out", dir.file("k")])
                guard r.status == 0 else { throw TestFailure("keygen: \(r.stderr)") }
            }
        }

        /// Packages pack `id` holding `content` (and a manifest `version`)
        /// as `<file>.zip`; returns its path. `policy` is the manifest's
        /// `downloadPolicy` object, `platforms` its platforms (`nil`: no
        /// `platforms` field).
        @discardableResult
        func pack(_ id: String, _ content: String, version: Int? = nil, file: String? = nil,
                  policy: String = #"{ "prefetch": { "installationEventTypes": ["firstInstallation"] } }"#,
                  platforms: [String]? = ["linux"]) throws -> String {
            let name = file ?? id
            try dir.write("src/\(name)/files/data.txt", Array(content.utf8))
            let versionField = version.map { ", \"version\": \($0)" } ?? ""
            let platformsField = platforms.map { list in
                ", \"platforms\": [" + list.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
            } ?? ""
            try dir.write("src/\(name)/manifest.json", Array("""
                { "assetPackID": "\(id)", "downloadPolicy": \(policy),
                  "fileSelectors": [ { "directory": "files" } ]\(platformsField)\(versionField) }
                """.utf8))
            let path = dir.file("\(name).zip")
            let r = try CLI.assetpack(["package", dir.file("src/\(name)/manifest.json"), "-o", path])
            guard r.status == 0 else { throw TestFailure("package: \(r.stderr)") }
            return path
        }

        func publish(_ args: [String]) throws -> Program.Result {
            try CLI.assetpack(["publish"] + args + ["--to", out])
        }

        func catalog() throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(dir.read("out/catalog.json"))) as? [String: Any] ?? [:]
        }

        func entries() throws -> [[String: Any]] { try catalog()["packs"] as? [[String: Any]] ?? [] }

        func files() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: out).sorted() }

        func sha256(_ path: String) throws -> String {
            let r = try Program.run("sha256sum", [path])
            return String(r.out.prefix(64))
        }

        func flipByte(_ relative: String, at offset: Int? = nil) throws {
            var bytes = try dir.read(relative)
            bytes[offset ?? bytes.count / 2] ^= 0x20
            try dir.write(relative, bytes)
        }
    }

    @Test func publishesUnderContentNamesWithASignedCatalog() throws {
        let s = try Site()
        let packs = [try s.pack("Tutorial", "intro"), try s.pack("com.example.Levels", "levels"), try s.pack("Music", "la la")]
        let r = try s.publish(packs + ["--sign", s.key])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 3 && lines.allSatisfy { $0.hasPrefix("published ") && $0.contains(" version 1 ") })

        let catalog = try s.catalog()
        #expect(catalog["format"] as? Int == 1)
        #expect(catalog["sequence"] as? Int == 1)
        #expect(catalog["expires"] == nil)
        let entries = try s.entries()
        #expect(entries.map { $0["assetPackID"] as? String } == ["Music", "Tutorial", "com.example.Levels"])
        for (entry, path) in zip(entries, [packs[2], packs[0], packs[1]]) {
            let sha = try s.sha256(path)
            let id = entry["assetPackID"] as? String ?? ""
            #expect(entry["sha256"] as? String == sha)
            #expect(entry["url"] as? String == "\(id)-\(sha.prefix(12)).zip")
            #expect(entry["size"] as? Int == (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
            #expect(entry["version"] as? Int == 1)
            #expect(entry["platforms"] as? [String] == ["linux"])
            let policy = entry["downloadPolicy"] as? [String: [String: [String]]]
            #expect(policy?["prefetch"]?["installationEventTypes"] == ["firstInstallation"])
            #expect(try s.dir.read("out/" + (entry["url"] as? String ?? "")) == s.dir.read(path.replacingOccurrences(of: s.dir.path + "/", with: "")))
        }
        #expect(try s.files().filter { $0.hasSuffix(".zip") }.count == 3)
        #expect(try s.files().contains("catalog.json.sig"))
        let check = try CLI.assetpack(["verify-published", s.out, "--key", s.pub])
        #expect(check.status == 0, "\(check.out) \(check.stderr)")
        #expect(check.out.isEmpty)
    }

    @Test func republishingIsUnchangedButTheSequenceGrows() throws {
        let s = try Site()
        let pack = try s.pack("Tutorial", "intro")
        #expect(try s.publish([pack, "--sign", s.key]).status == 0)
        let before = try s.files()
        let again = try s.publish([pack, "--sign", s.key, "--expires", "7d"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.out.hasPrefix("unchanged Tutorial version 1 Tutorial-"))
        #expect(try s.catalog()["sequence"] as? Int == 2)
        #expect(try s.catalog()["expires"] is String)
        #expect(try s.files() == before)
        // The signature file carries the new catalog's signature and the previous one's.
        #expect(try String(decoding: s.dir.read("out/catalog.json.sig"), as: UTF8.self).split(separator: "\n").count == 2)
        #expect(try CLI.assetpack(["verify-published", s.out, "--key", s.pub]).status == 0)
        let json = try s.publish([pack, "--sign", s.key, "--json"])
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        #expect(object?["sequence"] as? Int == 3)
        #expect((object?["signedBy"] as? String)?.count == 16)
        let change = (object?["changes"] as? [[String: Any]])?.first
        #expect(change?["change"] as? String == "unchanged" && change?["pack"] as? String == "Tutorial" && change?["version"] as? Int == 1)
    }

    @Test func aNewVersionKeepsTheOldFileUntilPrune() throws {
        let s = try Site(keys: false)
        let v1 = try s.pack("Tutorial", "intro one")
        #expect(try s.publish([v1]).status == 0)
        let oldFile = try #require(try s.entries().first?["url"] as? String)
        let v2 = try s.pack("Tutorial", "intro two")
        let r = try s.publish([v2])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out.hasPrefix("published Tutorial version 2 "))
        let newFile = try #require(try s.entries().first?["url"] as? String)
        #expect(newFile != oldFile)
        #expect(try s.files().contains(oldFile) && s.files().contains(newFile))
        // The old file is a stray to verify-published: a warning only.
        let check = try CLI.assetpack(["verify-published", s.out])
        #expect(check.status == 0)
        #expect(check.out.contains("warning: \(oldFile): stray file"))
        try s.dir.write("out/notes.txt", Array("mine".utf8))
        let pruned = try s.publish([v2, "--prune"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.out.contains("unchanged Tutorial version 2 \(newFile)"))
        #expect(pruned.out.contains("pruned \(oldFile)"))
        #expect(try !s.files().contains(oldFile) && s.files().contains(newFile))
        // Only files that look like ours are pruned.
        #expect(try s.files().contains("notes.txt"))
    }

    @Test func manifestVersionsAreUsedAndMayNotGoBackwards() throws {
        let s = try Site(keys: false)
        #expect(try s.publish([try s.pack("Tutorial", "five", version: 5)]).out.hasPrefix("published Tutorial version 5 "))
        let catalog = try s.dir.read("out/catalog.json")
        let back = try s.publish([try s.pack("Tutorial", "four", version: 4)])
        #expect(back.status == 1)
        #expect(back.stderr.contains("version 4, older than the catalog's 5"), "\(back.stderr)")
        let reused = try s.publish([try s.pack("Tutorial", "other five", version: 5)])
        #expect(reused.status == 1)
        #expect(reused.stderr.contains("raise the manifest's version"), "\(reused.stderr)")
        #expect(try s.dir.read("out/catalog.json") == catalog)
        #expect(try s.publish([try s.pack("Tutorial", "seven", version: 7)]).out.hasPrefix("published Tutorial version 7 "))
    }

    @Test func twoPacksWithOneIDAreRefused() throws {
        let s = try Site(keys: false)
        let a = try s.pack("Tutorial", "a", file: "a")
        let b = try s.pack("Tutorial", "b", file: "b")
        let r = try s.publish([a, b])
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(a) and \(b) are both pack 'Tutorial'"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.out + "/catalog.json"))
    }

    @Test func aDamagedPackIsRefusedNamingTheFile() throws {
        let s = try Site(keys: false)
        let good = try s.pack("Good", "fine")
        let bad = try s.pack("Tutorial", String(repeating: "intro ", count: 200))
        try s.flipByte("Tutorial.zip", at: 40)
        let r = try s.publish([good, bad])
        #expect(r.status == 1)
        #expect(r.stderr.contains(bad), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: s.out + "/catalog.json"))
    }

    @Test func baseURLGivesAbsoluteURLs() throws {
        let s = try Site(keys: false)
        let r = try s.publish([try s.pack("Tutorial", "intro"), "--base-url", "https://cdn.example.com/packs/"])
        #expect(r.status == 0, "\(r.stderr)")
        let url = try #require(try s.entries().first?["url"] as? String)
        #expect(url.hasPrefix("https://cdn.example.com/packs/Tutorial-") && url.hasSuffix(".zip"))
        #expect(try s.files().contains(String(url.split(separator: "/").last!)))
        let bad = try s.publish([try s.pack("Tutorial", "intro"), "--base-url", "file:///srv"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("is not an http:// or https:// URL"))
        // A pack elsewhere is reported, not fetched.
        let check = try CLI.assetpack(["verify-published", s.out])
        #expect(check.status == 0)
        #expect(check.out.contains("warning: \(url): pack 'Tutorial': at an absolute URL: not checked"))
    }

    @Test func verifyPublishedReportsEveryProblemOnALine() throws {
        let s = try Site()
        let packs = [try s.pack("A", "aaa"), try s.pack("B", "bbb"), try s.pack("C", "ccc")]
        #expect(try s.publish(packs + ["--sign", s.key]).status == 0)
        let urls = try s.entries().compactMap { $0["url"] as? String }
        try s.flipByte("out/" + urls[0], at: 35)
        try FileManager.default.removeItem(atPath: s.out + "/" + urls[1])
        try s.dir.write("out/extra.bin", [1, 2, 3])
        try s.flipByte("out/catalog.json.sig", at: 40)
        let r = try CLI.assetpack(["verify-published", s.out, "--key", s.pub])
        #expect(r.status == 1)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("error: \(urls[0]): pack 'A': ") }, "\(r.out)")
        #expect(lines.contains("error: \(urls[1]): pack 'B': missing"), "\(r.out)")
        #expect(lines.contains("warning: extra.bin: stray file: the catalog does not name it"), "\(r.out)")
        #expect(lines.contains { $0.hasPrefix("error: catalog.json.sig: ") }, "\(r.out)")
        #expect(lines.count == 4, "\(r.out)")
        #expect(!lines.contains { $0.contains("'C'") })
        let json = try CLI.assetpack(["verify-published", s.out, "--key", s.pub, "--json"])
        let object = try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any]
        #expect(object?["clean"] as? Bool == false)
        #expect((object?["findings"] as? [Any])?.count == 4)
    }

    @Test func verifyPublishedWithAKeyRequiresASignature() throws {
        let s = try Site()
        #expect(try s.publish([try s.pack("A", "aaa")]).status == 0)
        let r = try CLI.assetpack(["verify-published", s.out, "--key", s.pub])
        #expect(r.status == 1)
        #expect(r.out.contains("error: catalog.json.sig: ") && r.out.contains("not signed"), "\(r.out)")
    }

    @Test func aCatalogSignedByAnotherKeyOrUnsignedPublishIsRefused() throws {
        let s = try Site()
        let pack = try s.pack("A", "aaa")
        #expect(try s.publish([pack, "--sign", s.key]).status == 0)
        #expect(try CLI.assetpack(["keygen", "--out", s.dir.file("other")]).status == 0)
        let other = try s.publish([pack, "--sign", s.dir.file("other.key")])
        #expect(other.status == 1)
        #expect(other.stderr.contains("signed by key"), "\(other.stderr)")
        let unsigned = try s.publish([pack])
        #expect(unsigned.status == 1)
        #expect(unsigned.stderr.contains("give its key with --sign"), "\(unsigned.stderr)")
        #expect(try s.catalog()["sequence"] as? Int == 1)
    }

    @Test func concurrentPublishersTakeTurns() throws {
        let s = try Site(keys: false)
        let packs = try (0..<6).map { try s.pack("P\($0)", "pack \($0)") }
        // Three rounds of two publishers started together, each with its own pack.
        for round in 0..<3 {
            let children = try [packs[2 * round], packs[2 * round + 1]].map {
                try Child(CLI.binary, ["publish", $0, "--to", s.out])
            }
            for child in children {
                #expect(child.wait(timeout: 60))
                #expect(child.exitStatus == 0, "\(child.stderr)")
            }
        }
        #expect(try s.catalog()["sequence"] as? Int == 6)
        #expect(try s.entries().compactMap { $0["assetPackID"] as? String } == (0..<6).map { "P\($0)" })
        #expect(try CLI.assetpack(["verify-published", s.out]).status == 0)
    }

    @Test func keygenRefusesToOverwriteAndPrintsThePublicKey() throws {
        let s = try Site()
        let line = try String(contentsOfFile: s.pub, encoding: .utf8)
        let again = try CLI.assetpack(["keygen", "--out", s.dir.file("k")])
        #expect(again.status == 1)
        #expect(again.stderr.contains(s.dir.file("k.key")))
        #expect(try String(contentsOfFile: s.pub, encoding: .utf8) == line)
        let fresh = try CLI.assetpack(["keygen", "--out", s.dir.file("n")])
        #expect(fresh.out == (try String(contentsOfFile: s.dir.file("n.pub"), encoding: .utf8)))
    }

    @Test func usageErrors() throws {
        let s = try Site(keys: false)
        let pack = try s.pack("A", "aaa")
        for args in [["publish", pack], ["publish", "--to", s.out], ["publish", pack, "--to", s.out, "--expires", "soon"],
                     ["publish", pack, "--to", s.out, "--expires", "2001-01-01T00:00:00Z"], ["verify-published"], ["keygen"]] {
            let r = try CLI.assetpack(args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
        }
        let badKey = try CLI.assetpack(["publish", pack, "--to", s.out, "--sign", pack])
        #expect(badKey.status == 1)
        #expect(badKey.stderr.contains("not an Ed25519 private key") || badKey.stderr.contains("bytes"), "\(badKey.stderr)")
    }

    @Test func eachPackIsPublishedWithItsPieceMapAndGlue() throws {
        let s = try Site()
        let pack = try s.pack("Tutorial", String(repeating: "intro ", count: 300))
        #expect(try s.publish([pack, "--sign", s.key]).status == 0)
        let entry = try #require(try s.entries().first)
        let url = try #require(entry["url"] as? String)
        let pieces = try #require(entry["pieces"] as? [String: Any])
        #expect(pieces["url"] as? String == url + ".pieces")
        #expect(try s.files() == [".publish.lock", "catalog.json", "catalog.json.sig", url, url + ".glue", url + ".pieces"].sorted())
        #expect(pieces["sha256"] as? String == (try s.sha256(s.out + "/" + url + ".pieces")))
        let map = try JSONSerialization.jsonObject(with: Data(s.dir.read("out/\(url).pieces"))) as? [String: Any]
        #expect(map?["pack"] as? String == "Tutorial" && map?["sha256"] as? String == entry["sha256"] as? String)
        #expect((map?["glue"] as? [String: Any])?["url"] as? String == url + ".glue")
        let member = try #require((map?["members"] as? [[String: Any]])?.first)
        #expect((member["path"] as? String)?.hasSuffix("data.txt") == true && member["method"] as? Int == 8, "\(member)")
        #expect(try CLI.assetpack(["verify-published", s.out, "--key", s.pub]).out.isEmpty)
        // A damaged glue file is an error of its own line; the pack stays clean.
        try s.flipByte("out/\(url).glue", at: 10)
        let r = try CLI.assetpack(["verify-published", s.out, "--key", s.pub])
        #expect(r.status == 1)
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 1 && lines[0].hasPrefix("error: \(url).glue: pack 'Tutorial': "), "\(r.out)")
        // Publishing again mends it.
        #expect(try s.publish([pack, "--sign", s.key]).status == 0)
        #expect(try CLI.assetpack(["verify-published", s.out, "--key", s.pub]).status == 0)
    }
}

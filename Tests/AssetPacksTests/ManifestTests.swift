import Foundation
import Testing
import AssetPacks
import AssetArchive

@Suite struct ManifestTests {
    @Test func parsesApplesFormatWithComments() throws {
        let json = """
            {
              // line comment
              "assetPackID": "Tutorial",
              /* block comment */
              "downloadPolicy": { "prefetch": { "installationEventTypes": ["firstInstallation", "subsequentUpdate"] } },
              "fileSelectors": [ { "file": "Videos/Intro.m4v" }, { "directory": "Levels", "compression": "stored" } ],
              "platforms": ["iOS", "macOS", "linux"]
            }
            """
        let m = try AssetPackManifest.parse(Data(json.utf8), path: "m.json")
        #expect(m.assetPackID == "Tutorial")
        #expect(m.downloadPolicy == .prefetch([.firstInstallation, .subsequentUpdate]))
        #expect(m.fileSelectors == [.file("Videos/Intro.m4v", compression: .automatic), .directory("Levels", compression: .stored)])
        #expect(m.platforms == [.iOS, .macOS, .linux])
    }

    @Test func onDemandTakesAnEmptyObject() throws {
        let m = try AssetPackManifest.parse(Data(#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x"}]}"#.utf8), path: "m")
        #expect(m.downloadPolicy == .onDemand)
        #expect(m.platforms.isEmpty)
    }

    @Test(arguments: [
        ("[]", ""),
        ("{", ""),
        (#"{"downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x"}]}"#, "assetPackID"),
        (#"{"assetPackID":7,"downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x"}]}"#, "assetPackID"),
        (#"{"assetPackID":"a b","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x"}]}"#, "assetPackID"),
        (#"{"assetPackID":"a","fileSelectors":[{"file":"x"}]}"#, "downloadPolicy"),
        (#"{"assetPackID":"a","downloadPolicy":{},"fileSelectors":[{"file":"x"}]}"#, "downloadPolicy"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{},"prefetch":{}},"fileSelectors":[{"file":"x"}]}"#, "downloadPolicy"),
        (#"{"assetPackID":"a","downloadPolicy":{"sometimes":{}},"fileSelectors":[{"file":"x"}]}"#, "downloadPolicy.sometimes"),
        (#"{"assetPackID":"a","downloadPolicy":{"essential":{}},"fileSelectors":[{"file":"x"}]}"#, "downloadPolicy.essential.installationEventTypes"),
        (#"{"assetPackID":"a","downloadPolicy":{"essential":{"installationEventTypes":["later"]}},"fileSelectors":[{"file":"x"}]}"#, "downloadPolicy.essential.installationEventTypes[0]"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{"x":1}},"fileSelectors":[{"file":"x"}]}"#, "downloadPolicy.onDemand.x"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}}}"#, "fileSelectors"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[]}"#, "fileSelectors"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{}]}"#, "fileSelectors[0]"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x"},{"file":"a","directory":"b"}]}"#, "fileSelectors[1]"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":""}]}"#, "fileSelectors[0].file"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x","compression":"zstd"}]}"#, "fileSelectors[0].compression"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"path":"x"}]}"#, "fileSelectors[0].path"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x"}],"platforms":["amiga"]}"#, "platforms[0]"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x"}],"platforms":"linux"}"#, "platforms"),
        (#"{"assetPackID":"a","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"x"}],"extra":true}"#, "extra"),
    ])
    func everyErrorNamesItsField(json: String, field: String) {
        do {
            _ = try AssetPackManifest.parse(Data(json.utf8), path: "bad.json")
            Issue.record("accepted \(json)")
        } catch {
            guard case .invalidManifest(let path, let f, let reason) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(path == "bad.json")
            #expect(f == field)
            #expect(!reason.isEmpty)
        }
    }

    /// Malformed JSON is an invalid-manifest error saying where, never a
    /// crash: `[2e-]` and an unquoted key with invalid UTF-8 made
    /// `JSONDecoder` trap.
    @Test(arguments: [
        (Array("[2e-]".utf8), "not valid JSON: line 1, column 5: invalid number: expected a digit in the exponent, found ']'"),
        ([0x7b, 0x61, 0xf8, 0x3a, 0x20, 0x31, 0x7d], "not valid JSON: line 1, column 2: expected a string key or '}', found 'a'"),
        (Array("{\n  \"assetPackID\": 'a'\n}".utf8), "not valid JSON: line 2, column 18: expected a value, found \"'\""),
        (Array("{\"assetPackID\": \"a\",,}".utf8), "not valid JSON: line 1, column 21: expected a string key, found ','"),
        (Array("{\"assetPackID\": \"é\" /* unterminated".utf8),
         "not valid JSON: line 1, column 36: expected '*/' to end the comment that starts at line 1, column 21, found the end of the document"),
        (Array("".utf8), "not valid JSON: line 1, column 1: expected a value, found the end of the document"),
    ])
    func invalidJSONSaysWhere(bytes: [UInt8], reason: String) {
        do {
            _ = try AssetPackManifest.parse(Data(bytes), path: "bad.json")
            Issue.record("accepted")
        } catch {
            guard case .invalidManifest("bad.json", "", let r) = error else { Issue.record("wrong error \(error)"); return }
            #expect(r == reason)
        }
    }

    @Test func trailingCommasAreAllowed() throws {
        let json = """
            {
              "assetPackID": "a",
              "downloadPolicy": { "onDemand": {}, },
              "fileSelectors": [ { "file": "x", }, ],
            }
            """
        let m = try AssetPackManifest.parse(Data(json.utf8), path: "m.json")
        #expect(m.fileSelectors == [.file("x", compression: .automatic)])
    }

    @Test func roundTripsThroughTheArchiveComment() throws {
        let d = PackDescription(id: "x.y-z_1", downloadPolicy: .essential([.subsequentUpdate]), platforms: [.linux, .visionOS])
        #expect(try PackDescription.decode(archiveComment: d.archiveComment, archive: "a") == d)
        #expect(try PackDescription.decode(archiveComment: Array("just a comment".utf8), archive: "a") == nil)
        #expect(d.archiveComment == d.archiveComment)
    }

    @Test(arguments: [
        ("[2e-]", "not valid JSON: line 1, column 5: invalid number: expected a digit in the exponent, found ']'"),
        ("{\"assetPackID\":\"a\",\n \"assetPackID\":\"b\"}", "not valid JSON: line 2, column 2: duplicate key \"assetPackID\" in object"),
        ("{\"assetPackID\":\"a\"} // note", "not valid JSON: line 1, column 21: unexpected '/' after the document's value"),
        ("[]", "not a JSON object"),
        ("{\"downloadPolicy\":{\"onDemand\":{}}}", "assetPackID is missing"),
    ])
    func recordedManifestRefusalsSayWhere(json: String, reason: String) {
        let comment = Array("AssetPacks-Manifest/1\n".utf8) + Array(json.utf8)
        #expect {
            try PackDescription.decode(archiveComment: comment, archive: "p.zip")
        } throws: { error in
            guard case StoreError.invalidRecordedManifest("p.zip", let r) = error else { return false }
            return r == reason
        }
    }

    @Test func recordedManifestWithInvalidUTF8IsRefused() {
        let comment = Array("AssetPacks-Manifest/1\n{\"assetPackID\":\"".utf8) + [0xc0, 0xaf] + Array("\"}".utf8)
        #expect {
            try PackDescription.decode(archiveComment: comment, archive: "p.zip")
        } throws: { error in
            guard case StoreError.invalidRecordedManifest(_, let r) = error else { return false }
            return r == "not valid JSON: line 1, column 17: invalid UTF-8 (byte 0xC0)"
        }
    }

    /// Packs made before stay byte-identical: the recorded manifest is the
    /// marker line and compact JSON with sorted keys, exactly these bytes.
    @Test(arguments: [
        (PackDescription(id: "bench", downloadPolicy: .onDemand, platforms: [.linux]),
         #"{"assetPackID":"bench","downloadPolicy":{"onDemand":{}},"platforms":["linux"]}"#),
        (PackDescription(id: "x.y-z_1", downloadPolicy: .essential([.subsequentUpdate]), platforms: [.linux, .visionOS]),
         #"{"assetPackID":"x.y-z_1","downloadPolicy":{"essential":{"installationEventTypes":["subsequentUpdate"]}},"platforms":["linux","visionOS"]}"#),
        (PackDescription(id: "Tutorial", downloadPolicy: .prefetch([.subsequentUpdate, .firstInstallation]), platforms: []),
         #"{"assetPackID":"Tutorial","downloadPolicy":{"prefetch":{"installationEventTypes":["firstInstallation","subsequentUpdate"]}},"platforms":[]}"#),
    ])
    func archiveCommentBytesAreStable(description: PackDescription, json: String) {
        #expect(description.archiveComment == Array(("AssetPacks-Manifest/1\n" + json).utf8))
    }
}

@Suite struct PackagingTests {
    final class Tree {
        let root = FileManager.default.temporaryDirectory.path + "/packaging-\(UUID().uuidString.prefix(8))"
        init() { try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: root) }
        func write(_ rel: String, _ text: String) throws {
            let full = root + "/" + rel
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: full))
        }
        func manifest(_ selectors: String) throws -> String {
            try write("manifest.json", #"{"assetPackID":"p","downloadPolicy":{"onDemand":{}},"fileSelectors":["# + selectors + "]}")
            return root + "/manifest.json"
        }
    }

    @Test func selectsFilesAndDirectoriesRecursivelyOnce() throws {
        let t = Tree()
        try t.write("a.txt", "a")
        try t.write("dir/b.txt", "b")
        try t.write("dir/sub/c.txt", "c")
        try t.write("other/d.txt", "d")
        let m = try t.manifest(#"{"file":"a.txt"},{"directory":"dir"},{"file":"./dir/b.txt","compression":"stored"}"#)
        let archive = try Packager.package(manifestAt: m, output: t.root + "/out.zip")
        #expect(archive.entries.map(\.path) == ["a.txt", "dir/b.txt", "dir/sub/c.txt"])
        #expect(archive.entries[1].method == .stored)
        let description = try PackDescription.decode(archiveComment: archive.comment, archive: "out.zip")
        #expect(description?.id == "p")
    }

    @Test(arguments: [
        (#"{"file":"missing.txt"}"#, "fileSelectors[0].file"),
        (#"{"file":"../outside.txt"}"#, "fileSelectors[0].file"),
        (#"{"file":"/etc/passwd"}"#, "fileSelectors[0].file"),
        (#"{"file":"dir"}"#, "fileSelectors[0].file"),
        (#"{"directory":"a.txt"}"#, "fileSelectors[0].directory"),
        (#"{"directory":"emptydir"}"#, "fileSelectors[0].directory"),
        (#"{"file":"a.txt"},{"directory":"nope"}"#, "fileSelectors[1].directory"),
    ])
    func selectionErrorsNameTheSelector(selectors: String, field: String) throws {
        let t = Tree()
        try t.write("a.txt", "a")
        try t.write("dir/b.txt", "b")
        try FileManager.default.createDirectory(atPath: t.root + "/emptydir", withIntermediateDirectories: true)
        let m = try t.manifest(selectors)
        do {
            try Packager.package(manifestAt: m, output: t.root + "/out.zip")
            Issue.record("packaged \(selectors)")
        } catch {
            guard case .invalidManifest(_, let f, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(f == field)
        }
        #expect(!FileManager.default.fileExists(atPath: t.root + "/out.zip"))
    }

    @Test func rootOptionOverridesTheManifestDirectory() throws {
        let t = Tree()
        try t.write("content/x.txt", "x")
        let m = try t.manifest(#"{"file":"x.txt"}"#)
        let archive = try Packager.package(manifestAt: m, root: t.root + "/content", output: t.root + "/out.zip")
        #expect(archive.entries.map(\.path) == ["x.txt"])
    }
}

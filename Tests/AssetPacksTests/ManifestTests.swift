import Foundation
import Testing
import AssetPacks
import TestSupport

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
            #expect(error.code == .invalidManifest && error.path == "bad.json", "\(error)")
            #expect((error.field ?? "") == field)
            #expect(error.reason == (json == "{" ? .invalidJSON : .invalidField))
            #expect(error.message.hasPrefix("bad.json") && !error.message.contains("\n"))
        }
    }

    @Test func aDirectoryOrAMissingFileIsNamedWithoutFoundationsWords() throws {
        let dir = FileManager.default.temporaryDirectory.path + "/manifest-dir-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for path in [dir, dir + "/missing.json"] {
            do {
                _ = try AssetPackManifest.load(path: path)
                Issue.record("loaded \(path)")
            } catch {
                #expect(error.path == path, "\(error)")
                #expect(!error.message.contains("NSCocoaErrorDomain") && !error.message.contains("error 256"), "\(error.message)")
                #expect(error.localizedDescription == error.message)
            }
        }
        do { _ = try AssetPackManifest.load(path: dir) } catch {
            #expect(error.code == .invalidManifest && error.reason == .unreadableManifest)
        }
        do { _ = try AssetPackManifest.load(path: dir + "/missing.json") } catch {
            #expect(error.code == .system && error.systemError == ENOENT)
        }
    }

    @Test func roundTripsThroughThePacksArchiveComment() throws {
        let t = PackagingTests.Tree()
        try t.write("x.txt", "x")
        let m = AssetPackManifest(assetPackID: "x.y-z_1", downloadPolicy: .essential([.subsequentUpdate]),
                                  fileSelectors: [.file("x.txt", compression: .automatic)], platforms: [.linux, .visionOS])
        let pack = try Packager.package(m, root: t.root, manifestPath: "m", output: t.root + "/out.zip")
        #expect(pack.id == m.assetPackID && pack.recordsManifest)
        #expect(pack.downloadPolicy == m.downloadPolicy && pack.platforms == m.platforms)
        let inspected = try AssetPackFile.inspect(at: t.root + "/out.zip")
        #expect(inspected == pack)
    }

    /// Malformed JSON is an invalid-manifest error saying where, never a
    /// crash: `[2e-]` and an unquoted key with invalid UTF-8 made
    /// `JSONDecoder` trap.
    @Test(arguments: [
        (Array("[2e-]".utf8), 1, 5, "invalid number: expected a digit in the exponent, found ']'"),
        ([0x7b, 0x61, 0xf8, 0x3a, 0x20, 0x31, 0x7d], 1, 2, "expected a string key or '}', found 'a'"),
        (Array("{\n  \"assetPackID\": 'a'\n}".utf8), 2, 18, "expected a value, found \"'\""),
        (Array("{\"assetPackID\": \"a\",,}".utf8), 1, 21, "expected a string key, found ','"),
        (Array("{\"assetPackID\": \"é\" /* unterminated".utf8), 1, 36,
         "expected '*/' to end the comment that starts at line 1, column 21, found the end of the document"),
        (Array("".utf8), 1, 1, "expected a value, found the end of the document"),
    ])
    func invalidJSONSaysWhere(bytes: [UInt8], line: Int, column: Int, reason: String) {
        do {
            _ = try AssetPackManifest.parse(Data(bytes), path: "bad.json")
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidManifest && error.reason == .invalidJSON, "\(error)")
            #expect(error.path == "bad.json" && error.line == line && error.column == column)
            #expect(error.message == "bad.json:\(line):\(column): not valid JSON: \(reason)")
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
}

@Suite struct PackagingTests {
    final class Tree {
        let directory = TemporaryDirectory("packaging")
        var root: String { directory.path }
        func write(_ rel: String, _ text: String) throws { try directory.write(rel, text) }
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
        let pack = try Packager.package(manifestAt: m, output: t.root + "/out.zip")
        #expect(pack.members.map(\.path) == ["a.txt", "dir/b.txt", "dir/sub/c.txt"])
        #expect(pack.members[1].method == .stored)
        #expect(pack.id == "p")
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
            #expect(error.code == .invalidManifest && error.reason == .invalidSelection, "\(error)")
            #expect(error.field == field)
        }
        #expect(!FileManager.default.fileExists(atPath: t.root + "/out.zip"))
    }

    @Test func rootOptionOverridesTheManifestDirectory() throws {
        let t = Tree()
        try t.write("content/x.txt", "x")
        let m = try t.manifest(#"{"file":"x.txt"}"#)
        let pack = try Packager.package(manifestAt: m, root: t.root + "/content", output: t.root + "/out.zip")
        #expect(pack.members.map(\.path) == ["x.txt"])
    }
}

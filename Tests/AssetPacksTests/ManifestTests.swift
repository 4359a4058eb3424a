import Foundation
import Testing
import AssetPacks
import AssetArchive
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
            guard case .invalidManifest(let path, let f, let reason) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(path == "bad.json")
            #expect(f == field)
            #expect(!reason.isEmpty)
        }
    }

    @Test func roundTripsThroughTheArchiveComment() throws {
        let d = PackDescription(id: "x.y-z_1", downloadPolicy: .essential([.subsequentUpdate]), platforms: [.linux, .visionOS])
        #expect(try PackDescription.decode(archiveComment: d.archiveComment, archive: "a") == d)
        #expect(try PackDescription.decode(archiveComment: Array("just a comment".utf8), archive: "a") == nil)
        #expect(d.archiveComment == d.archiveComment)
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

import AssetArchive
import Foundation
import Testing
import TestSupport

/// Independent witnesses: archives the writer makes must satisfy `unzip`
/// and Python's `zipfile`, and archives those tools make must read here
/// exactly as `unzip -p` extracts them. Fixtures are generated at test time.
@Suite(.enabled(if: Program.available("unzip", "zip", "python3", "sh")))
struct InteropTests {
    let directory = TemporaryDirectory()

    /// Writer input covering every layout: stored and deflated, aligned
    /// large members, empty, nested, non-ASCII names, a comment.
    private func writeSample() throws -> (path: String, inputs: [String: [UInt8]]) {
        let inputs: [String: [UInt8]] = [
            "readme.txt": text(lines: 300), "empty": [], "media/clip.mp4": noise(100_000),
            "données/日本.txt": Array("こんにちは\n".utf8), "nested/a/b/c.json": Array("{\"k\": [1, 2, 3]}".utf8),
            "big/noise.bin": noise(300_000, seed: 7), "big/text.txt": text(lines: 20_000),
        ]
        let path = directory.file("sample.zip")
        try ArchiveWriter.write(inputs.map { .init(path: $0.key, source: .bytes($0.value)) },
                                comment: Array("pack comment".utf8), to: path)
        return (path, inputs)
    }

    @Test func unzipTestsWriterOutput() throws {
        let (path, _) = try writeSample()
        let result = try Program.run("unzip", ["-t", path], directory: directory.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.out.contains("No errors detected"))
    }

    @Test func pythonReadsWriterOutputByteForByte() throws {
        let (path, inputs) = try writeSample()
        let script = """
            import hashlib, json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            print(json.dumps({i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist()}))
            """
        let output = try Program.run("python3", ["-c", script, path], directory: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        let digests = try JSONDecoder().decode([String: String].self, from: output.stdout)
        #expect(digests == inputs.mapValues { bytes in SHA256.hex(bytes.withUnsafeBytes { SHA256.hash($0) }) })
    }

    /// Parses the archive at `path` and checks that its members, in
    /// central-directory order, extract to exactly what `unzip -p` prints.
    @discardableResult
    private func expectReadsLikeUnzip(_ name: String) throws -> ZipArchive {
        let path = directory.file(name)
        let archive = try ZipArchive.open(path: path)
        let bytes = try directory.read(name)
        var ours: [UInt8] = []
        try bytes.withUnsafeBytes { b in
            for entry in archive.entries {
                try ZipArchive.verify(entry, in: b, archive: name)
                ours += try ZipArchive.extract(entry, from: b, archive: name)
            }
        }
        let unzip = try Program.run("unzip", ["-p", path], directory: directory.path)
        #expect(unzip.status == 0, "\(unzip.stderr)")
        #expect(ours.count == unzip.stdout.count, "\(name)")
        #expect(ours == unzip.stdoutBytes, "\(name)")
        return archive
    }

    /// Whether every member of `name` has flag bit 3 (a data descriptor).
    private func allStreamed(_ name: String, _ archive: ZipArchive) throws -> Bool {
        let bytes = try directory.read(name)
        return archive.entries.allSatisfy { bytes.u16(Int($0.localHeaderOffset) + 6) & 8 != 0 }
    }

    private func makeTree() throws {
        try directory.write("tree/readme.txt", text(lines: 200))
        try directory.write("tree/data/noise.bin", noise(70_000))
        try directory.write("tree/data/empty.txt", [])
        try directory.write("tree/données/日本.txt", Array("日本語のテキスト\n".utf8))
        try FileManager.default.createDirectory(atPath: directory.file("tree/empty-dir"), withIntermediateDirectories: true)
    }

    @Test func infoZipArchives() throws {
        try makeTree()
        try Program.output("sh", ["-c", "zip -q -r deflated.zip tree"], directory: directory.path)
        try Program.output("sh", ["-c", "zip -q -0 -r stored.zip tree"], directory: directory.path)
        try Program.output("sh", ["-c", "zip -q -r - tree | cat > streamed-tree.zip"], directory: directory.path)
        let deflated = try expectReadsLikeUnzip("deflated.zip")
        #expect(deflated.entries.count == 4)
        #expect(deflated.directoryCount == 4)
        #expect(deflated.entries.contains { $0.method == .deflated })
        #expect(deflated.entries.contains { $0.path == "tree/données/日本.txt" })
        let stored = try expectReadsLikeUnzip("stored.zip")
        #expect(stored.entries.allSatisfy { $0.method == .stored })
        let streamed = try expectReadsLikeUnzip("streamed-tree.zip")
        #expect(streamed.entries.count == 4)
        #expect(try allStreamed("streamed-tree.zip", streamed))
        #expect(try !allStreamed("deflated.zip", deflated))
    }

    @Test func infoZipFromStandardInput() throws {
        try Program.output("sh", ["-c", "printf 'hello from a pipe\\n%.0s' $(seq 1 500) | zip -q stdin.zip -"], directory: directory.path)
        try Program.output("sh", ["-c", "printf 'streamed both ways\\n%.0s' $(seq 1 500) | zip -q - - | cat > stdout.zip"], directory: directory.path)
        let fromPipe = try expectReadsLikeUnzip("stdin.zip")
        #expect(fromPipe.entries.map(\.path) == ["-"])
        let streamed = try expectReadsLikeUnzip("stdout.zip")
        #expect(streamed.entries.map(\.path) == ["-"])
        #expect(streamed.entries[0].uncompressedSize == 19 * 500)
        #expect(try allStreamed("stdout.zip", streamed))
    }

    @Test func pythonArchives() throws {
        let script = """
            import io, json, zipfile
            class Unseekable(io.RawIOBase):
                def __init__(self, f): self.f = f
                def writable(self): return True
                def write(self, b): return self.f.write(b)
            files = {"a.txt": b"alpha " * 500, "sub/b.bin": bytes(range(256)) * 40, "empty": b"",
                     "données/日本.txt": "日本語\\n".encode()}
            names = {}
            for name, method in [("py-stored.zip", zipfile.ZIP_STORED), ("py-deflated.zip", zipfile.ZIP_DEFLATED)]:
                with zipfile.ZipFile(name, "w", method) as z:
                    z.mkdir("sub") if hasattr(z, "mkdir") else None
                    for k, v in files.items(): z.writestr(k, v)
                    names[name] = [i.filename for i in z.infolist() if not i.is_dir()]
            with open("py-stream.zip", "wb") as raw:
                with zipfile.ZipFile(Unseekable(raw), "w", zipfile.ZIP_DEFLATED) as z:
                    for k, v in files.items():
                        with z.open(k, "w") as f: f.write(v)
                    names["py-stream.zip"] = [i.filename for i in z.infolist()]
            with zipfile.ZipFile("py-zip64.zip", "w", zipfile.ZIP_DEFLATED) as z:
                for k, v in files.items():
                    with z.open(k, "w", force_zip64=True) as f: f.write(v)
                names["py-zip64.zip"] = [i.filename for i in z.infolist()]
            with open("py-stream64.zip", "wb") as raw:
                with zipfile.ZipFile(Unseekable(raw), "w", zipfile.ZIP_STORED) as z:
                    for k, v in files.items():
                        with z.open(k, "w", force_zip64=True) as f: f.write(v)
                    names["py-stream64.zip"] = [i.filename for i in z.infolist()]
            print(json.dumps(names))
            """
        let output = try Program.output("python3", ["-c", script], directory: directory.path)
        let names = try JSONDecoder().decode([String: [String]].self, from: Data(output))
        #expect(names.count == 5)
        for (archiveName, expected) in names.sorted(by: { $0.key < $1.key }) {
            let archive = try expectReadsLikeUnzip(archiveName)
            #expect(archive.entries.map(\.path) == expected, "\(archiveName)")
            #expect(try allStreamed(archiveName, archive) == archiveName.hasPrefix("py-stream"), "\(archiveName)")
        }
        #expect(try ZipArchive.open(path: directory.file("py-zip64.zip")).usesZip64)
    }

    @Test func pythonArchiveWith70000Entries() throws {
        let script = """
            import zipfile
            with zipfile.ZipFile("many.zip", "w", zipfile.ZIP_STORED) as z:
                for i in range(70000):
                    z.writestr(f"d{i % 100}/f{i}.txt", f"member {i}\\n")
            """
        try Program.output("python3", ["-c", script], directory: directory.path)
        let path = directory.file("many.zip")
        let archive = try ZipArchive.open(path: path)
        #expect(archive.entries.count == 70_000)
        #expect(archive.usesZip64)
        let bytes = try directory.read("many.zip")
        for index in [0, 1, 99, 12_345, 65_534, 65_535, 65_536, 69_999] {
            let entry = archive.entries[index]
            #expect(entry.path == "d\(index % 100)/f\(index).txt")
            let ours = try bytes.withUnsafeBytes { try ZipArchive.extract(entry, from: $0, archive: "many.zip") }
            let unzip = try Program.run("unzip", ["-p", path, entry.path], directory: directory.path)
            #expect(ours == unzip.stdoutBytes)
            #expect(ours == Array("member \(index)\n".utf8))
        }
    }
}

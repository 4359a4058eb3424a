import Foundation
import Synchronization
import AssetPacks
import TestSupport

/// libassetpacks as the tests build against it: the debug build's
/// `libassetpacks.so` beside the test bundle, the header in the source tree,
/// and C programs compiled against both (cached per process, since every
/// test uses the same few).
enum CLibrary {
    /// The package's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The directory with `assetpacks.h`.
    static let includeDirectory = root + "/Sources/CAssetPacksHeader/include"
    static let header = includeDirectory + "/assetpacks.h"
    /// The C programs of these tests.
    static let programs = root + "/Tests/CLibraryTests/Programs"

    /// The directory holding the built `libassetpacks.so`: the test bundle's
    /// or one of its parents.
    static let libraryDirectory: String = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("libassetpacks.so").path) {
                return directory.path
            }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
    }()
    static var library: String { libraryDirectory + "/libassetpacks.so" }

    /// What a program needs to compile and link against the library, run
    /// from anywhere (the library found through the rpath).
    static var linkFlags: [String] {
        ["-I", includeDirectory, "-L", libraryDirectory, "-lassetpacks", "-Wl,-rpath," + libraryDirectory]
    }

    private static let compiler = CCompiler("clib")
    private static let built = Mutex<[String: String]>([:])

    /// `source` (a path) built once into an executable with `extra` flags;
    /// returns its path.
    static func program(_ source: String, extra: [String] = [], name: String? = nil) throws -> String {
        let key = ([source] + extra).joined(separator: " ")
        // Built under the lock, so two tests never write one file while
        // another runs it.
        return try built.withLock { (built) throws -> String in
            if let path = built[key] { return path }
            let output = name ?? URL(fileURLWithPath: source).deletingPathExtension().lastPathComponent + "-\(built.count)"
            let path = try compiler.build(output, sources: [source], flags: linkFlags + extra)
            built[key] = path
            return path
        }
    }

    /// Builds the C text `source` as the program `name` against the
    /// library and runs it with `arguments`.
    static func run(_ name: String, source: String, _ arguments: [String] = []) throws -> Program.Result {
        let file = compiler.directory.file(name + ".c")
        try Data(source.utf8).write(to: URL(fileURLWithPath: file))
        return try Program.run(try compiler.build(name, sources: [file], flags: linkFlags), arguments)
    }

    /// The driver of Programs/apdriver.c.
    static func driver() throws -> String { try program(programs + "/apdriver.c") }

    /// Runs the driver on `container` with `arguments` (options first).
    static func drive(_ arguments: [String], environment: [String: String]? = nil) throws -> Program.Result {
        try Program.run(try driver(), arguments, environment: environment)
    }
}

/// One line of the driver's stderr on failure, taken apart.
struct DriverError: Equatable {
    let code: Int32
    let name: String
    let reason: Int32
    let pack: String?
    let member: String?
    let path: String?
    let message: String

    init?(_ stderr: String) {
        let line = stderr.split(separator: "\n").first.map(String.init) ?? ""
        guard line.hasPrefix("error="), let colon = line.range(of: ": ") else { return nil }
        var fields: [String: String] = [:]
        var name = ""
        for part in line[..<colon.lowerBound].split(separator: " ") {
            let kv = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2 else { continue }
            fields[kv[0]] = kv[1]
            if kv[0] == "name" { name = kv[1] }
        }
        // ap_strerror's text has spaces: everything from name= to reason=.
        if let n = line.range(of: "name="), let r = line.range(of: " reason=") { name = String(line[n.upperBound..<r.lowerBound]) }
        func optional(_ key: String) -> String? { fields[key].flatMap { $0 == "(null)" ? nil : $0 } }
        guard let code = fields["error"].flatMap({ Int32($0) }), let reason = fields["reason"].flatMap({ Int32($0) }) else { return nil }
        self.code = code
        self.name = name
        self.reason = reason
        pack = optional("pack")
        member = optional("member")
        path = optional("path")
        message = String(line[colon.upperBound...])
    }
}

/// A container with two packs the tests read through C.
///
/// - `base` (manifest ID `base`): `hello.txt` (deflated text),
///   `media/clip.bin` (70,000 stored noise bytes), `media/tiny.bin`
///   (5 stored bytes), `empty.txt` (0 bytes), `shared.txt` (stored);
/// - `extra`: `shared.txt` too (so a path-only lookup of it is ambiguous),
///   `only-extra.txt`.
final class CFixture {
    let directory = TemporaryDirectory("assetpacks-clib")
    var container: String { directory.file("container") }
    let hello = Array(String(repeating: "hello from the C library\n", count: 200).utf8)
    let clip = noise(70_000, seed: 0xC11B)
    let tiny: [UInt8] = [1, 2, 3, 4, 5]
    let manager: AssetPackManager

    init() throws {
        let base = directory.directory("base")
        try directory.write("base/hello.txt", hello)
        try directory.write("base/media/clip.bin", clip)
        try directory.write("base/media/tiny.bin", tiny)
        try directory.write("base/empty.txt", [])
        try directory.write("base/shared.txt", "base's\n")
        try directory.write("extra/shared.txt", "extra's\n")
        try directory.write("extra/only-extra.txt", "only in extra\n")
        try Self.pack("base", root: base, to: directory.file("base.zip"), selectors: [
            .file("hello.txt", compression: .deflated), .directory("media", compression: .stored),
            .file("empty.txt", compression: .stored), .file("shared.txt", compression: .stored),
        ])
        try Self.pack("extra", root: directory.file("extra"), to: directory.file("extra.zip"),
                      selectors: [.directory(".", compression: .stored)])
        manager = try AssetPackManager(container: .init(path: directory.file("container")))
        try manager.installPack(at: directory.file("base.zip"))
        try manager.installPack(at: directory.file("extra.zip"))
    }

    static func pack(_ id: String, root: String, to output: String, selectors: [AssetPackManifest.FileSelector]) throws {
        let manifest = AssetPackManifest(assetPackID: id, downloadPolicy: .onDemand, fileSelectors: selectors, platforms: [])
        try Packager.package(manifest, root: root, manifestPath: "\(id).json", output: output)
    }
}

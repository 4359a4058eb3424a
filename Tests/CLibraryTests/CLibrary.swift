import Foundation
import Synchronization
import AssetPacks
import TestSupport

/// libassetpacks as the tests build against it: installed by
/// scripts/install-c-library, and C programs compiled with what
/// `pkg-config --cflags --libs assetpacks` says for that tree (cached per
/// process, since every test uses the same few).
///
/// The tree is `ASSETPACKS_CLIB_PREFIX` when set — scripts/test installs
/// the release library there (Swift runtime inside) before the suite — and
/// otherwise one installed per test process from the debug build beside
/// the test bundle (`install-c-library --prebuilt`), so a plain
/// `swift test` tests the same layout.
enum CLibrary {
    /// The package's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The C programs of these tests.
    static let programs = root + "/Tests/CLibraryTests/Programs"

    /// An installed tree: `lib/libassetpacks.so`, `include/assetpacks.h`,
    /// `lib/pkgconfig/assetpacks.pc`.
    struct Installation: Sendable {
        let prefix: String
        /// Installed from the release build (scripts/test), not from the
        /// debug build: the one that must run without the toolchain.
        let isRelease: Bool
        /// `pkg-config --cflags --libs assetpacks` for it, split.
        let flags: [String]
        /// What an install failure said, to fail every test with.
        let failure: String?
    }

    static let installation: Installation = {
        let given = ProcessInfo.processInfo.environment["ASSETPACKS_CLIB_PREFIX"].flatMap { $0.isEmpty ? nil : $0 }
        let prefix: String
        if let given, FileManager.default.fileExists(atPath: given + "/lib/libassetpacks.so") {
            prefix = given
        } else {
            prefix = scratch.file("prefix")
            do {
                let r = try Program.run(root + "/scripts/install-c-library", ["--prebuilt", debugBuildDirectory, prefix])
                guard r.status == 0 else { return Installation(prefix: prefix, isRelease: false, flags: [], failure: r.stderr) }
            } catch {
                return Installation(prefix: prefix, isRelease: false, flags: [], failure: "\(error)")
            }
        }
        var environment = ProcessInfo.processInfo.environment
        environment["PKG_CONFIG_PATH"] = prefix + "/lib/pkgconfig"
        guard let r = try? Program.run("pkg-config", ["--cflags", "--libs", "assetpacks"], environment: environment), r.status == 0 else {
            return Installation(prefix: prefix, isRelease: false, flags: [], failure: "pkg-config --cflags --libs assetpacks failed in \(prefix)")
        }
        return Installation(prefix: prefix, isRelease: given != nil && prefix == given,
                            flags: r.out.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init), failure: nil)
    }()
    private static let scratch = TemporaryDirectory("assetpacks-clib-install")

    struct InstallFailure: Error, CustomStringConvertible { let description: String }

    /// The installed tree, or the install's failure.
    static func installed() throws -> Installation {
        if let failure = installation.failure { throw InstallFailure(description: "install-c-library: \(failure)") }
        return installation
    }

    /// The directory with the installed `assetpacks.h`.
    static var includeDirectory: String { installation.prefix + "/include" }
    static var header: String { includeDirectory + "/assetpacks.h" }
    static var libraryDirectory: String { installation.prefix + "/lib" }
    static var library: String { libraryDirectory + "/libassetpacks.so" }
    /// `PKG_CONFIG_PATH` for the installed tree.
    static var pkgConfigPath: String { libraryDirectory + "/pkgconfig" }

    /// The directory of the debug build's `libassetpacks.so`: the test
    /// bundle's or one of its parents.
    static let debugBuildDirectory: String = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("libassetpacks.so").path) {
                return directory.path
            }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
    }()

    /// What a program needs to compile and link against the installed
    /// library: pkg-config's flags (the library found through its rpath).
    static func linkFlags() throws -> [String] { try installed().flags }

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
            let path = try compiler.build(output, sources: [source], flags: try linkFlags() + extra)
            built[key] = path
            return path
        }
    }

    /// Builds the C text `source` as the program `name` against the
    /// library and runs it with `arguments`.
    static func run(_ name: String, source: String, _ arguments: [String] = []) throws -> Program.Result {
        let file = compiler.directory.file(name + ".c")
        try Data(source.utf8).write(to: URL(fileURLWithPath: file))
        return try Program.run(try compiler.build(name, sources: [file], flags: try linkFlags()), arguments)
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

import Foundation
import Testing
import TestSupport

/// scripts/install-c-library and the tree it installs. A program built with
/// `cc … $(pkg-config --cflags --libs assetpacks)` against the release
/// library must run with no Swift toolchain directory on its library path:
/// checked on the tree scripts/test installs before the suite
/// (`ASSETPACKS_CLIB_PREFIX`), and with `ASSETPACKS_SOAK=1` on a fresh
/// install of its own (a release build: a minute or more).
@Suite struct InstallScriptTests {
    static let soak = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1"
    static let script = CLibrary.root + "/scripts/install-c-library"

    @Test func installedTreeHoldsTheHeaderAndAPkgConfigFileForIt() throws {
        let tree = try CLibrary.installed()
        let header = try Data(contentsOf: URL(fileURLWithPath: tree.prefix + "/include/assetpacks.h"))
        #expect(header == (try Data(contentsOf: URL(fileURLWithPath: CLibrary.root + "/Sources/CAssetPacksHeader/include/assetpacks.h"))))
        #expect(tree.flags.contains("-I" + tree.prefix + "/include"), "\(tree.flags)")
        #expect(tree.flags.contains("-L" + tree.prefix + "/lib") && tree.flags.contains("-lassetpacks"), "\(tree.flags)")
        #expect(tree.flags.contains("-Wl,-rpath," + tree.prefix + "/lib"), "\(tree.flags)")
        // The plain-C client comes with it.
        #expect(FileManager.default.fileExists(atPath: tree.prefix + "/lib/pkgconfig/assetpacks-client.pc"))
        #expect(FileManager.default.fileExists(atPath: tree.prefix + "/include/assetpacks-client.h"))
    }

    @Test func refusesWhatItDoesNotUnderstand() throws {
        let work = TemporaryDirectory("assetpacks-clib-script")
        for arguments in [["--bogus"], ["a", "b"], ["--prebuilt"], ["--prebuilt", "x", "y", "z"]] {
            let r = try Program.run(Self.script, arguments)
            #expect(r.status == 64 && r.stderr.hasPrefix("usage: scripts/install-c-library"), "\(arguments): \(r.stderr)")
        }
        let missing = try Program.run(Self.script, ["--prebuilt", work.file("nothing-here"), work.file("prefix")])
        #expect(missing.status == 1 && missing.stderr == "install-c-library: no libassetpacks.so in \(work.file("nothing-here"))\n",
                "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work.file("prefix")))
        let help = try Program.run(Self.script, ["--help"])
        #expect(help.status == 0 && help.out.contains("--prebuilt DIR") && !help.out.contains("set -euo"), "\(help.out)")
    }

    /// Relative paths are the caller's, not the repository's.
    @Test func relativePathsAreTakenFromTheCallersDirectory() throws {
        let work = TemporaryDirectory("assetpacks-clib-relative")
        let r = try Program.run("sh", ["-c", "cd '\(work.path)' && '\(Self.script)' --prebuilt '\(CLibrary.debugBuildDirectory)' tree"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: work.file("tree/lib/libassetpacks.so")))
        #expect(FileManager.default.fileExists(atPath: work.file("tree/lib/pkgconfig/assetpacks.pc")))
    }

    @Test(.enabled(if: CLibrary.installation.isRelease)) func releaseTreeRunsWithoutTheToolchain() throws {
        try checkRunsWithoutTheToolchain(prefix: CLibrary.installation.prefix)
    }

    @Test(.enabled(if: soak), .timeLimit(.minutes(60)))
    func freshReleaseInstallRunsWithoutTheToolchain() throws {
        let prefix = TemporaryDirectory("assetpacks-clib-prefix")
        let install = try Program.run(Self.script, [prefix.path])
        try #require(install.status == 0, "\(install.stderr)")
        try checkRunsWithoutTheToolchain(prefix: prefix.path)
    }

    private func checkRunsWithoutTheToolchain(prefix: String) throws {
        let lib = prefix + "/lib/libassetpacks.so"
        #expect(FileManager.default.fileExists(atPath: prefix + "/include/assetpacks.h"))

        // Nothing of the toolchain is needed: no Swift runtime library, no
        // search path into the toolchain.
        let dynamic = try Program.run("readelf", ["-d", lib])
        #expect(dynamic.status == 0)
        #expect(!dynamic.out.contains("libswift") && !dynamic.out.contains("libFoundation") && !dynamic.out.contains("libdispatch"),
                "\(dynamic.out)")
        #expect(!dynamic.out.contains("/opt/swift") && !dynamic.out.contains("usr/lib/swift"), "\(dynamic.out)")

        // Built and run with a bare environment: only PATH and PKG_CONFIG_PATH.
        let environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "PKG_CONFIG_PATH": prefix + "/lib/pkgconfig"]
        let work = TemporaryDirectory("assetpacks-clib-bare")
        let program = work.file("list-and-read")
        let cc = try Program.run("sh", ["-c", "cc -Wall -Wextra -Werror -o \(program) \(CLibrary.root)/examples/c/list-and-read.c $(pkg-config --cflags --libs assetpacks)"],
                                 environment: environment)
        try #require(cc.status == 0, "\(cc.stderr)")
        let ldd = try Program.run("ldd", [program], environment: environment)
        #expect(ldd.out.contains(lib) && !ldd.out.contains("not found") && !ldd.out.contains("/opt/swift"), "\(ldd.out)")

        let f = try CFixture()
        let run = try Program.run(program, [f.container, "media/clip.bin", "base"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutBytes == f.clip)
    }
}

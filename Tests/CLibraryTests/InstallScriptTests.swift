import Foundation
import Testing
import TestSupport

/// scripts/install-c-library: a release build (minutes), so only with
/// `ASSETPACKS_SOAK=1`. A program built with `cc … $(pkg-config --cflags
/// --libs assetpacks)` against the installed files must run with no Swift
/// toolchain directory on its library path.
@Suite struct InstallScriptTests {
    static let soak = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1"

    @Test(.enabled(if: soak), .timeLimit(.minutes(60)))
    func installedLibraryRunsWithoutTheToolchain() throws {
        let prefix = TemporaryDirectory("assetpacks-clib-prefix")
        let install = try Program.run(CLibrary.root + "/scripts/install-c-library", [prefix.path])
        try #require(install.status == 0, "\(install.stderr)")
        let lib = prefix.file("lib/libassetpacks.so")
        #expect(FileManager.default.fileExists(atPath: prefix.file("include/assetpacks.h")))

        // Nothing of the toolchain is needed: no Swift runtime library, no
        // search path into the toolchain.
        let dynamic = try Program.run("readelf", ["-d", lib])
        #expect(dynamic.status == 0)
        #expect(!dynamic.out.contains("libswift") && !dynamic.out.contains("libFoundation") && !dynamic.out.contains("libdispatch"),
                "\(dynamic.out)")
        #expect(!dynamic.out.contains("/opt/swift") && !dynamic.out.contains("usr/lib/swift"), "\(dynamic.out)")

        var environment = ProcessInfo.processInfo.environment
        environment["PKG_CONFIG_PATH"] = prefix.file("lib/pkgconfig")
        environment["LD_LIBRARY_PATH"] = nil
        let program = prefix.file("list-and-read")
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

import Foundation
import Testing
import AssetPacks
import TestSupport

/// examples/c and examples/python, built and run as their READMEs say
/// against the installed library, on the fixture container.
@Suite struct ExampleTests {
    let f: CFixture
    init() throws { f = try CFixture() }

    static let examples = CLibrary.root + "/examples"

    @Test func cExampleBuildsWithPkgConfigAndListsAndReads() throws {
        let work = TemporaryDirectory("assetpacks-clib-example")
        var environment = ProcessInfo.processInfo.environment
        _ = try CLibrary.installed()
        environment["PKG_CONFIG_PATH"] = CLibrary.pkgConfigPath
        let flags = try Program.run("pkg-config", ["--cflags", "--libs", "assetpacks"], environment: environment)
        try #require(flags.status == 0, "\(flags.stderr)")
        let program = work.file("list-and-read")
        let cc = try Program.run("sh", ["-c", "cc -Wall -Wextra -Werror -std=c11 -o \(program) \(Self.examples)/c/list-and-read.c \(flags.out)"])
        try #require(cc.status == 0, "\(cc.stderr)")

        let list = try Program.run(program, [f.container])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.out.hasPrefix("base (version 1, 5 members)\n  empty.txt\t0 bytes\tstored\n  hello.txt\t5000 bytes\tdeflated\n"), "\(list.out)")
        #expect(list.out.contains("extra (version 1, 2 members)\n"))
        let cat = try Program.run(program, [f.container, "media/clip.bin"])
        #expect(cat.status == 0 && cat.stdoutBytes == f.clip)
        let missing = try Program.run(program, [f.container, "nope.txt", "base"])
        #expect(missing.status == 1 && missing.stderr.contains("nope.txt") && missing.stderr.hasSuffix("(no such member)\n"))
    }

    @Test func pythonExampleReadsTheBytesAssetpackCatWrites() throws {
        guard Program.available("python3") else { return }
        var environment = ProcessInfo.processInfo.environment
        environment["ASSETPACKS_LIBRARY"] = try CLibrary.installed().prefix + "/lib/libassetpacks.so"
        environment["ASSETPACKS_CONTAINER"] = f.container
        let script = Self.examples + "/python/list_and_read.py"
        for path in ReadTests.members {
            let py = try Program.run("python3", [script, f.container, path, "base"], environment: environment)
            #expect(py.status == 0, "\(py.stderr)")
            let cat = try Program.run(Program.built("assetpack"), ["cat", "--pack", "base", path], environment: environment)
            #expect(cat.status == 0, "\(cat.stderr)")
            #expect(py.stdout == cat.stdout, "\(path)")
        }
        let list = try Program.run("python3", [script, f.container], environment: environment)
        #expect(list.status == 0, "\(list.stderr)")
        let cList = try CLibrary.drive([f.container, "members", "base"])
        #expect(list.out.split(separator: "\n").filter { $0.hasPrefix("  ") }.count == 7)
        #expect(cList.out.split(separator: "\n").count == 5)
        let error = try Program.run("python3", [script, f.container, "shared.txt"], environment: environment)
        #expect(error.status == 1 && error.stderr.contains("(path in several packs)"), "\(error.stderr)")
    }
}

import Foundation
import Testing
import TestSupport

/// The two guards scripts/test builds through: scripts/no-warnings (a build
/// that prints a warning fails) and scripts/check-imports (a target that
/// imports a target it does not declare fails), each fed what it must refuse.
@Suite struct BuildHygieneTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let noWarnings = root + "/scripts/no-warnings"
    static let checkImports = root + "/scripts/check-imports"

    @Test func aBuildThatPrintsAWarningFails() throws {
        let directory = TemporaryDirectory()
        let log = try directory.write("build.log", """
            [3/9] Compiling Thing Thing.swift
            /src/Thing.swift:1:8: warning: public import of 'Foundation' was not used in public declarations or inlinable code
            Build complete!

            """)
        let r = try Program.run(Self.noWarnings, ["cat", log])
        #expect(r.status == 1)
        #expect(r.stderr.contains("printed 1 warning(s)"))
        #expect(r.stderr.contains("Thing.swift:1:8: warning: public import"))
    }

    @Test func swiftPMsImportFindingFailsTheBuildItDoesNotFail() throws {
        let directory = TemporaryDirectory()
        let log = try directory.write("build.log",
            "error: Target assetpack imports another target (AssetSystem) in the package without declaring it a dependency.\n")
        let r = try Program.run(Self.noWarnings, ["cat", log])
        #expect(r.status == 1)
        #expect(r.stderr.contains("imports another target (AssetSystem)"))
    }

    @Test func theToolchainsOwnLinkNoteAndACleanBuildPass() throws {
        let directory = TemporaryDirectory()
        let log = try directory.write("build.log", """
            /opt/swift/usr/lib/swift_static/linux/libFoundationEssentials.a(Data+Writing.swift.o):_ThreadLocal.swift.o:function f: warning: the use of `mktemp' is dangerous, better use `mkstemp' or `mkdtemp'
            Build complete!

            """)
        #expect(try Program.run(Self.noWarnings, ["cat", log]).status == 0)
        // A failing build keeps its own status.
        #expect(try Program.run(Self.noWarnings, ["sh", "-c", "exit 3"]).status == 3)
    }

    @Test func anUndeclaredImportFailsEvenWhenItComesInTransitively() throws {
        let directory = TemporaryDirectory()
        // C imports A, which it reaches only through B.
        func manifest(cDependencies: String) -> String {
            """
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(name: "Probe", targets: [
                .target(name: "A"),
                .target(name: "B", dependencies: ["A"]),
                .target(name: "C", dependencies: [\(cDependencies)]),
            ])

            """
        }
        try directory.write("Sources/A/A.swift", "public let a = 1\n")
        try directory.write("Sources/B/B.swift", "import A\npublic let b = a\n")
        try directory.write("Sources/C/C.swift", "import Foundation\nimport B\n#if canImport(Glibc)\n@preconcurrency internal import A\n#endif\n")
        try directory.write("Package.swift", manifest(cDependencies: "\"B\""))
        let refused = try Program.run(Self.checkImports, [directory.path])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("Sources/C/C.swift:4: target C imports A without declaring it in Package.swift"),
                "\(refused.stderr)")
        #expect(!refused.stderr.contains("imports Foundation"))

        try directory.write("Package.swift", manifest(cDependencies: "\"B\", \"A\""))
        let clean = try Program.run(Self.checkImports, [directory.path])
        #expect(clean.status == 0, "\(clean.stderr)")
    }

    @Test func thisPackageDeclaresEveryImport() throws {
        let r = try Program.run(Self.checkImports, [Self.root])
        #expect(r.status == 0, "\(r.stderr)")
    }
}

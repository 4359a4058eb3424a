import Foundation
import Testing
import TestSupport

/// The C API's ownership rules under AddressSanitizer with leak checking:
/// 10,000 read/release cycles, descriptors, listings, errors, threads, and
/// bytes held across a removal and a reinstall (Programs/stress.c).
@Suite struct SanitizerTests {
    @Test func stressProgramIsCleanUnderAddressSanitizer() throws {
        let f = try CFixture()
        let stress = try CLibrary.program(CLibrary.programs + "/stress.c",
                                          extra: ["-fsanitize=address", "-fno-omit-frame-pointer", "-g", "-pthread"],
                                          name: "stress-asan")
        var environment = ProcessInfo.processInfo.environment
        environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:exitcode=23"
        let r = try Program.run(stress, [f.container, f.directory.file("base.zip"), "10000"], environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out == "ok\n")
        #expect(!r.stderr.contains("LeakSanitizer") && !r.stderr.contains("AddressSanitizer"), "\(r.stderr)")
    }
}

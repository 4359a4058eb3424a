import Foundation
import Testing
import AssetPacks
import TestSupport

/// assetpacks.h as C and C++ compilers take it, and the library as the
/// header declares it.
@Suite struct HeaderTests {
    /// Every function the header declares, every constant and type used.
    static let user = """
        #include <assetpacks.h>
        static int use(void) {
            ap_container *c = 0; ap_data *d = 0; ap_packs *p = 0; ap_members *m = 0;
            ap_member_info mi = {sizeof mi, 0, 0, 0, 0, AP_METHOD_STORED, 0};
            ap_pack_info pi; ap_descriptor_info di; ap_finding f;
            const void *bytes = 0; size_t size = 0; int change = AP_INSTALLED;
            (void)pi; (void)di; (void)f; (void)bytes;
            return ap_open("x", AP_OPEN_READONLY | AP_OPEN_READWRITE | AP_OPEN_CREATE, &c)
                + ap_open_group(0, 0, &c) + ap_read(c, 0, "x", &bytes, &size, &d) + ap_copy(c, 0, "x", 0, 0, &size)
                + ap_stat(c, 0, "x", &mi) + ap_get_descriptor(c, 0, "x", AP_DESCRIPTOR_STANDALONE, &di)
                + ap_packs_open(c, &p) + ap_packs_next(p, &pi) + ap_members_open(c, "p", 0, &m) + ap_members_next(m, &mi)
                + ap_install(c, "f", 0, &change) + ap_install_flags(c, "f", 0, AP_INSTALL_BACKGROUND, &change) + ap_remove(c, "p")
                + ap_verify(c, AP_VERIFY_DEEP | AP_VERIFY_REPAIR | AP_VERIFY_DRY_RUN, 0, 0)
                + ap_last_error_code() + ap_last_error_reason() + ap_last_error_errno()
                + (ap_last_error_message() != 0) + (ap_last_error_pack() != 0) + (ap_last_error_member() != 0)
                + (ap_last_error_path() != 0) + (ap_strerror(AP_ENOPACK) != 0) + (ap_version(0, 0, 0) != 0)
                + (ap_container_path(c) != 0) + ap_set_lock_timeout(c, AP_LOCK_TIMEOUT_DEFAULT) + AP_VERSION + AP_SOURCE_ARCHIVE + AP_SOURCE_MEMORY + AP_METHOD_DEFLATED
                + AP_SEVERITY_WARNING + AP_SEVERITY_RECLAIMABLE + AP_SEVERITY_ERROR + AP_REPLACED + AP_UNCHANGED;
        }
        int main(void) { ap_release(0); ap_packs_free(0); ap_members_free(0); ap_close(0); return use() == 12345; }
        """

    @Test(arguments: [
        ("c", ["-std=c99", "-pedantic"]),
        ("c", ["-std=c11", "-pedantic"]),
        ("c++", ["-std=c++17", "-pedantic"]),
        ("c++", ["-std=c++11"]),
    ])
    func headerCompiles(language: String, flags: [String]) throws {
        let include = try CLibrary.installed().prefix + "/include"
        let messages = try CCompiler("clib-header").check(Self.user, language: language, flags: flags + ["-I", include])
        #expect(messages.isEmpty, "\(messages)")
    }

    /// The functions the header declares are exactly the `ap_` symbols the
    /// library exports, so none is missing or left undocumented.
    @Test func libraryExportsWhatTheHeaderDeclares() throws {
        _ = try CLibrary.installed()
        let header = try String(contentsOfFile: CLibrary.header, encoding: .utf8)
        let declared = Set(header.matches(of: /(?m)^[a-z][a-z_ *]*?\b(ap_[a-z_0-9]+)\(/).map { String($0.output.1) })
        let nm = try Program.run("nm", ["-D", "--defined-only", CLibrary.library])
        #expect(nm.status == 0, "\(nm.stderr)")
        let exported = Set(nm.out.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[1] == "T", parts[2].hasPrefix("ap_") else { return nil }
            return String(parts[2])
        })
        #expect(declared.count >= 25)
        #expect(declared == exported, "declared only: \(declared.subtracting(exported)), exported only: \(exported.subtracting(declared))")
    }

    /// Each `AP_E…` constant is the negated `AssetPackError.Code` it names —
    /// numbers a C program compiles in, so they are pinned — and has its
    /// own `ap_strerror` text.
    @Test func errorCodesMapTheSwiftCodesOneToOne() throws {
        let pinned: [(String, AssetPackError.Code)] = [
            ("AP_ENOPACK", .assetPackNotFound), ("AP_ENOFILE", .fileNotFound), ("AP_EAMBIGUOUS", .ambiguousPath),
            ("AP_EPACKID", .invalidPackID), ("AP_EPATH", .invalidPath), ("AP_ECORRUPT", .corruptRecord),
            ("AP_EARCHIVEMISSING", .archiveMissing), ("AP_EBADARCHIVE", .badArchive), ("AP_ESYSTEM", .system),
            ("AP_EINDEX", .index), ("AP_EMANIFEST", .invalidManifest), ("AP_ERECORDEDMANIFEST", .invalidRecordedManifest),
            ("AP_ELOCKTIMEOUT", .lockTimeout), ("AP_ENOTAFILE", .notAFile), ("AP_ENOCONTAINER", .noContainer),
            ("AP_ESCHEMA", .unsupportedSchema), ("AP_EURL", .unsupportedURL), ("AP_EDAEMON", .daemonUnavailable),
            ("AP_ELIMIT", .limitExceeded), ("AP_ESYMLINK", .symlinkInContainer), ("AP_EOPTION", .invalidOption), ("AP_ECATALOG", .invalidCatalog),
            ("AP_ECATALOGFORMAT", .unsupportedCatalogFormat), ("AP_EUNSIGNED", .catalogUnsigned),
            ("AP_EKEYMISMATCH", .catalogKeyMismatch), ("AP_ESIGNATURE", .catalogSignatureInvalid),
            ("AP_EROLLBACK", .catalogRollback), ("AP_EEXPIRED", .catalogExpired), ("AP_EKEY", .invalidKey),
            ("AP_ETRUSTSTATE", .invalidTrustState), ("AP_EPUBLISH", .publishRefused), ("AP_EDLNOTFOUND", .downloadNotFound),
            ("AP_EDLREFUSED", .downloadRefused), ("AP_EDLSIZE", .downloadSizeMismatch),
            ("AP_EDLCHECKSUM", .downloadChecksumMismatch), ("AP_EDLRETRIES", .downloadRetriesExhausted),
            ("AP_EDLFAILED", .downloadFailed), ("AP_ECATALOGUNAVAILABLE", .catalogUnavailable),
            ("AP_EDLCANCELLED", .downloadCancelled), ("AP_ENODOWNLOAD", .noDownloadInProgress),
            ("AP_EDLTIMEDOUT", .downloadTimedOut), ("AP_ECHANNEL", .catalogChannelMismatch), ("AP_ECAFILE", .invalidCAFile), ("AP_EDLTOOLARGE", .downloadTooLarge), ("AP_EPEER", .peerNotAllowed),
            ("AP_EPIECEMAP", .invalidPieceMap),
            ("AP_EREQUEST", .malformedRequest), ("AP_EREQUESTTOOLARGE", .requestTooLarge), ("AP_EPROTOCOL", .unsupportedVersion),
            ("AP_EBUSY", .daemonBusy), ("AP_EDAEMONFAILED", .daemonFailed), ("AP_ENOTPERMITTED", .requestNotPermitted),
        ]
        #expect(Set(pinned.map(\.1)) == Set(AssetPackError.Code.allCases), "a Swift code without its AP_E constant")
        let own = [("AP_OK", Int32(0)), ("AP_EINVAL", -100), ("AP_ERANGE", -101), ("AP_EREADONLY", -102)]
        let names = pinned.map(\.0) + own.map(\.0)
        let source = "#include <assetpacks.h>\n#include <stdio.h>\nint main(void) {\n"
            + names.map { "    printf(\"%d %s\\n\", \($0), ap_strerror(\($0)));\n" }.joined()
            + "    printf(\"%d %s\\n\", -99, ap_strerror(-99));\n    return 0;\n}\n"
        let r = try CLibrary.run("codes", source: source)
        let lines = r.out.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 1).map(String.init) }
        #expect(lines.count == names.count + 1)
        let expected = pinned.map { -$0.1.rawValue } + own.map(\.1)
        for (i, line) in zip(lines, expected).enumerated() {
            #expect(Int32(line.0[0]) == line.1, "\(names[i])")
            #expect(line.0.count == 2 && line.0[1] != "unknown error", "\(names[i]) has no text")
        }
        #expect(Set(lines.dropLast().map { $0.last ?? "" }).count == names.count, "two codes share a text")
        #expect(lines.last == ["-99", "unknown error"])
    }

    @Test func versionFunctionAgreesWithTheMacros() throws {
        let source = """
            #include <assetpacks.h>
            #include <stdio.h>
            #include <string.h>
            int main(void) {
                int major = -1, minor = -1, patch = -1;
                const char *v = ap_version(&major, &minor, &patch);
                printf("%s %d %d %d %d\\n", v, major == AP_VERSION_MAJOR && minor == AP_VERSION_MINOR && patch == AP_VERSION_PATCH,
                       strcmp(v, AP_VERSION_STRING) == 0, AP_VERSION == AP_VERSION_NUMBER(major, minor, patch), ap_version(0, 0, 0) == v);
                return 0;
            }
            """
        let r = try CLibrary.run("version", source: source)
        #expect(r.out == "1.3.0 1 1 1 1\n", "\(r.out) \(r.stderr)")
    }
}

import Foundation
import Testing
import Synchronization
@testable import AssetPacks
import AssetSystem
import TestSupport

/// libassetpacks-client, the daemon's protocol in plain C: built with
/// scripts/build-c-client into a temporary directory, linked into C programs
/// (the example and Tests/CClientPrograms/client-check.c), which run as their
/// own processes against a real `assetpack daemon` and against a fake one
/// that breaks the protocol.
@Suite(.serialized) struct DaemonClientCTests {
    /// The library and the programs, built once for the suite.
    final class Build: Sendable {
        let directory: TemporaryDirectory
        /// Where scripts/build-c-client --build-only put the tree.
        let prefix: String
        /// The example, linked against the shared library, and against the static one.
        let example: String, staticExample: String
        /// client-check, linked against the shared library, and compiled with the
        /// library's source under AddressSanitizer (and UBSan), and under ThreadSanitizer.
        let check: String, sanitizedCheck: String, threadCheck: String

        init() throws {
            let compiler = CCompiler("c-client")
            directory = compiler.directory
            prefix = directory.file("prefix")
            let script = try Program.run(repositoryRoot + "/scripts/build-c-client", ["--build-only", prefix])
            guard script.status == 0 else { throw TestFailure("build-c-client: \(script.stderr)") }
            let include = "-I" + prefix + "/include"
            let shared = [include, "-L" + prefix + "/lib", "-lassetpacks-client", "-Wl,-rpath," + prefix + "/lib"]
            let exampleSource = repositoryRoot + "/examples/c/daemon-client.c"
            let checkSource = repositoryRoot + "/Tests/CClientPrograms/client-check.c"
            example = try compiler.build("daemon-client", sources: [exampleSource], flags: shared,
                                         standard: "-std=c99")
            staticExample = try compiler.build("daemon-client-static", sources: [exampleSource],
                                               flags: [include, prefix + "/lib/libassetpacks-client.a"])
            let withSource = [checkSource, repositoryRoot + "/Sources/CAssetPacksClient/client.c"]
            check = try compiler.build("client-check", sources: [checkSource], flags: shared + ["-pthread"])
            sanitizedCheck = try compiler.build("client-check-asan", sources: withSource,
                                                flags: [include, "-pthread", "-g", "-fsanitize=address,undefined",
                                                        "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"])
            threadCheck = try compiler.build("client-check-tsan", sources: withSource,
                                             flags: [include, "-pthread", "-g", "-fsanitize=thread"])
            // -pedantic too, for the example and the header it includes.
            try compiler.build("daemon-client-pedantic", sources: [exampleSource], flags: shared + ["-pedantic"],
                               standard: "-std=c99")
        }

        var library: String { prefix + "/lib/libassetpacks-client.so" }
    }

    static let built: Result<Build, any Error> = Result { try Build() }

    // MARK: The library itself

    /// The names of the functions the header declares.
    static func declaredFunctions(_ header: String) throws -> Set<String> {
        let text = try String(contentsOfFile: header, encoding: .utf8)
        let regex = try NSRegularExpression(pattern: #"APC_API [^;(]*?\b(apc_[a-z_0-9]+)\("#)
        let matches = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
        return Set(matches.compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
    }

    @Test func theLibraryNeedsNothingButLibcAndExportsOnlyTheHeader() throws {
        let b = try Self.built.get()
        // Undefined symbols: libc's, versioned GLIBC_; unversioned ones only
        // weak (the toolchain's start files: __gmon_start__, _ITM_*).
        let undefined = try Program.output("nm", ["-D", "--undefined-only", b.library])
        let lines = String(decoding: undefined, as: UTF8.self).split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(lines.count > 10)
        for line in lines {
            guard let symbol = line.last, let kind = line.dropLast().last else { Issue.record("nm: \(line)"); continue }
            #expect(symbol.contains("@GLIBC_") || kind == "w", "\(line)")
        }
        let needed = try Program.run("readelf", ["-d", b.library]).out
        let libraries = needed.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(libraries.count == 1 && libraries[0].contains("[libc.so.6]"), "\(libraries)")
        #expect(needed.contains("Library soname: [libassetpacks-client.so.1]"))
        // Exported: exactly the header's functions.
        let defined = try Program.output("nm", ["-D", "--defined-only", b.library])
        let exported = Set(String(decoding: defined, as: UTF8.self).split(separator: "\n").compactMap { l -> String? in
            let parts = l.split(separator: " ")
            return parts.count == 3 && parts[1] == "T" ? String(parts[2]) : nil
        })
        let declared = try Self.declaredFunctions(b.prefix + "/include/assetpacks-client.h")
        #expect(declared.count >= 14 && exported == declared, "\(exported.symmetricDifference(declared))")
        // The static library asks for no more than the shared one does.
        let archive = try Program.output("nm", ["-u", b.prefix + "/lib/libassetpacks-client.a"])
        let fromArchive = Set(String(decoding: archive, as: UTF8.self).split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
            .filter { !$0.hasSuffix(".o:") })
        let fromShared = Set(lines.compactMap { $0.last?.components(separatedBy: "@")[0] })
        #expect(!fromArchive.isEmpty && fromArchive.isSubset(of: fromShared), "\(fromArchive.subtracting(fromShared))")
        // Links with the symlinks and pkg-config file it installed.
        for link in ["libassetpacks-client.so", "libassetpacks-client.so.1"] {
            #expect(FileManager.default.fileExists(atPath: b.prefix + "/lib/" + link))
        }
        if Program.available("pkg-config") {
            var env = ProcessInfo.processInfo.environment
            env["PKG_CONFIG_PATH"] = b.prefix + "/lib/pkgconfig"
            let flags = try Program.run("pkg-config", ["--cflags", "--libs", "assetpacks-client"], environment: env)
            #expect(flags.status == 0 && flags.out == "-I\(b.prefix)/include -L\(b.prefix)/lib -Wl,-rpath,\(b.prefix)/lib -lassetpacks-client \n", "\(flags.out)")
        }
        // The example links nothing else.
        let linked = try Program.run("readelf", ["-d", b.example]).out.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(linked.count == 2 && linked.contains { $0.contains("[libassetpacks-client.so.1]") } && linked.contains { $0.contains("[libc.so.6]") }, "\(linked)")
    }

    /// PREFIX staged under DESTDIR: the tree under DESTDIR, the .pc naming
    /// PREFIX itself; bad arguments are usage errors.
    @Test func theScriptInstallsIntoAPrefixAndHonoursDestdir() throws {
        let s = TemporaryDirectory("assetpack-cclient-install")
        var env = ProcessInfo.processInfo.environment
        env["DESTDIR"] = s.file("stage")
        let script = repositoryRoot + "/scripts/build-c-client"
        let r = try Program.run(script, ["/opt/assetpacks"], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        let root = s.file("stage/opt/assetpacks")
        for file in ["include/assetpacks-client.h", "lib/libassetpacks-client.so.1.3.0", "lib/libassetpacks-client.so.1",
                     "lib/libassetpacks-client.so", "lib/libassetpacks-client.a"] {
            #expect(FileManager.default.fileExists(atPath: root + "/" + file), "\(file)")
        }
        let pc = try String(contentsOfFile: root + "/lib/pkgconfig/assetpacks-client.pc", encoding: .utf8)
        #expect(pc.hasPrefix("prefix=/opt/assetpacks\n") && pc.contains("\nVersion: 1.3.0\n") && pc.contains("-lassetpacks-client"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/lib/libassetpacks-client.so") == "libassetpacks-client.so.1")
        for args in [["--build-only"], ["a", "b"], ["--bogus"], ["--build-only", "a", "b"]] {
            let bad = try Program.run(script, args)
            #expect(bad.status == 64 && bad.stderr.hasPrefix("usage: scripts/build-c-client"), "\(args): \(bad.stderr)")
        }
    }

    @Test func theHeaderCompilesAsC99C11AndCxx17() throws {
        let b = try Self.built.get()
        let compiler = CCompiler("c-client-header")
        let source = """
            #include <assetpacks-client.h>
            int use(void);
            int use(void) {
                apc_client *c = 0;
                apc_descriptor d = APC_DESCRIPTOR_INIT;
                int major, minor, patch;
                int rc = apc_create(&c);
                if (rc == APC_OK) rc = apc_set_timeout(c, APC_DEFAULT_TIMEOUT_MS);
                if (rc == APC_OK) rc = apc_connect_container(c, "/c");
                if (rc == APC_OK) rc = apc_connect_socket(c, "/c/daemon.sock");
                if (rc == APC_OK) rc = apc_request(c, 0, "a", APC_STANDALONE, &d);
                (void)apc_strerror(rc); (void)apc_version(&major, &minor, &patch); (void)apc_message(c);
                rc += apc_error_number(c) + apc_error_status(c) + apc_error_reason(c) + apc_error_field_count(c);
                (void)apc_error_field(c, 0);
                apc_close(c);
                return rc + d.source + (int)d.offset + (int)d.length + (int)d.file_size + (int)d.crc32 + APC_SOURCE_MEMORY;
            }
            """
        let include = "-I" + b.prefix + "/include"
        for (language, flags) in [("c", ["-std=c99", "-pedantic"]), ("c", ["-std=c11", "-pedantic"]),
                                  ("c++", ["-std=c++17", "-pedantic"]), ("c++", ["-std=c++11"])] {
            #expect(try compiler.check(source, language: language, flags: flags + [include]) == "", "\(language) \(flags)")
        }
    }

    @Test func callsRefusedBeforeAnythingIsSent() throws {
        let b = try Self.built.get()
        for program in [b.check, b.sanitizedCheck] {
            let r = try Program.run(program, ["api"])
            #expect(r.status == 0, "\(program): \(r.out)\(r.stderr)")
            #expect(r.out == "api checks=21 failures=0\n")
        }
    }

    // MARK: Against the real daemon

    /// One run of `client-check get`: its key=value lines.
    struct Answer {
        let values: [String: [String]]
        /// client-check's exit status: 0 when its own checks held.
        let exit: Int32
        subscript(_ key: String) -> String? { values[key]?.last }
        var rc: Int? { self["rc"].flatMap { Int($0) } }
        var errno: Int32? { self["errno"].flatMap { Int32($0) } }
        var fields: [String] { values["field"] ?? [] }
    }

    static func get(_ b: Build, _ target: [String], _ args: [String], program: String? = nil) throws -> Answer {
        let r = try Program.run(program ?? b.check, ["get"] + target + args)
        var values: [String: [String]] = [:]
        for line in r.out.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let eq = line.firstIndex(of: "=") else { continue }
            values[String(line[..<eq]), default: []].append(String(line[line.index(after: eq)...]))
        }
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        #expect(values["leaked"] == ["0"], "a descriptor leaked: \(r.out)")
        #expect(r.status == 0, "client-check's checks failed: \(r.out)")
        return Answer(values: values, exit: r.status)
    }

    /// Runs `body` with the built library, in a fresh directory whose
    /// container (DaemonTests' packs) a real `assetpack daemon` serves.
    static func withDaemon(_ label: String, _ body: (Build, TemporaryDirectory, _ socket: String) throws -> Void) throws {
        let b = try built.get()
        let s = TemporaryDirectory(label)
        _ = try DaemonTests().setUp(s)
        let daemon = try DaemonTests.Daemon(s.container)
        defer { daemon.stop() }
        try body(b, s, s.container + "/daemon.sock")
    }

    @Test(.timeLimit(.minutes(3))) func storedAndDeflatedMembersAreTheBytesOfAssetpackCat() throws {
        try Self.withDaemon("assetpack-cclient-bytes") { b, s, socket in
            // stored, stored page-aligned, deflated (a memfd), and a path-only lookup.
            let cases: [(path: String, pack: String?, source: String)] = [
                ("media/big.bin", "stress", "0"), ("tiny/t007", "stress", "0"), ("text/a.txt", "stress", "1"),
                ("text/b.json", "other", "1"), ("only/v1.txt", nil, "1"),
            ]
            for c in cases {
                let packArgs = c.pack.map { ["--pack", $0] } ?? []
                let want = try CLI.assetpack(["cat", c.path] + packArgs, container: s.container)
                #expect(want.status == 0 && !want.stdout.isEmpty)
                for (program, target) in [(b.example, ["--container", s.container]), (b.staticExample, ["--socket", socket])] {
                    for standalone in [[], ["--standalone"]] {
                        let got = try Program.run(program, target + packArgs + standalone + [c.path])
                        #expect(got.status == 0 && got.stdout == want.stdout, "\(c.path) \(standalone): \(got.stderr)")
                    }
                }
                // The container from the environment, as `assetpack` takes it.
                var env = ProcessInfo.processInfo.environment
                env["ASSETPACKS_CONTAINER"] = s.container
                let implicit = try Program.run(b.example, packArgs + [c.path], environment: env)
                #expect(implicit.status == 0 && implicit.stdout == want.stdout, "\(implicit.stderr)")
                let out = s.file("copy-" + c.path.replacingOccurrences(of: "/", with: "-"))
                let copied = try Program.run(b.example, ["--socket", socket] + packArgs + [c.path, out])
                #expect(copied.status == 0 && FileManager.default.contents(atPath: out) == want.stdout)
                // What the library says about the descriptor, and its CRC-32.
                for standalone in [false, true] {
                    let a = try Self.get(b, ["--container", s.container], packArgs + (standalone ? ["--standalone"] : []) + [c.path])
                    #expect(a.rc == 0, "\(c.path): \(a.values)")
                    #expect(a["source"] == (standalone ? "1" : c.source) && a["crc_ok"] == "1", "\(c.path): \(a.values)")
                    #expect(a["readonly"] == "1" && a["cloexec"] == "1" && a["message"] == "")
                    #expect(a["length"] == String(want.stdout.count))
                    if standalone || c.source == "1" { #expect(a["offset"] == "0" && a["size"] == a["length"]) }
                }
            }
        }
    }

    /// APC_SHARED: one handle's stored members of one archive share an open
    /// description (each at its member's start when handed out); a request
    /// without the flag, another handle's and memory files never do.
    @Test(.timeLimit(.minutes(3))) func sharedPositionsStayWithinOneHandle() throws {
        try Self.withDaemon("assetpack-cclient-shared") { b, _, socket in
            let r = try Program.run(b.check, ["shared", "--socket", socket, "stress", "media/big.bin", "tiny/t007", "text/a.txt"])
            #expect(r.status == 0 && r.stderr.isEmpty, "\(r.out) \(r.stderr)")
            #expect(r.out == "a_at_start=1\nb_at_start=1\na_b=1\na_own=0\na_other_handle=0\nmemory=0\nbatch=1\nleaked=0\n", "\(r.out)")
            for shared in [[String](), ["--shared"]] {
                let g = try Program.run(b.check, ["get", "--socket", socket, "--pack", "stress"] + shared + ["tiny/t007"])
                #expect(g.status == 0 && g.out.hasPrefix("rc=0\n") && g.out.contains("\ncrc_ok=1\n") && g.out.hasSuffix("leaked=0\n"), "\(g.out)")
            }
        }
    }

    /// apc_request_batch: every member answered in order, a missing one
    /// with its own code, the others' bytes with their CRC-32.
    @Test(.timeLimit(.minutes(3))) func aBatchAnswersEveryMemberInOrder() throws {
        try Self.withDaemon("assetpack-cclient-batch") { b, _, socket in
            let paths = ["tiny/t001", "no/such", "text/a.txt", "media/big.bin", "tiny/t047"]
            for standalone in [[String](), ["--standalone"]] {
                let r = try Program.run(b.check, ["batch", "--socket", socket, "--pack", "stress"] + standalone + paths)
                #expect(r.status == 0 && r.stderr.isEmpty, "\(r.out) \(r.stderr)")
                let lines = r.out.split(separator: "\n").map(String.init)
                #expect(lines.first == "rc=0" && lines.last == "leaked=0", "\(r.out)")
                #expect(lines.filter { $0.hasPrefix("member=") } == [
                    "member=0,17,1", "member=-2,0,0", "member=0,50000,1", "member=0,200000,1", "member=0,63,1",
                ], "\(r.out)")
            }
        }
    }

    /// The C client's answer, and the Swift client's, for one request.
    static func both(_ b: Build, socket: String, _ pack: String?, _ path: String) throws -> (Answer, AssetPackError?) {
        let a = try get(b, ["--socket", socket], (pack.map { ["--pack", $0] } ?? []) + [path])
        var swift: AssetPackError?
        do { _ = try AssetPackClient(socketPath: socket).descriptor(for: path, searchingInAssetPackWithID: pack) } catch { swift = error }
        return (a, swift)
    }

    @Test(.timeLimit(.minutes(3))) func everyErrorOfTheDaemonComesBackWithItsCodeFieldsAndMessage() throws {
        try Self.withDaemon("assetpack-cclient-errors") { b, _, socket in
            let cases: [(pack: String?, path: String, rc: Int, fields: [String], reason: String)] = [
                ("nothing", "x", -1, ["nothing"], "0"),
                ("stress", "no/such", -2, ["no/such", "stress"], "0"),
                (nil, "no/such", -2, ["no/such"], "0"),
                (nil, "media/small.bin", -3, ["media/small.bin", "other", "stress"], "0"),
                ("../etc", "x", -4, ["../etc", "102"], "102"),
            ]
            for c in cases {
                let (a, swift) = try Self.both(b, socket: socket, c.pack, c.path)
                #expect(a.rc == c.rc && a["status"] == String(-c.rc), "\(c): \(a.values)")
                #expect(a.fields == c.fields && a["reason"] == c.reason, "\(c): \(a.values)")
                #expect(swift.map { -Int($0.code.rawValue) } == c.rc)
                #expect(a["message"] == swift?.message, "\(c)")
                // The example says the same on one line and exits 1.
                let e = try Program.run(b.example, ["--socket", socket] + (c.pack.map { ["--pack", $0] } ?? []) + [c.path])
                #expect(e.status == 1 && e.stdout.isEmpty && e.stderr == "daemon-client: \(swift?.message ?? "")\n")
            }
            // A path that is not UTF-8: the daemon refuses the request and keeps serving.
            let bad = try Self.get(b, ["--socket", socket], ["--pack", "stress", "--hex-path", "ff2e6a736f6e"])
            #expect(bad.rc == -65 && bad["status"] == "65" && bad.fields.isEmpty, "\(bad.values)")
            #expect(bad["message"]?.hasPrefix("descriptor daemon at \(socket) refused the request: ") == true, "\(bad.values)")
            // The same with APC_SHARED, which goes only with UTF-8 strings.
            let badShared = try Self.get(b, ["--socket", socket], ["--pack", "stress", "--shared", "--hex-path", "ff2e6a736f6e"])
            #expect(badShared.rc == -65 && badShared["message"] == bad["message"], "\(badShared.values)")
            // Longer than the daemon reads: refused by the library, nothing sent.
            let long = try Self.get(b, ["--socket", socket], [String(repeating: "a/", count: 4097)])
            #expect(long.rc == -66 && long["status"] == "0" && long["message"]?.contains("longer than the 8192 bytes the daemon reads") == true)
        }
    }

    @Test(.timeLimit(.minutes(3))) func noDaemonIsUnavailableWithTheErrno() throws {
        let b = try Self.built.get()
        let s = TemporaryDirectory("assetpack-cclient-nodaemon")
        // No socket at all.
        let none = try Self.get(b, ["--container", s.container], ["--pack", "p", "x"])
        #expect(none.rc == -23 && none.errno == ENOENT)
        #expect(none["message"] == "descriptor daemon at \(s.container)/daemon.sock is unavailable: connect: No such file or directory")
        // A socket file that nobody listens on (a dead daemon's).
        let stale = s.file("stale.sock")
        _ = try UnixListener(path: stale)
        #expect(FileManager.default.fileExists(atPath: stale))
        let refused = try Self.get(b, ["--socket", stale], ["x"])
        #expect(refused.rc == -23 && refused.errno == ECONNREFUSED, "\(refused.values)")
        // A path longer than a socket address holds.
        let long = "/" + String(repeating: "d", count: 120) + "/daemon.sock"
        let tooLong = try Self.get(b, ["--socket", long], ["x"])
        #expect(tooLong.rc == -23 && tooLong.errno == ENAMETOOLONG, "\(tooLong.values)")
        let e = try Program.run(b.example, ["--socket", stale, "x"])
        #expect(e.status == 1 && e.stderr == "daemon-client: descriptor daemon at \(stale) is unavailable: connect: Connection refused\n")
        #expect(try Program.run(b.example, ["x", "y", "z"]).status == 64)
        #expect(try Program.run(b.example, ["--socket"]).status == 64)
    }

    @Test(.timeLimit(.minutes(3))) func aBusyDaemonAndARefusedPeerAreTheirCodes() throws {
        let b = try Self.built.get()
        let s = TemporaryDirectory("assetpack-cclient-busy")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: s.path)
        let manager = try DaemonTests().setUp(s)
        let socket = manager.container.daemonSocketPath
        do {
            let daemon = try DaemonTests.Daemon(s.container, ["--max-connections", "1", "--request-timeout", "20"])
            defer { daemon.stop() }
            // One request under way, none idle: the daemon says it is busy, unasked.
            let held = try DaemonTests.RawClient(socket)
            try held.socket.sendAll(Array(DaemonRequest(pack: "stress", path: "tiny/t001").encoded.prefix(10)))
            let busy = try Self.get(b, ["--socket", socket], ["--pack", "stress", "tiny/t001"])
            #expect(busy.rc == -68 && busy["status"] == "68", "\(busy.values)")
            #expect(busy["message"]?.hasPrefix("descriptor daemon at \(socket) refused the request: ") == true)
            try held.socket.sendAll(Array(DaemonRequest(pack: "stress", path: "tiny/t001").encoded.dropFirst(10)))
            #expect(try held.replyStatus() == 0)
        }
        // Another user whom the socket lets in but the daemon does not serve.
        guard DaemonTests.canSwitchUser else { return }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: b.directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: b.prefix)
        let daemon = try DaemonTests.Daemon(s.container, ["--socket-group", "nogroup"])
        defer { daemon.stop() }
        let r = try Program.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", b.example,
                                                     "--socket", socket, "--pack", "stress", "tiny/t001"])
        #expect(r.status == 1 && r.stderr == "daemon-client: descriptor daemon at \(socket) refused the request: uid 65534 (gid 65534) is not allowed to use this daemon\n", "\(r.stderr)")
    }

    /// Eight threads with a handle each, under ThreadSanitizer: handles share
    /// nothing (the library has no global state).
    @Test(.timeLimit(.minutes(4))) func handlesInThreadsAreIndependent() throws {
        try Self.withDaemon("assetpack-cclient-threads") { b, s, _ in
            let r = try Program.run(b.threadCheck, ["threads", "--container", s.container, "8", "100", "stress", "media/small.bin"])
            #expect(r.status == 0 && r.out == "requests=800\nleaked=0\nfailures=0\n", "\(r.out)\(r.stderr)")
            #expect(!r.stderr.contains("ThreadSanitizer"), "\(r.stderr)")
        }
    }

    /// 10,000 requests (with `ASSETPACKS_SOAK=1` 100,000) of stored and
    /// deflated members, standalone every other round, a missing member every
    /// round, a new handle every 100 rounds, under AddressSanitizer (with its
    /// leak check) and UndefinedBehaviorSanitizer; a tenth of it in the plain
    /// build, interrupted by a signal every millisecond. Every CRC-32 right, no
    /// descriptor left open.
    @Test(.timeLimit(.minutes(3))) func manyRequestCyclesLeakNothing() throws {
        try Self.withDaemon("assetpack-cclient-cycles") { b, s, socket in
            let rounds = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1" ? 25_000 : 2_500
            let paths = ["tiny/t001", "text/b.json", "media/small.bin"]
            for (program, n, extra) in [(b.sanitizedCheck, rounds, []), (b.check, rounds / 10, ["--interrupt"])] {
                var env = ProcessInfo.processInfo.environment
                env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
                env["UBSAN_OPTIONS"] = "print_stacktrace=1"
                let r = try Program.run(program, ["cycles", "--container", s.container, String(n), "stress"] + paths + extra,
                                        environment: env)
                #expect(r.status == 0, "\(program): \(r.out)\(r.stderr)")
                #expect(r.out.hasPrefix("requests=\(n * (paths.count + 1))\nleaked=0\nfailures=0\n"), "\(r.out)")
                #expect(extra.isEmpty != r.out.contains("signals="), "\(r.out)")
                #expect(!r.stderr.contains("Sanitizer"), "\(r.stderr)")
            }
            // A large stored member a few times, too.
            let r = try Program.run(b.sanitizedCheck, ["cycles", "--socket", socket, "4", "stress", "media/big.bin", "text/a.txt"])
            #expect(r.status == 0 && r.out.hasPrefix("requests=12\nleaked=0\n"), "\(r.out)\(r.stderr)")
        }
    }
}

import Foundation
import TestSupport

/// `serve`: the development server (`assetpack serve`) against nginx (the
/// production host, with the project's `contrib/nginx` configuration),
/// serving the same published directory on loopback, with `curl` as the
/// client of both:
///
/// - `serve/download`: one 1 GiB pack (`--quick`: 64 MiB) to /dev/null, bytes/s;
/// - `serve/range`: 2,000 (`--quick`: 500) requests of 4 KiB at random
///   offsets of that pack over one keep-alive connection (one curl run),
///   requests/s.
///
/// Both servers start once, before the first pass, and stop at the end; the
/// `assetpack` binary is the one built beside this one.
enum ServeScenario {
    static let scenario = Scenario(
        "serve", "`assetpack serve` against nginx on loopback: a 1 GiB download and 4 KiB Range requests, with curl"
    ) { ctx in try run(ctx) }

    static let rangeBytes = 4096

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let size = ctx.scale.quick ? 64 << 20 : 1 << 30
        let requests = ctx.scale.quick ? 500 : 2_000
        let dir = ctx.workspace.root + "/serve-\(size >> 20)m"
        let root = dir + "/root", name = "bench-0123456789ab.zip"
        try ctx.workspace.fill(dir, label: "a \(size >> 20) MiB pack to serve") {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/" + name, isDirectory: false)
                .creatingEmptyFile())
            defer { try? handle.close() }
            let chunk = 8 << 20
            for i in 0 ..< size / chunk { try handle.write(contentsOf: noise(chunk, seed: UInt64(i) + 1)) }
        }
        let assetpack = (ctx.executable as NSString).deletingLastPathComponent + "/assetpack"
        guard FileManager.default.isExecutableFile(atPath: assetpack) else {
            throw BenchError.failed("serve needs \(assetpack): build it with the same configuration (swift build -c release --product assetpack)")
        }
        let serve = try ServeHost(root: root, [], executable: assetpack)
        defer { serve.stop() }
        let nginx = try NginxHost(root: root)
        defer { nginx.stop() }
        let hosts = [("serve", serve.baseURL), ("nginx", nginx.baseURL)]
            .filter { ctx.scale.only?.contains($0.0) ?? true }

        // A curl configuration of `requests` 4 KiB ranges, the same for both.
        var random = SplitMix64(seed: 0x5E7E)
        let offsets = (0 ..< requests).map { _ in Int(random.next() % UInt64(size - rangeBytes)) }
        func rangeConfig(_ host: String, _ base: String) throws -> String {
            let path = dir + "/ranges-\(host).curl"
            let lines = offsets.map { "url = \"\(base)/\(name)\"\nrange = \"\($0)-\($0 + rangeBytes - 1)\"\noutput = \"/dev/null\"\n"
                + "write-out = \"%{size_download}\\\\n\"\nhttp1.1\nsilent\nshow-error\n" }
            try lines.joined(separator: "next\n").write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let configs = try hosts.map { try rangeConfig($0.0, $0.1) }

        let downloads = try Passes.run(hosts.map { host in
            (host.0, { try curl(["-o", "/dev/null", "-w", "%{size_download}\n", host.1 + "/" + name], expect: [size]) })
        }, rounds: ctx.scale.installRounds)
        let ranges = try Passes.run(hosts.indices.map { i in
            (hosts[i].0, {
                try curl(["-K", configs[i]], expect: Array(repeating: rangeBytes, count: requests))
            })
        }, rounds: ctx.scale.installRounds)
        let names = hosts.map(\.0)
        let note = "curl is the client of both, as a user's download tool would be; both on loopback on this machine."
        return [
            ScenarioResult(
                name: "serve/download",
                summary: "curl downloads a \(size >> 20) MiB pack from `assetpack serve` and from nginx (sendfile both) on loopback",
                measurements: Passes.measurements(names: names, seconds: downloads, units: 1, bytes: Double(size)),
                basis: .throughput, reference: "serve", notes: [note]),
            ScenarioResult(
                name: "serve/range",
                summary: "\(requests) Range requests of 4 KiB at random offsets over one keep-alive connection (one curl run); ops/s are requests/s",
                measurements: Passes.measurements(names: names, seconds: ranges, units: requests,
                                                  bytes: Double(requests * rangeBytes)),
                basis: .throughput, reference: "serve", notes: [note]),
        ]
    }

    /// Runs curl with `arguments`, checks that every transfer got the
    /// expected byte count and that the run succeeded, and returns the seconds it took.
    static func curl(_ arguments: [String], expect sizes: [Int]) throws -> Double {
        var result: Program.Result?
        let seconds = try timed { result = try Program.run("curl", ["-sS", "--http1.1"] + arguments) }
        guard let result, result.status == 0 else {
            throw BenchError.failed("curl failed (\(result?.status ?? -1)): \(result?.stderr ?? "")")
        }
        let got = result.out.split(separator: "\n").map { Int($0) ?? -1 }
        guard got == sizes else { throw BenchError.failed("curl got \(got.prefix(4))… bytes, expected \(sizes.prefix(4))…") }
        return seconds
    }
}

private extension URL {
    /// Creates (or truncates) the file at this URL and returns the URL.
    func creatingEmptyFile() throws -> URL {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return self
    }
}

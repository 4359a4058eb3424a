/// The ratios issue 3 asks AssetPacks to reach, checked against the results
/// of one run.
struct Target: Sendable {
    /// The measured case the target reads.
    let scenario: String
    let comparison: String
    let goal: String
    /// The measured figure and whether it meets the goal; `nil` when the
    /// run did not measure what the target needs.
    let evaluate: @Sendable ([String: ScenarioResult]) -> (measured: String, met: Bool)?
    /// What the physical limit measured in the same case reaches against
    /// the same peer, when there is one: raw LMDB for lookups.
    var ceiling: @Sendable ([String: ScenarioResult]) -> String? = { _ in nil }
}

/// A target as checked in one run.
struct TargetOutcome {
    let target: Target
    let measured: String?
    let met: Bool?
    let ceiling: String?
}

enum Targets {
    static let all: [Target] = [
        Target(scenario: "small-read", comparison: "vs files (`open`/`read`/`close`)",
               goal: "≥ 8× faster at p50, and our p99 below their p50", evaluate: { r in
            guard let s = r["small-read"], let x = s.speedup(over: "files"),
                  let ours = s.measurement("assetpacks"), let theirs = s.measurement("files") else { return nil }
            return ("\(Format.ratio(x)); our p99 \(Format.duration(ours.p99)) vs their p50 \(Format.duration(theirs.p50))",
                    x >= 8 && ours.p99 < theirs.p50)
        }, ceiling: rawLMDB("small-read", over: "files")),
        speedup("small-read", "sqlite", "vs SQLite `sqlite3_blob_read`", at: 3, "≥ 3× faster"),
        speedup("small-read", "libzip", "vs libzip by name", at: 10, "≥ 10× faster"),
        Target(scenario: "small-read", comparison: "vs raw LMDB `mdb_get`", goal: "within 1.5× (our p50 ≤ 1.5 × theirs)") { r in
            guard let s = r["small-read"], let ours = s.measurement("assetpacks"), let raw = s.measurement("lmdb-raw"),
                  raw.p50 > 0 else { return nil }
            let x = ours.p50 / raw.p50
            return ("\(Format.ratio(x)) their p50 (\(Format.duration(ours.p50)) vs \(Format.duration(raw.p50)))", x <= 1.5)
        },
        // Issue 12: the C API (`ap_read` + `ap_release`) against the Swift API, and against PhysicsFS.
        Target(scenario: "small-read", comparison: "C API `ap_read` vs Swift `contents(at:)`",
               goal: "within 1.15× (C p50 ≤ 1.15 × Swift's)") { r in
            guard let s = r["small-read"], let c = s.measurement("c-api"), let swift = s.measurement("assetpacks"),
                  swift.p50 > 0 else { return nil }
            let x = c.p50 / swift.p50
            return ("\(Format.ratio(x)) Swift's p50 (\(Format.duration(c.p50)) vs \(Format.duration(swift.p50)))", x <= 1.15)
        },
        Target(scenario: "small-read", comparison: "C API vs PhysicsFS `PHYSFS_openRead` + `PHYSFS_readBytes`",
               goal: "≥ 5× faster at p50") { r in
            guard let s = r["small-read"], let c = s.measurement("c-api"), let physfs = s.measurement("physfs"),
                  c.p50 > 0 else { return nil }
            let x = physfs.p50 / c.p50
            return ("\(Format.ratio(x)) (\(Format.duration(c.p50)) vs \(Format.duration(physfs.p50)))", x >= 5)
        },
        speedup("small-read-consume", "files", "vs files, bytes summed", at: 3.5, "≥ 3.5× faster"),
        speedup("small-read-deflated", "zlib", "vs zlib `uncompress` alone", at: 0.9, "≥ 0.9× its throughput"),
        Target(scenario: "large-read/return", comparison: "`contents` return time, 256 MiB vs 4 KiB member",
               goal: "constant in size (no copy), under 10 µs") { r in
            guard let big = r["large-read/return"]?.measurement("assetpacks"),
                  let small = r["large-read/return-4k"]?.measurement("assetpacks"), small.p50 > 0 else { return nil }
            let x = big.p50 / small.p50
            return ("p50 \(Format.duration(big.p50)) vs \(Format.duration(small.p50)) (\(Format.ratio(x)))",
                    big.p50 < 10_000 && x <= 1.5)
        },
        speedup("large-read/consume", "memcpy", "consuming the bytes vs `memcpy` bandwidth", at: 0.8, "≥ 0.8× `memcpy` bandwidth"),
        speedup("open-and-first-read", "libzip", "vs libzip opening a 100,000-entry archive", at: 100, "≥ 100× faster"),
        Target(scenario: "readers", comparison: "2 reader processes vs 1", goal: "≥ 1.8× aggregate reads/s") { r in
            guard let one = r["readers/1"]?.measurement("assetpacks"), let two = r["readers/2"]?.measurement("assetpacks"),
                  one.opsPerSecond > 0 else { return nil }
            let x = two.opsPerSecond / one.opsPerSecond
            return ("\(Format.ratio(x)) (\(Format.rate(two.opsPerSecond)) vs \(Format.rate(one.opsPerSecond)) reads/s)", x >= 1.8)
        },
        Target(scenario: "readers/install", comparison: "reader p99 while another process installs updates (background) vs idle",
               goal: "≤ 2× idle p99") { r in
            guard let idle = r["readers/1"]?.measurement("assetpacks"), let busy = r["readers/install"]?.measurement("assetpacks"),
                  idle.p99 > 0 else { return nil }
            let x = busy.p99 / idle.p99
            return ("\(Format.ratio(x)) (\(Format.duration(busy.p99)) vs \(Format.duration(idle.p99)))", x <= 2)
        },
        Target(scenario: "readers/install-one-cpu", comparison: "longest read while a background install shares the reader's CPU",
               goal: "≤ 2 ms") { r in
            guard let busy = r["readers/install-one-cpu"]?.measurement("assetpacks"), busy.histogram.total > 0 else { return nil }
            let longest = busy.histogram.percentile(1)
            return ("\(Format.duration(longest)) (p99.99 \(Format.duration(busy.histogram.percentile(0.9999))))", longest <= 2e6)
        },
        Target(scenario: "codec/inflate", comparison: "libdeflate vs zlib, whole-member inflate",
               goal: "> 1.5× → use libdeflate for whole-buffer inflate") { r in
            guard let s = r["codec/inflate"], let z = s.measurement("zlib")?.bytesPerSecond,
                  let d = s.measurement("libdeflate")?.bytesPerSecond, z > 0 else { return nil }
            let x = d / z
            return ("\(Format.ratio(x)) (\(Format.bandwidth(d)) vs \(Format.bandwidth(z)))", x > 1.5)
        },
        speedup("download", "curl", "AssetPacks download (verify, install) vs curl to a file, 1 GiB from nginx", at: 0.9, "≥ 0.9× curl's throughput"),
        speedup("serve/download", "nginx", "`assetpack serve` vs nginx, 1 GiB with curl", at: 0.8, "≥ 0.8× nginx's throughput"),
    ]

    /// A target on the reference's speedup over one contender.
    private static func speedup(_ scenario: String, _ contender: String, _ comparison: String,
                                at least: Double, _ goal: String) -> Target {
        Target(scenario: scenario, comparison: comparison, goal: goal, evaluate: { r in
            guard let x = r[scenario]?.speedup(over: contender) else { return nil }
            return (Format.ratio(x), x >= least)
        }, ceiling: rawLMDB(scenario, over: contender))
    }

    /// How many times faster than `contender` raw LMDB was in the same case,
    /// by the case's basis: the most a lookup through LMDB could reach.
    private static func rawLMDB(_ scenario: String, over contender: String) -> @Sendable ([String: ScenarioResult]) -> String? {
        { r in
            guard var s = r[scenario], contender != "lmdb-raw", s.measurement("lmdb-raw") != nil else { return nil }
            s.reference = "lmdb-raw"
            return s.speedup(over: contender).map { "raw `mdb_get`: \(Format.ratio($0))" }
        }
    }

    static func evaluate(_ results: [ScenarioResult]) -> [TargetOutcome] {
        var byName: [String: ScenarioResult] = [:]
        for r in results { byName[r.name] = r }
        return all.map { t in
            let e = t.evaluate(byName)
            return TargetOutcome(target: t, measured: e?.measured, met: e?.met, ceiling: e == nil ? nil : t.ceiling(byName))
        }
    }
}

/// How a scenario's contenders are compared with the reference.
enum RatioBasis: String {
    /// By median latency: speedup = their p50 / our p50.
    case latency
    /// By bytes per second: speedup = our bytes/s / their bytes/s.
    case throughput
    /// Not compared (a single contender, or figures that are not alike).
    case none
}

/// The measurements of one measured case: a scenario, or one part of it
/// (`large-read/return`, `descriptor/memfd`, …).
struct ScenarioResult {
    /// The stable name in JSON records: the scenario, or `scenario/part`.
    let name: String
    /// What was measured, for the table's heading.
    let summary: String
    let measurements: [Measurement]
    var basis: RatioBasis = .latency
    /// The contender the others are compared with.
    var reference = "assetpacks"
    /// Remarks printed under the table.
    var notes: [String] = []

    func measurement(_ contender: String) -> Measurement? {
        measurements.first { $0.contender == contender }
    }

    /// How many times better the reference did than `contender` (> 1: the
    /// reference wins), on this result's basis; `nil` when not comparable.
    func speedup(over contender: String) -> Double? {
        guard let ours = measurement(reference), let theirs = measurement(contender) else { return nil }
        switch basis {
        case .latency:
            guard ours.p50 > 0 else { return nil }
            return theirs.p50 / ours.p50
        case .throughput:
            guard let a = ours.bytesPerSecond, let b = theirs.bytesPerSecond, b > 0 else { return nil }
            return a / b
        case .none:
            return nil
        }
    }
}

/// One line of the `--json` output: one contender in one measured case.
struct Record: Codable {
    let scenario: String
    let contender: String
    let opsPerSecond: Double
    let p50: Double
    let p99: Double
    let bytesPerSecond: Double?

    enum CodingKeys: String, CodingKey {
        case scenario, contender
        case opsPerSecond = "ops_per_sec"
        case p50 = "p50_ns"
        case p99 = "p99_ns"
        case bytesPerSecond = "bytes_per_sec"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(scenario, forKey: .scenario)
        try c.encode(contender, forKey: .contender)
        try c.encode(opsPerSecond.rounded(), forKey: .opsPerSecond)
        try c.encode(p50.rounded(), forKey: .p50)
        try c.encode(p99.rounded(), forKey: .p99)
        if let bytesPerSecond { try c.encode(bytesPerSecond.rounded(), forKey: .bytesPerSecond) }
    }
}

extension ScenarioResult {
    var records: [Record] {
        measurements.map {
            Record(scenario: name, contender: $0.contender, opsPerSecond: $0.opsPerSecond,
                   p50: $0.p50, p99: $0.p99, bytesPerSecond: $0.bytesPerSecond)
        }
    }
}

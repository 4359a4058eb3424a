/// How `assetpack serve` serves: where it listens, its limits, and the faults it injects.
package struct ServerConfiguration: Sendable {
    /// The numeric IPv4 or IPv6 address to listen on.
    package var address = "127.0.0.1"
    /// The port; 0 lets the kernel pick a free one.
    package var port = 8080
    /// Connections served at once. Past it, a new connection replaces the one
    /// that has waited longest for a request; with none waiting (all are
    /// being answered), it is answered 503 and closed.
    package var maximumConnections = 512
    /// The longest a request head may take to arrive, from the connection's
    /// start or its first byte, in seconds.
    package var requestTimeout = 10.0
    /// The longest a kept-alive connection may wait for its next request, and
    /// a response may wait for the client to read, in seconds.
    package var idleTimeout = 60.0
    /// The largest request line and fields, in bytes.
    package var headLimit = HTTPRequest.defaultHeadLimit
    /// The faults to inject.
    package var faults = FaultPlan()
    /// Receives each access-log line and each notice, without a newline.
    package var log: @Sendable (String) -> Void = { _ in }

    package init() {}
}

/// The misbehaviour `serve` injects for testing clients (`--throttle`,
/// `--drop-after`, `--fail-rate`, `--stall-after`, `--ignore-range`),
/// deterministic given ``seed``.
package struct FaultPlan: Sendable, Equatable {
    /// Body bytes per second per connection; `nil`: as fast as possible.
    package var throttle: Int64?
    /// Close the connection after this many body bytes of a response.
    package var dropAfter: Int64?
    /// The fraction (0…1) of requests answered 500 or 503.
    package var failRate = 0.0
    /// Stop sending after this many body bytes of a response, keeping the connection open.
    package var stallAfter: Int64?
    /// Ignore Range: always send the whole file.
    package var ignoreRange = false
    /// Only requests whose decoded path matches this glob (`fnmatch`, `*`
    /// crossing `/`) get faults; `nil`: all of them.
    package var pathPattern: String?
    /// The seed of the generator behind ``failRate``.
    package var seed: UInt64 = 0

    package init() {}

    /// Whether any fault is set.
    package var isActive: Bool {
        throttle != nil || dropAfter != nil || failRate > 0 || stallAfter != nil || ignoreRange
    }

    /// The faults, as the start-up notice lists them.
    package var summary: String {
        var parts: [String] = []
        if let throttle { parts.append("throttle \(throttle) B/s") }
        if let dropAfter { parts.append("drop after \(dropAfter) B") }
        if failRate > 0 { parts.append("fail rate \(failRate)") }
        if let stallAfter { parts.append("stall after \(stallAfter) B") }
        if ignoreRange { parts.append("ignore range") }
        if let pathPattern { parts.append("only paths matching '\(pathPattern)'") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}

/// SplitMix64: a small, seeded, reproducible generator (the same seed gives
/// the same sequence on every machine).
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<1 with 53 random bits.
    package mutating func fraction() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }
}

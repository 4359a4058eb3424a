import Foundation

/// A deterministic set of members: random paths, sizes and contents drawn
/// from a fixed seed, so every run (and every worker process) sees the same
/// data without storing it.
struct MemberSet {
    enum Content {
        /// Incompressible bytes, as media is.
        case random
        /// Text: words of a fixed vocabulary in Zipf-like frequency, prose
        /// lines and JSON-like `"key": value` lines. Deflates to about 45 %.
        case text
    }

    let paths: [String]
    let sizes: [Int]
    let content: Content
    let seed: UInt64

    /// `count` members of `sizes` bytes each (uniformly), under `prefix`,
    /// at paths `prefix` + `dir/dir/name.ext` (1,024 directories).
    init(count: Int, sizes range: ClosedRange<Int>, content: Content, seed: UInt64, prefix: String = "", ext: String) {
        var rng = SplitMix64(seed: seed)
        let dirs = (0 ..< 32).map { _ in MemberSet.word(&rng, 3 ... 8) }
        var seen = Set<String>(minimumCapacity: count)
        var paths: [String] = []
        paths.reserveCapacity(count)
        while paths.count < count {
            let p = prefix + dirs[rng.below(32)] + "/" + dirs[rng.below(32)] + "/" + MemberSet.word(&rng, 6 ... 14) + "." + ext
            if seen.insert(p).inserted { paths.append(p) }
        }
        self.paths = paths
        self.sizes = (0 ..< count).map { _ in rng.within(range) }
        self.content = content
        self.seed = seed
    }

    var count: Int { paths.count }
    var totalBytes: Int { sizes.reduce(0, +) }

    /// The bytes of member `i`.
    func bytes(_ i: Int) -> [UInt8] {
        var rng = SplitMix64(seed: seed ^ (UInt64(i) &* 0x9E37_79B9_7F4A_7C15) ^ 0xB7E1_5162)
        switch content {
        case .random: return MemberSet.randomBytes(sizes[i], &rng)
        case .text: return MemberSet.text(sizes[i], &rng)
        }
    }

    static func randomBytes(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var i = 0
            while i + 8 <= count {
                UnsafeMutableRawPointer(buffer.baseAddress! + i).storeBytes(of: rng.next(), as: UInt64.self)
                i += 8
            }
            while i < count {
                buffer[i] = UInt8(truncatingIfNeeded: rng.next())
                i += 1
            }
            initialized = count
        }
    }

    private static func word(_ rng: inout SplitMix64, _ length: ClosedRange<Int>) -> String {
        String(decoding: (0 ..< rng.within(length)).map { _ in UInt8(ascii: "a") + UInt8(rng.below(26)) }, as: UTF8.self)
    }

    /// 4,096 words, and a table mapping 16 random bits to a word rank with
    /// probability about proportional to 1 / rank.
    private static let vocabulary: (words: [[UInt8]], rank: [UInt16]) = {
        var rng = SplitMix64(seed: 0x7E87)
        let words = (0 ..< 4096).map { _ in Array(word(&rng, 2 ... 10).utf8) }
        let rank = (0 ..< 65536).map { k in UInt16(min(4095, exp(Double(k) / 65536 * log(4097.0)) - 1)) }
        return (words, rank)
    }()

    static func text(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
        let (words, rank) = vocabulary
        var out: [UInt8] = []
        out.reserveCapacity(count + 64)
        func pick() -> [UInt8] { words[Int(rank[rng.below(65536)])] }
        while out.count < count {
            if rng.below(10) < 3 {
                out.append(contentsOf: Array("  \"".utf8))
                out.append(contentsOf: pick())
                out.append(UInt8(ascii: "_"))
                out.append(contentsOf: pick())
                out.append(contentsOf: Array("\": ".utf8))
                out.append(contentsOf: Array(String(rng.below(100_000)).utf8))
                out.append(contentsOf: Array(",\n".utf8))
            } else {
                for w in 0 ..< rng.within(4 ... 14) {
                    if w > 0 { out.append(UInt8(ascii: " ")) }
                    out.append(contentsOf: pick())
                }
                out.append(contentsOf: rng.below(4) == 0 ? Array(".\n".utf8) : Array("\n".utf8))
            }
        }
        out.removeLast(out.count - count)
        return out
    }

    /// The distinct directories of the paths, parents first.
    var directories: [String] {
        var dirs = Set<String>()
        for p in paths {
            var parts = p.split(separator: "/").dropLast()
            while !parts.isEmpty {
                dirs.insert(parts.joined(separator: "/"))
                parts = parts.dropLast()
            }
        }
        return dirs.sorted { $0.count < $1.count || ($0.count == $1.count && $0 < $1) }
    }
}

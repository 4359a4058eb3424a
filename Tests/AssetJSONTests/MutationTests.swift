import AssetJSON
import TestSupport
import Testing

/// Nothing traps on bad input: seed documents with bytes replaced,
/// inserted, deleted, repeated or cut either parse — and then encode and
/// parse back to the same value — or are refused with a `JSONError` whose
/// position lies inside the document.
@Suite struct MutationTests {
    /// Bytes that matter to the grammar, and UTF-8 edge bytes.
    static let interesting: [UInt8] = Array(#"{}[]",:\/*-+.eE0159untrfalsx "#.utf8)
        + [0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xef, 0xbb, 0xf0, 0xf4, 0xf5, 0xff]

    static func mutate(_ seed: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = seed
        for _ in 0 ... Int.random(in: 0 ... 2, using: &rng) {
            func byte() -> UInt8 {
                Bool.random(using: &rng) ? interesting.randomElement(using: &rng)! : UInt8.random(in: 0 ... 255, using: &rng)
            }
            let at = Int.random(in: 0 ... bytes.count, using: &rng)
            switch Int.random(in: 0 ..< 5, using: &rng) {
            case 0 where at < bytes.count:
                bytes[at] = byte()
            case 1:
                bytes.insert(byte(), at: at)
            case 2 where at < bytes.count:
                bytes.removeSubrange(at ..< min(bytes.count, at + Int.random(in: 1 ... 4, using: &rng)))
            case 3 where at < bytes.count:
                let end = min(bytes.count, at + Int.random(in: 1 ... 12, using: &rng))
                let piece = Array(bytes[at ..< end])
                bytes.insert(contentsOf: piece, at: Int.random(in: 0 ... bytes.count, using: &rng))
            default:
                bytes.removeSubrange(at...)
            }
        }
        return bytes
    }

    @Test func mutatedDocumentsNeverTrapAndAcceptedOnesRoundTrip() {
        var rng = SplitMix64(seed: 0x4153_5345_544a_534f)
        let seeds = (seedDocuments + commentedSeedDocuments).map { Array($0.utf8) }
        var accepted = 0
        var refused = 0
        var problems: [String] = []
        for _ in 0 ..< 20_000 where problems.count < 10 {
            let document = Self.mutate(seeds.randomElement(using: &rng)!, &rng)
            var strictValue: JSONValue?
            for options in [JSONValue.ParseOptions.strict, .jsonWithComments] {
                do {
                    let value = try JSONValue.parse(document, options: options)
                    accepted += 1
                    let bytes = value.encoded()
                    guard let again = try? JSONValue.parse(bytes), again == value, again.encoded() == bytes else {
                        problems.append("does not round-trip: \(document)")
                        continue
                    }
                    if let strictValue, strictValue != value { problems.append("options disagree: \(document)") }
                    strictValue = value
                } catch {
                    refused += 1
                    if options == .jsonWithComments, strictValue != nil { problems.append("only strict accepts: \(document)") }
                    guard error.offset >= 0, error.offset <= document.count, error.line >= 1,
                          error.column >= 1, error.column <= error.offset + 1,
                          error.description.hasPrefix("line \(error.line), column \(error.column): ") else {
                        problems.append("bad position \(error.offset) \(error.line):\(error.column) in \(document)")
                        continue
                    }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems)")
        #expect(accepted > 2000, "the mutations still leave many documents valid")
        #expect(refused > 10_000)
    }
}

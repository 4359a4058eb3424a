import Foundation
import Testing
@testable import FuzzTargets

/// Every seed in `Fuzz/Corpus/<target>` and every crasher kept in
/// `Fuzz/Regressions/<target>`, fed once to its target exactly as the
/// fuzzer feeds it. A crash fails the whole run, which is the point: an
/// input that once crashed a decoder must never crash it again.
@Suite struct FuzzRegressionTests {
    static let fuzz = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The regular files of `Fuzz/<kind>/<target>`, sorted; none when the
    /// directory does not exist.
    static func inputs(_ kind: String, _ target: FuzzTarget) -> [URL] {
        let directory = fuzz.appendingPathComponent(kind).appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0 != ".gitkeep" }.sorted().map { directory.appendingPathComponent($0) }
    }

    /// Each seed corpus runs clean, and holds inputs the decoder accepts and
    /// inputs it refuses: a target that stopped reaching its decoder would
    /// still run clean, but would accept nothing.
    @Test(arguments: FuzzTarget.allCases)
    func seedsRunCleanAndReachTheDecoder(_ target: FuzzTarget) throws {
        let seeds = Self.inputs("Corpus", target)
        var accepted = 0
        for url in seeds {
            let data = try Data(contentsOf: url)
            if data.withUnsafeBytes({ target.run($0) }) { accepted += 1 }
        }
        #expect(accepted > 0, "no seed in Fuzz/Corpus/\(target.rawValue) is accepted")
        #expect(accepted < seeds.count, "every seed in Fuzz/Corpus/\(target.rawValue) is accepted")
    }

    @Test(arguments: FuzzTarget.allCases)
    func regressionsRunClean(_ target: FuzzTarget) throws {
        for url in Self.inputs("Regressions", target) {
            let data = try Data(contentsOf: url)
            data.withUnsafeBytes { _ = target.run($0) }
        }
    }
}

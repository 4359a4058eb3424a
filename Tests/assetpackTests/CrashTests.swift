import Foundation
import Testing
import AssetPacks
import AssetSystem
import AssetStore
import TestSupport

/// A writer killed with SIGKILL at any point of an install, an update or a
/// removal leaves a store that opens, that `assetpack verify --deep` finds
/// undamaged, and that holds the old version, the new version, or no
/// version — every member whole — and that the next writer can change.
///
/// The kill points are the named crash points of the store
/// (docs/coordination.md), some counted (`install.index.member#58`: at the
/// 58th member written into the index), which only the test helper's
/// writer (`assetpack-testhelper install` / `remove`) arms; the kills after
/// random delays hit the real `assetpack`. The default suite covers 60
/// points plus 10 random kills; `ASSETPACKS_SOAK=1` runs every occurrence
/// of every point (517) and 200 random kills.
@Suite struct CrashTests {
    enum Operation: String, Sendable, CustomStringConvertible {
        /// Installs v2 into an empty container.
        case install
        /// Replaces v1 with v2.
        case update
        /// Removes v1.
        case remove
        var description: String { rawValue }
    }

    struct KillPoint: Sendable, CustomStringConvertible {
        let operation: Operation
        let point: String
        var description: String { "\(operation) at \(point)" }
    }

    static let soak = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1"

    /// The stress pack has 116 members; v1 and v2 share 105 paths, and each
    /// has 11 of its own.
    static let memberCount = 116

    static func counted(_ name: String, _ occurrences: [Int], all: Int) -> [String] {
        (soak ? Array(1...all) : occurrences).map { "\(name)#\($0)" }
    }

    static let installPoints = [
        "install.locked-container", "install.staging-named", "install.copied", "install.staged",
        "install.validated", "install.locked-pack", "install.published", "install.published-synced",
        "install.index.written", "install.committed", "install.done",
    ]

    static let killPoints: [KillPoint] = {
        var points: [KillPoint] = []
        for p in installPoints + counted("install.index.member", [1, 2, 30, 58, 90, 115, 116], all: memberCount)
            + counted("install.index.path-added", [1, 58, 116], all: memberCount) {
            points.append(KillPoint(operation: .install, point: p))
        }
        for p in installPoints + ["install.retire-linked", "install.unlinked-old"]
            + counted("install.index.member", [1, 2, 40, 80, 115, 116], all: memberCount)
            + counted("install.index.path-added", [1, 6, 11], all: 11)
            + counted("install.index.member-dropped", [1, 6, 11], all: 11) {
            points.append(KillPoint(operation: .update, point: p))
        }
        for p in ["remove.locked-container", "remove.locked-pack", "remove.retire-linked", "remove.index.written", "remove.committed",
                  "remove.unlinked-archive", "remove.done"]
            + counted("remove.index.member", [1, 2, 30, 60, 90, 115, 116], all: memberCount) {
            points.append(KillPoint(operation: .remove, point: p))
        }
        return points
    }()

    /// One container per kill point, with v1 installed first unless the
    /// operation is a fresh install.
    final class Setup {
        let scratch: TemporaryDirectory
        let packs: String
        let operation: Operation
        init(_ operation: Operation, label: String) throws {
            scratch = TemporaryDirectory("assetpack-crash-\(label)")
            packs = Self.packs
            self.operation = operation
            if operation != .install {
                _ = try AssetPackManager(container: .init(path: scratch.container)).installPack(at: packs + "/v1.zip")
            }
        }

        /// The writer's command line for `assetpack`.
        var arguments: [String] {
            switch operation {
            case .install, .update: return ["install", packs + "/v2.zip", "--container", scratch.container]
            case .remove: return ["rm", "stress", "--container", scratch.container]
            }
        }

        /// The same writer's command line for the test helper, which dies
        /// at the point `ASSETPACKS_CRASH_AT` names.
        var helperArguments: [String] {
            switch operation {
            case .install, .update: return ["install", "--container", scratch.container, "--pack", packs + "/v2.zip"]
            case .remove: return ["remove", "--container", scratch.container, "--id", "stress"]
            }
        }

        /// The versions the pack may be in after the operation died.
        var allowed: Set<Int?> {
            switch operation {
            case .install: return [nil, 2]
            case .update: return [1, 2]
            case .remove: return [1, nil]
            }
        }

        /// Checks everything the suite promises after a kill; returns the
        /// version found.
        @discardableResult
        func checkAfterKill(_ context: String) throws -> Int? {
            let verify = try CLI.assetpack(["verify", "--deep"], container: scratch.container)
            #expect(verify.status == 0, "\(context): verify --deep: \(verify.out)\(verify.stderr)")
            let manager = try AssetPackManager(container: .init(path: scratch.container))
            let version = try installedVersion(manager)
            #expect(allowed.contains(version), "\(context): found version \(version.map(String.init) ?? "none")")
            if let version {
                let listed = try manager.members(inAssetPackWithID: "stress").map(\.path)
                let want = try Self.expected(version)
                #expect(listed == want.keys.sorted(), "\(context): member list of v\(version)")
                for (path, bytes) in want {
                    let data = try manager.contents(at: path, searchingInAssetPackWithID: "stress")
                    #expect(data == bytes, "\(context): \(path) is not v\(version)'s")
                }
            }
            // The next writer finishes the job and reclaims what the kill left.
            // (A removal killed after its commit has no next writer: what it
            // left is reclaimable, not damage, until one comes.)
            switch operation {
            case .install, .update: try manager.installPack(at: packs + "/v2.zip")
            case .remove: if version != nil { try manager.remove(assetPackWithID: "stress") }
            }
            let report = try manager.verify(.init(deep: true))
            #expect(!report.hasErrors, "\(context): after the next writer: \(report.findings)")
            if operation != .remove || version != nil {
                #expect(report.findings.isEmpty, "\(context): after the next writer: \(report.findings)")
            }
            return version
        }

        /// Which version's archive is installed, by SHA-256.
        func installedVersion(_ manager: AssetPackManager) throws -> Int? {
            guard let pack = try? manager.assetPack(withID: "stress") else { return nil }
            for v in [1, 2] where Self.witness.sha256[v] == pack.sha256 { return v }
            Issue.record("installed archive \(pack.sha256) is neither v1 nor v2")
            return -1
        }

        /// v1.zip and v2.zip of the stress pack, written once per test run
        /// and removed when the test process exits.
        static let packs: String = {
            let dir = FileManager.default.temporaryDirectory.path + "/assetpack-crash-packs-\(getpid())"
            if !FileManager.default.fileExists(atPath: dir + "/v2.zip") { try! Helper.makePacks(dir, versions: 2) }
            atexit { try? FileManager.default.removeItem(atPath: Setup.packs) }
            return dir
        }()

        /// What Python's zipfile and hashlib read from the two pack files:
        /// each version's members and SHA-256, the independent witness.
        static let witness: (members: [Int: [String: Data]], sha256: [Int: String]) = {
            let script = """
                import base64, hashlib, json, sys, zipfile
                out = {}
                for v in ("1", "2"):
                    path = sys.argv[1] + "/v" + v + ".zip"
                    with zipfile.ZipFile(path) as z:
                        members = {n: base64.b64encode(z.read(n)).decode() for n in z.namelist()}
                    out[v] = {"sha256": hashlib.sha256(open(path, "rb").read()).hexdigest(), "members": members}
                json.dump(out, sys.stdout)
                """
            let r = try! Program.run("python3", ["-c", script, packs])
            let object = try! JSONSerialization.jsonObject(with: r.stdout) as! [String: [String: Any]]
            var members: [Int: [String: Data]] = [:], sha: [Int: String] = [:]
            for (v, entry) in object {
                sha[Int(v)!] = entry["sha256"] as? String
                members[Int(v)!] = (entry["members"] as! [String: String]).mapValues { Data(base64Encoded: $0)! }
            }
            return (members, sha)
        }()

        static func expected(_ v: Int) throws -> [String: Data] { witness.members[v] ?? [:] }
    }

    @Test(.timeLimit(.minutes(5)), arguments: killPoints)
    func killedWriterLeavesOldNewOrNothing(_ kill: KillPoint) throws {
        let setup = try Setup(kill.operation, label: kill.point.replacingOccurrences(of: "#", with: "-"))
        let writer = try Child(Helper.binary, setup.helperArguments, environment: ["ASSETPACKS_CRASH_AT": kill.point])
        #expect(writer.wait(timeout: 60))
        #expect(writer.wasKilled, "\(kill): the writer was not killed there (exit \(writer.exitStatus.map(String.init) ?? "?"): \(writer.stderr))")
        try setup.checkAfterKill("\(kill)")
    }

    /// The crash points are armed only in the test helper: the shipped
    /// command, given the variable that once killed it there, installs and
    /// removes as usual.
    @Test func theCommandIgnoresTheCrashPointVariable() throws {
        let s = TemporaryDirectory("assetpack-crash-ignored")
        func assetpack(_ args: [String], crashAt point: String) throws -> Program.Result {
            let environment = ProcessInfo.processInfo.environment.merging(["ASSETPACKS_CRASH_AT": point]) { $1 }
            return try Program.run(CLI.binary, args + ["--container", s.container], environment: environment)
        }
        let install = try assetpack(["install", Setup.packs + "/v2.zip"], crashAt: "install.published")
        #expect(install.status == 0, "install: \(install.stderr)")
        let manager = try AssetPackManager(container: .init(path: s.container))
        #expect(try manager.assetPack(withID: "stress").sha256 == Setup.witness.sha256[2])
        for (path, bytes) in try Setup.expected(2) {
            #expect(try manager.contents(at: path, searchingInAssetPackWithID: "stress") == bytes, "\(path)")
        }
        let removal = try assetpack(["rm", "stress"], crashAt: "remove.committed")
        #expect(removal.status == 0, "rm: \(removal.stderr)")
        #expect((try? manager.assetPack(withID: "stress")) == nil, "the pack is gone")
    }

    /// Kills after random delays, spread over a whole update: the writer may
    /// die anywhere, including inside calls no named point separates.
    @Test(.timeLimit(.minutes(10))) func killedAtRandomMomentsLeavesOldOrNew() throws {
        var rng = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &rng)
        var random = SplitMix64(seed: seed)
        // How long an update takes here, start to exit.
        let timing = try Setup(.update, label: "timing")
        let start = Date()
        #expect(try Program.run(CLI.binary, timing.arguments).status == 0)
        let span = Date().timeIntervalSince(start)
        var outcomes: [Int?: Int] = [:]
        for round in 0..<(Self.soak ? 200 : 10) {
            let setup = try Setup(.update, label: "random-\(round)")
            let delay = Double(random.next() % 1000) / 1000 * span * 1.2
            let writer = try Child(CLI.binary, setup.arguments)
            usleep(UInt32(delay * 1_000_000))   // the experiment's variable, not a synchronization
            writer.signal(SIGKILL)
            #expect(writer.wait(timeout: 60))
            let version = try setup.checkAfterKill("random kill \(round) after \(delay) s (seed \(seed))")
            outcomes[version, default: 0] += 1
        }
        #expect(outcomes.keys.allSatisfy { $0 == 1 || $0 == 2 }, "seed \(seed): \(outcomes)")
    }
}



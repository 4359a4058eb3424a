import Foundation

/// assetpack-bench: every hot operation of AssetPacks side by side with what
/// a user would pick instead and with the physical limit, in one run.
let usage = """
    OVERVIEW: Benchmarks AssetPacks against SQLite, libzip, plain files, raw LMDB, zlib and memcpy.

    USAGE: assetpack-bench [--quick] [--json FILE] [--update-readme] [--data-dir DIR] [SCENARIO ...]

    ARGUMENTS:
      SCENARIO            Scenarios to run (default: all that exist). See --list.

    OPTIONS:
      --quick             Smaller data and shorter passes, for CI smoke runs.
      --json FILE         Write one JSON record per contender per measured case to FILE.
      --update-readme     Rewrite the results section of Benchmarks/README.md
                          (only after a full run of every scenario).
      --data-dir DIR      Generate data in DIR and keep it; later runs reuse what is complete.
      --only NAME,...     Run only these contenders (for profiling one of them).
      --rounds N          Rounds per contender (default 7; 3 with --quick).
      --readers-members N Members of the `readers` pack (default 10,000; 2,000 with --quick);
                          past 100,000 they are 64-1024 B instead of 1-16 KiB.
      --reader-seconds S  Seconds per `readers` phase (default 2; 0.5 with --quick).
      --list              List the scenarios and exit.
      -h, --help          Show this help.
    """

struct Options {
    var quick = false
    var json: String?
    var updateReadme = false
    var dataDirectory: String?
    var list = false
    var only: Set<String>?
    var rounds: Int?
    var readersMembers: Int?
    var readerSeconds: Double?
    var scenarios: [String] = []

    init(_ arguments: [String]) throws {
        var i = 0
        func value(_ flag: String) throws -> String {
            i += 1
            guard i < arguments.count else { throw BenchError.usage("\(flag) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            let a = arguments[i]
            switch a {
            case "--quick": quick = true
            case "--json": json = try value(a)
            case "--update-readme": updateReadme = true
            case "--data-dir": dataDirectory = try value(a)
            case "--list": list = true
            case "--rounds":
                guard let n = Int(try value(a)), n > 0 else { throw BenchError.usage("--rounds needs a positive count") }
                rounds = n
            case "--only": only = Set(try value(a).split(separator: ",").map(String.init))
            case "--readers-members":
                guard let n = Int(try value(a)), n >= 100 else { throw BenchError.usage("--readers-members needs a count of at least 100") }
                readersMembers = n
            case "--reader-seconds":
                guard let t = Double(try value(a)), t > 0 else { throw BenchError.usage("--reader-seconds needs a positive number") }
                readerSeconds = t
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                guard !a.hasPrefix("-") else { throw BenchError.usage("unknown option \(a)") }
                guard Scenarios.named(a) != nil else { throw BenchError.usage("unknown scenario \(a) (see --list)") }
                scenarios.append(a)
            }
            i += 1
        }
        if updateReadme && (quick || !scenarios.isEmpty || only != nil || rounds != nil || readersMembers != nil || readerSeconds != nil) {
            throw BenchError.usage("--update-readme needs a full run of every scenario (no --quick, --only, --rounds or scenario names)")
        }
    }
}

func runBenchmarks(_ options: Options) throws {
    if options.list {
        for s in Scenarios.all { print("\(s.name)\(s.pending == nil ? "" : " (pending)")\n    \(s.summary)") }
        return
    }
    let chosen = options.scenarios.isEmpty ? Scenarios.all : options.scenarios.compactMap(Scenarios.named)
    var info = RunInfo(quick: options.quick)
    let workspace = try Workspace(root: options.dataDirectory, scale: Scale(quick: options.quick, rounds: options.rounds, only: options.only,
                                                                readersMembersGiven: options.readersMembers, readerSecondsGiven: options.readerSeconds))
    defer { workspace.finish() }
    let context = Context(workspace: workspace, executable: currentExecutable())
    Log.info("assetpack-bench: \(options.quick ? "quick" : "full") run in \(workspace.root); clock overhead \(Format.duration(Clock.overhead))")
    let start = Clock.seconds
    var results: [ScenarioResult] = []
    var pending = Scenarios.pendingCases.filter { c in chosen.contains { c.0.hasPrefix($0.name + "/") } }
    for s in chosen {
        guard let run = s.run else {
            pending.append((s.name, s.pending ?? "pending"))
            continue
        }
        Log.info("\(s.name): \(s.summary)")
        let t = Clock.seconds
        let cpu = CPUUse.now()
        var r = try run(context)
        let other = CPUUse.now().shares(since: cpu, seconds: Clock.seconds - t).other
        if other >= 0.02 {
            for i in r.indices { r[i].notes.append("Other processes used \(Int((100 * other).rounded())) % of the CPU during this scenario.") }
        }
        results += r
        Log.info("\(s.name): done in \(Format.fixed(Clock.seconds - t, decimals: 1)) s; other processes used \(Int((100 * other).rounded())) % of the CPU")
        for x in r { Log.info("\(x.name):\n" + Report.table(x)) }
    }
    info.finish(seconds: Clock.seconds - start)
    if info.otherShare > 0.1 {
        Log.info("warning: other processes used \(Int(100 * info.otherShare)) % of the CPU during the run; the figures are disturbed")
    }
    let section = Report.markdown(results, info: info, pending: pending)
    print(section)
    if let path = options.json {
        try Report.json(results).write(to: URL(fileURLWithPath: path))
    }
    if options.updateReadme {
        try Report.updateReadme(at: Report.readmePath, with: section)
        Log.info("updated \(Report.readmePath)")
    }
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "--worker" {
        try Workers.run(Array(arguments.dropFirst()))
    } else {
        try runBenchmarks(try Options(arguments))
    }
} catch let error as BenchError {
    if case .usage = error {
        Log.info("Error: \(error)\nUsage: assetpack-bench [--quick] [--json FILE] [--update-readme] [--data-dir DIR] [SCENARIO ...]\nSee 'assetpack-bench --help'.")
        exit(64)
    }
    Log.info("Error: \(error)")
    exit(1)
} catch {
    Log.info("Error: \(error)")
    exit(1)
}

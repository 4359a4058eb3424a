/// What a scenario gets to run with.
struct Context {
    let workspace: Workspace
    /// This executable, for scenarios that start worker processes.
    let executable: String
    var scale: Scale { workspace.scale }
}

/// A named benchmark scenario: it generates its data, runs its contenders
/// and returns one result per measured case. A pending scenario has no body
/// yet, only the reason.
struct Scenario: Sendable {
    let name: String
    /// What it measures, for `--list` and the README.
    let summary: String
    let run: (@Sendable (Context) throws -> [ScenarioResult])?
    let pending: String?

    init(_ name: String, _ summary: String, run: @escaping @Sendable (Context) throws -> [ScenarioResult]) {
        self.name = name
        self.summary = summary
        self.run = run
        self.pending = nil
    }

    init(_ name: String, _ summary: String, pending reason: String) {
        self.name = name
        self.summary = summary
        self.run = nil
        self.pending = reason
    }
}

/// Every scenario, in the order a full run takes them.
enum Scenarios {
    static let all: [Scenario] = [
        SmallReadScenario.plain,
        SmallReadScenario.consume,
        SmallReadScenario.fourKiB,
        ThreadedReadScenario.scenario,
        SmallReadDeflatedScenario.scenario,
        CodecScenario.scenario,
        LargeReadScenario.scenario,
        DescriptorScenario.scenario,
        OpenAndFirstReadScenario.scenario,
        InstallScenario.scenario,
        InstallScenario.million,
        ReadersScenario.scenario,
        DownloadScenario.scenario,
        VerifyDeepScenario.scenario,
        VerifyDeepScenario.million,
        LargeMemberScenario.scenario,
        ServeScenario.scenario,
        StatusScenario.scenario,
        UpdateScenario.scenario,
    ]

    /// Measured cases that wait for code that does not exist yet.
    static let pendingCases: [(String, String)] = []

    static func named(_ name: String) -> Scenario? { all.first { $0.name == name } }
}

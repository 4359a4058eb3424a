import AssetPacks

/// `descriptor`: descriptor handouts per second, each descriptor closed at
/// once, on the `small-read` members.
///
/// - `descriptor/stored`: a new descriptor of the archive positioned at a
///   stored member; against `open` of the extracted file, and against a bare
///   Unix-socket round trip (what a handout through the daemon adds at least).
/// - `descriptor/memfd`: a deflated member inflated into a sealed `memfd`;
///   against `open` of the extracted plain file.
/// - `descriptor/standalone`: a stored member copied into a sealed `memfd`
///   (offset 0, exactly the member); against `open` of the extracted file.
enum DescriptorScenario {
    static let scenario = Scenario(
        "descriptor", "descriptor handouts per second: stored (archive range), deflated (sealed memfd), standalone"
    ) { ctx in try run(ctx) }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let stored = try SmallDataset.prepare(ctx.workspace, deflated: false)
        let text = try SmallDataset.prepare(ctx.workspace, deflated: true)
        let storedManager = try AssetPackManager(container: stored.container)
        let textManager = try AssetPackManager(container: text.container)
        let plan = ctx.scale.plan
        let range = try Competition.run([
            Contender("assetpacks", DescriptorHandout(manager: storedManager, pack: stored.packID, paths: stored.members.paths, options: [])),
            Contender("files", FilesOpen(paths: stored.filePaths)),
            Contender("unix-socket", UnixSocketRoundTrip(socket: try EchoSocket())),
        ], items: stored.members.count, plan: plan, seed: 0xD1)
        let memfd = try Competition.run([
            Contender("assetpacks", bytes: text.members.sizes,
                      DescriptorHandout(manager: textManager, pack: text.packID, paths: text.members.paths, options: [])),
            Contender("files", bytes: text.members.sizes, FilesOpen(paths: text.filePaths)),
        ], items: text.members.count, plan: plan, seed: 0xD2)
        let standalone = try Competition.run([
            Contender("assetpacks", bytes: stored.members.sizes,
                      DescriptorHandout(manager: storedManager, pack: stored.packID, paths: stored.members.paths, options: .standalone)),
            Contender("files", bytes: stored.members.sizes, FilesOpen(paths: stored.filePaths)),
        ], items: stored.members.count, plan: plan, seed: 0xD3)
        return [
            ScenarioResult(name: "descriptor/stored",
                           summary: "descriptor of the archive at a stored member (1–16 KiB); files: `open`; unix-socket: one-byte round trip to an echo thread",
                           measurements: range),
            ScenarioResult(name: "descriptor/memfd",
                           summary: "deflated text member (1–16 KiB) inflated into a sealed `memfd`; files: `open` of the plain file",
                           measurements: memfd),
            ScenarioResult(name: "descriptor/standalone",
                           summary: "stored member (1–16 KiB) copied into a sealed `memfd`; files: `open`",
                           measurements: standalone),
        ]
    }
}

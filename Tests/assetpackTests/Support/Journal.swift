import Foundation
import Testing
import AssetStore
import TestSupport

/// Where a container's download journal stands for one pack, read as the
/// next downloader reads it: the entry's file in `staging/` and its length.
struct Journal {
    let store: AssetStore
    let container: String

    init(container: String) throws {
        self.container = container
        store = try AssetStore(container: GroupContainer(path: container))
    }

    /// The journal entry's `staging/` file for `pack`, or nil without one.
    func file(_ pack: String) throws -> String? {
        try store.journalEntry(forPack: pack)?.stagingName.map { container + "/staging/" + $0 }
    }

    /// The bytes the entry's file holds: where a resumed download starts
    /// (0 without an entry or its file).
    func standing(_ pack: String) throws -> Int {
        guard let file = try file(pack) else { return 0 }
        return Self.size(file) ?? 0
    }

    /// The size of the file at `path`, or nil when there is none.
    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    }

    /// Runs `assetpack arguments…` (a download of `pack`), SIGKILLs it once
    /// the journal's file holds at least `bytes`, and returns where the
    /// journal stands then.
    func killDownload(_ arguments: [String], of pack: String, after bytes: Int) throws -> Int {
        let child = try Child(CLI.binary, arguments)
        #expect(eventually(timeout: 30) { !child.process.isRunning || ((try? standing(pack)) ?? 0) >= bytes })
        child.signal(SIGKILL)
        #expect(child.wait(timeout: 20) && child.wasKilled, "\(child.stderr)")
        return try standing(pack)
    }

    /// The `.download` files in `staging/`.
    var partialFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: container + "/staging")) ?? []).filter { $0.hasSuffix(".download") }
    }
}

/// What the access log of `server` says about the GETs of `target`:
/// whether each response continues exactly where the bytes sent before it
/// ended. Errors (`5xx`) carry no file bytes and are skipped.
struct TransferAccount {
    let responses: [ServeHost.Access]

    init(_ log: [ServeHost.Access], target: String) {
        responses = log.filter { $0.target == target && ($0.status == 200 || $0.status == 206) }
    }

    /// Body bytes of the file sent, in all.
    var sent: Int { responses.reduce(0) { $0 + $1.bodyBytes } }

    /// Whether each response after the first asked for the range starting
    /// at the bytes sent before it and was answered `206`, and the first
    /// asked for none and was answered `200`: nothing was sent twice.
    var eachResumesWhereTheLastStopped: Bool {
        var before = 0
        for (i, r) in responses.enumerated() {
            guard r.rangeStart == before, r.status == (i == 0 ? 200 : 206) else { return false }
            before += r.bodyBytes
        }
        return true
    }
}

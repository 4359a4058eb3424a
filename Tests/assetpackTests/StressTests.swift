import Foundation
import Testing
@testable import AssetStore
import AssetPacks
import AssetSystem
import AssetStore
import TestSupport

/// Many processes on one container: readers that never stop while writers
/// install, update, remove and reinstall the same pack.
@Suite(.serialized) struct StressTests {
    static var soak: Bool { ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1" }

    /// Three reader processes read the stress pack continuously — as mapped
    /// bytes, through descriptors, through standalone descriptors — while
    /// two writer processes cycle it through three versions and remove and
    /// reinstall it. The index starts at a 32 KiB map, so it must grow
    /// (`MDB_MAP_FULL`) and every other process adopt the grown map
    /// (`MDB_MAP_RESIZED`) during the run.
    @Test(.timeLimit(.minutes(4))) func readersSeeOneWholeVersionWhileWritersChurn() throws {
        let s = TemporaryDirectory("assetpack-stress")
        try Helper.makePacks(s.path + "/packs", versions: 3)
        let seconds = Self.soak ? "30" : "4"
        let common = ["--container", s.container, "--id", "stress", "--versions", "3", "--seconds", seconds, "--map-size", "32768"]
        let readers = try (0..<3).map { _ in try Child(Helper.binary, ["read-loop"] + common) }
        let writers = try [0, 2].map { start in
            try Child(Helper.binary, ["write-loop", "--dir", s.path + "/packs", "--start", String(start)] + common)
        }
        for child in readers + writers {
            #expect(child.wait(timeout: Self.soak ? 90 : 60), "a stress process did not finish")
            #expect(child.exitStatus == 0, "\(child.stderr)")
        }
        var versionsSeen = Set<String>()
        for reader in readers {
            let r = jsonObject(reader.stdout)
            #expect((r["errors"] as? [String]) == [], "reader errors: \(r["errors"] ?? reader.stderr)")
            // A snapshot whose archive is gone is looked at again while the
            // writers churn; a read never fails with .archiveMissing.
            #expect(r["archiveMissing"] as? Int ?? 0 == 0, "\(r)")
            #expect((r["reads"] as? Int ?? 0) > 100, "\(r)")
            #expect((r["heldChecks"] as? Int ?? 0) > 0, "\(r)")
            versionsSeen.formUnion((r["byVersion"] as? [String: Int] ?? [:]).keys)
        }
        #expect(versionsSeen == ["1", "2", "3"])
        for writer in writers {
            let w = jsonObject(writer.stdout)
            #expect((w["errors"] as? [String]) == [], "writer errors: \(w["errors"] ?? writer.stderr)")
            let counts = w["counts"] as? [String: Int] ?? [:]
            #expect((counts["removed"] ?? 0) > 0 && (counts["installed"] ?? 0) > 0 && (counts["replaced"] ?? 0) > 0, "\(counts)")
        }
        // The map grew: the data file holds more than the initial map.
        let dataSize = try FileManager.default.attributesOfItem(atPath: s.container + "/index/data.mdb")[.size] as? Int ?? 0
        #expect(dataSize > 32768)
        let verify = try CLI.assetpack(["verify", "--deep"], container: s.container)
        #expect(verify.status == 0, "\(verify.out)")
    }

    /// With a writable map, opening an index maps it, and mapping sets the
    /// file's length. One process grows the map for a write (the file grows
    /// with it; no commit records the new size yet); while that write is
    /// open, a second process opens the index asking for the old, smaller
    /// map. The file must not shrink under the writer: it then writes a
    /// 32 MiB value whose pages lie past the old end, and reads it back
    /// whole. (Cut back, the writer's pages past the end would be a
    /// `SIGBUS`, and the helper's exit status the signal.)
    @Test(.timeLimit(.minutes(1))) func anotherProcessOpeningDoesNotShrinkTheMapUnderAWriter() throws {
        let s = TemporaryDirectory("assetpack-map-growth")
        let dir = s.directory("index")
        let r = try Helper.run(["grow-map", "--dir", dir, "--helper", Helper.binary])
        #expect(r.status == 0, "grow-map: exit \(r.status): \(r.stderr)")
        let report = jsonObject(r.out)
        let before = report["before"] as? Int ?? 0
        #expect(before >= 64 << 20, "\(report)")
        #expect(report["after"] as? Int == before, "\(report)")
        #expect(report["helperStatus"] as? Int == 0, "\(report)")
        #expect(report["intact"] as? Bool == true, "\(report)")
    }

    /// A process that dies holding a read snapshot leaves its slot in the
    /// reader table; the next process to open the index clears it
    /// (`mdb_reader_check`), so the dead snapshot no longer pins old pages.
    @Test(.timeLimit(.minutes(3))) func aDeadReadersSlotIsClearedByTheNextOpen() throws {
        let s = TemporaryDirectory("assetpack-stale-reader")
        try Helper.makePacks(s.path + "/packs", versions: 1)
        #expect(try CLI.assetpack(["install", s.path + "/packs/v1.zip"], container: s.container).status == 0)
        let store = try AssetStore(container: GroupContainer(path: s.container))
        let holder = try Child(Helper.binary, ["hold-snapshot", "--container", s.container])
        #expect(eventually(timeout: 20) { holder.stdout.hasPrefix("ready") }, "\(holder.stderr)")
        let pid = holder.pid
        #expect(store.environment.readers().contains { $0.pid == pid && $0.transactionID != nil })
        holder.signal(SIGKILL)
        #expect(holder.wait(timeout: 10) && holder.wasKilled)
        #expect(store.environment.readers().contains { $0.pid == pid && !$0.isProcessAlive })
        #expect(try CLI.assetpack(["ls"], container: s.container).status == 0)
        #expect(!store.environment.readers().contains { $0.pid == pid })
    }
}

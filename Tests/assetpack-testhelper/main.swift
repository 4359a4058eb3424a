import Foundation
import AssetStore
import AssetSystem
import AssetPacks

/// `assetpack-testhelper`: the other processes of the cross-process tests
/// (readers and writers that hammer one container, a process that dies
/// holding an index snapshot, writers that die at a crash point). It is a
/// separate executable so that test-only code stays out of `assetpack`;
/// tests find it next to `assetpack`.
///
///     make-packs  --dir D --id ID --versions N
///     read-loop   --container C --id ID --versions N --seconds S [--map-size B]
///     write-loop  --container C --id ID --dir D --versions N --seconds S [--start K] [--map-size B]
///     hold-snapshot --container C
///     install     --container C --pack FILE    (ASSETPACKS_CRASH_AT=point[#n] kills it there)
///     remove      --container C --id ID        (likewise)
///     download    --container C --id ID --url U --version V --size N --sha256 H
///                 (one download through AssetDelivery's Downloader)
///     watch-status --container C --id ID
///                 (statusUpdates until the download ends: how late updates arrive)
///     grow-map    --dir D --helper PATH   (see MapGrowth)
///     open-map    --dir D
///     piece-map-peak --file F   (parses a piece map; reports the peak it added)
///     hold-lock   --path P   (takes the lock file P, exclusive, as the store
///                 does; prints its pid, holds it until killed)
///
/// Reports are one JSON object on standard output.

/// `--name value` pairs after the subcommand.
struct Options {
    private var values: [String: String] = [:]
    init(_ args: ArraySlice<String>) {
        var i = args.startIndex
        while i < args.endIndex {
            let key = args[i]
            guard key.hasPrefix("--"), i + 1 < args.endIndex else { fail("bad argument '\(key)'") }
            values[String(key.dropFirst(2))] = args[i + 1]
            i += 2
        }
    }
    func string(_ name: String) -> String {
        guard let v = values[name] else { fail("missing --\(name)") }
        return v
    }
    func int(_ name: String, default d: Int? = nil) -> Int {
        guard let v = values[name] ?? d.map(String.init), let n = Int(v) else { fail("--\(name) needs a number") }
        return n
    }
    func double(_ name: String, default d: Double) -> Double { values[name].flatMap(Double.init) ?? d }

    func storeOptions() -> AssetStore.Options {
        var o = AssetStore.Options()
        if let size = values["map-size"].flatMap(Int.init) { o.initialMapSize = size }
        return o
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("assetpack-testhelper: \(message)\n".utf8))
    exit(2)
}

/// Prints `object` as one line of JSON.
func report(_ object: [String: Any]) {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

let args = CommandLine.arguments
guard args.count >= 2 else { fail("usage: assetpack-testhelper <subcommand> [--option value]...") }
let options = Options(args.dropFirst(2))
do {
    switch args[1] {
    case "make-packs":
        try StressPack.write(dir: options.string("dir"), id: options.string("id"), versions: options.int("versions"))
    case "read-loop":
        report(try ReadLoop.run(options))
    case "write-loop":
        report(try WriteLoop.run(options))
    case "hold-snapshot":
        try HoldSnapshot.run(options)
    case "install":
        report(try CrashingWriter.install(options))
    case "remove":
        report(try CrashingWriter.remove(options))
    case "download":
        report(try DownloadOnce.run(options))
    case "watch-status":
        report(try WatchStatus.run(options))
    case "grow-map":
        report(try MapGrowth.grow(options))
    case "piece-map-peak":
        report(try PieceMapPeak.run(options))
    case "open-map":
        report(try MapGrowth.open(options))
    case "hold-lock":
        let lock = try FileLock(path: options.string("path"), wait: .none)
        report(["pid": Int(getpid()), "held": lock.path])
        // The lock lives for as long as it is used: for ever.
        while !lock.path.isEmpty { pause() }
    default:
        fail("unknown subcommand '\(args[1])'")
    }
} catch {
    fail("\(error)")
}

import Foundation
import AssetPacks

/// The options of the commands that download (`fetch`, `sync`): which
/// catalog, which key it must be signed by, which extra CA.
enum CatalogOptions {
    static let catalog = Option.value(
        "catalog", placeholder: "url",
        help: "The catalog's URL (http:// or https://, ending in catalog.json).")
    static let key = Option.value(
        "key", placeholder: "pubkey",
        help: "Require the catalog to be signed by this public key file (from keygen).", completion: .file)
    static let caFile = Option.value(
        "ca-file", placeholder: "file",
        help: "Also trust the certificate authorities in this PEM file.", completion: .file)
    static let channel = Option.value(
        "channel", placeholder: "name",
        help: "The channel the catalog must name (publish --channel); another channel's catalog is refused (default: default).")

    static let maxRangeRequests = Option.value(
        "max-range-requests", placeholder: "n",
        help: "Range requests a delta update keeps in flight at once (1-64, default 4).")

    static let minRate = Option.value(
        "min-rate", placeholder: "bytes",
        help: "End a download that receives less than this many bytes a second for --min-rate-time seconds, with K, M or G (0: no minimum; default 1K).")
    static let minRateTime = Option.value(
        "min-rate-time", placeholder: "seconds",
        help: "Seconds a download may stay below --min-rate (1 to 86400; default 60).")
    static let maxTime = Option.value(
        "max-time", placeholder: "seconds",
        help: "End a pack's download, retries included, after this many seconds (0: no limit; default 21600, 6 hours).")

    /// The deadlines of downloads: `fetch`, `sync`, `daemon`.
    static let deadlineOptions = [minRate, minRateTime, maxTime]

    static let options = [catalog, key, caFile, channel, maxRangeRequests] + deadlineOptions + CatalogCacheOptions.options

    /// The manager of the named container, downloading from `--catalog`,
    /// opened with `options` otherwise.
    static func manager(_ arguments: Arguments, options: AssetPackManager.Options = .init()) throws(CLIError) -> AssetPackManager {
        guard let url = arguments.value(catalog) else { throw .usage("--catalog is required") }
        guard url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") else {
            throw .usage("--catalog must be an http:// or https:// URL: '\(url)'")
        }
        let rangeRequests = try arguments.wholeNumber(maxRangeRequests, in: 1...64)
        let deadlines = try deadlines(arguments)
        let lockTimeout = try StoreOptions.lockTimeout(arguments)
        var options = options
        try CatalogCacheOptions.apply(arguments, to: &options)
        do throws(AssetPackError) {
            let publicKey = try arguments.value(key).map { (path) throws(AssetPackError) in try AssetPackPublicKey.load(path: path) }
            var source = AssetPackManager.CatalogSource(url: url, publicKey: publicKey, caFile: arguments.value(caFile))
            if let rangeRequests { source.maximumRangeRequests = rangeRequests }
            source.deadlines = deadlines
            if let name = arguments.value(channel) { source.channel = name }
            options.catalog = source
            options.lockTimeout = lockTimeout
            return try AssetPackManager(container: StoreOptions.container(arguments), options: options)
        } catch {
            throw .from(error)
        }
    }

    /// The deadlines `--min-rate`, `--min-rate-time` and `--max-time` give,
    /// over the defaults.
    static func deadlines(_ arguments: Arguments) throws(CLIError) -> AssetPackManager.Deadlines {
        var d = AssetPackManager.Deadlines()
        if let rate = try arguments.byteCount(minRate, maximum: UInt64(Int.max)) { d.minimumBytesPerSecond = Int(rate) }
        if let seconds = try arguments.wholeNumber(minRateTime, in: 1...86_400) { d.minimumSpeedInterval = seconds }
        if let seconds = try arguments.number(maxTime) { d.maximumDownloadTime = seconds == 0 ? nil : seconds }
        return d
    }

    /// Runs `body` to completion from synchronous code.
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws(AssetPackError) -> T) throws(AssetPackError) -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        Task {
            do throws(AssetPackError) { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return try box.get()
    }
}

/// The result of work on another thread, read once it signalled.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    // Written once before the semaphore is signalled, read after the wait:
    // the semaphore orders the two.
    private var result: Result<T, AssetPackError>?
    func set(_ r: Result<T, AssetPackError>) { result = r }
    func get() throws(AssetPackError) -> T { try result!.get() }
}

/// One pack's outcome, as `fetch --json` and `sync --json` print it (one line each).
struct DownloadJSON: Encodable {
    let id: String
    /// `installed`, `upToDate`, `skipped`, `failed`; `background` (handed to the daemon, `sync --background`).
    let result: String
    let version: String?
    let message: String?
}

import AssetStore
import AssetSystem

/// One file to download: a catalog entry with its URL made absolute.
public struct DownloadRequest: Sendable, Hashable {
    public var pack: String
    /// Absolute `http://` or `https://`.
    public var url: String
    public var version: UInt64
    public var size: UInt64
    /// 64 lowercase hex digits.
    public var sha256: String
    /// The pack's piece map, when the catalog has one: with it (and
    /// installed members to copy) the download is a delta (``DeltaDownload``).
    public var pieces: Pieces?

    /// A piece map's place and identity, as the catalog entry gives them,
    /// its URL made absolute.
    public typealias Pieces = Catalog.PiecesReference

    public init(pack: String, url: String, version: UInt64, size: UInt64, sha256: String, pieces: Pieces? = nil) {
        self.pack = pack
        self.url = url
        self.version = version
        self.size = size
        self.sha256 = sha256
        self.pieces = pieces
    }

    /// The request for `entry`, fetched from `url`, without its piece map
    /// (``CatalogFetcher/request(for:)`` resolves that one too).
    public init(_ entry: Catalog.Entry, url: String) {
        self.init(pack: entry.id, url: url, version: entry.version, size: entry.size, sha256: entry.sha256)
    }

    var sha256Bytes: [UInt8] {
        let digits = Array(sha256.utf8)
        func value(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return 0
            }
        }
        return stride(from: 0, to: digits.count - 1, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
    }
}

extension CatalogFetcher {
    /// The request for `entry`: its file's URL and its piece map's, both
    /// resolved against the catalog's URL.
    public func request(for entry: Catalog.Entry) -> DownloadRequest {
        var request = DownloadRequest(entry, url: url(of: entry))
        request.pieces = entry.pieces.map { .init(url: Self.resolve($0.url, against: catalogURL), size: $0.size, sha256: $0.sha256) }
        return request
    }
}

/// Downloads packs into a store's `staging/`, resumably and verified, and
/// installs them by adoption: the downloaded file becomes the archive.
///
/// A download is recorded in the journal before its first byte. Its bytes
/// are hashed as they arrive, on a queue of its own, from the file (and
/// those of a resumed partial file first); more bytes than the catalog's size stop it. Transient failures
/// (no connection, a broken or stalled one, 408, 429, 5xx) are retried
/// with exponential backoff and jitter, resuming with `Range` and
/// `If-Range`; a `200` to a range request (the server ignores `Range`, or
/// the file changed) starts the file again from byte 0. Only a file of the
/// catalog's size and SHA-256 is installed; until then, the installed
/// version of the pack stays as it was.
public final class Downloader {
    public struct Options: Sendable {
        public var http = HTTPClient.Configuration()
        /// Requests per download, the first included, before it gives up.
        public var maximumAttempts = 6
        /// Seconds before the first retry; doubled each time up to
        /// `maximumBackoff`, each delay a random 50–100 % of that.
        public var initialBackoff = 0.5
        public var maximumBackoff = 30.0
        /// Range requests a delta download runs at once (through the one
        /// multi handle, each on a connection of its own); 1 to 64.
        public var maximumRangeRequests = 4
        /// The total deadline, in seconds, of one pack's download — every
        /// request (piece map, glue, ranges, the file) and retry and the
        /// backoff between them — or of one catalog fetch; `nil`: none.
        /// Default 6 hours. A download past it ends as
        /// `.timedOut(.total)`, its partial file kept for a later resume.
        public var maximumTime: Double? = 6 * 3600
        /// How much of the container's catalog cache a catalog fetch keeps
        /// (``CatalogCache/Limits``).
        public var catalogCache = CatalogCache.Limits()

        public init() {}

        /// The delay before retry number `attempt` (1 for the first), in seconds.
        public func backoff(after attempt: Int) -> Double {
            let base = min(maximumBackoff, initialBackoff * Double(1 << min(attempt - 1, 30)))
            return base * Double.random(in: 0.5...1.0)
        }
    }

    public let store: AssetStore
    public let options: Options
    private let client: HTTPClient
    /// The total deadline of the download under way (``Options/maximumTime``
    /// from its start), which every client it makes shares.
    private(set) var deadline: HTTPClient.Deadline?

    /// - Throws: `.caFileRefused` when the CA file cannot be used;
    ///   `.downloadFailed` (`.transport`) when libcurl cannot start.
    public init(store: AssetStore, options: Options = Options()) throws(DeliveryError) {
        self.store = store
        self.options = options
        do { client = try HTTPClient(configuration: options.http) } catch {
            throw error.caFileRefusal(options.http) ?? .downloadFailed(url: "", pack: "", problem: .transport, detail: error.message)
        }
    }

    /// A client of this downloader's configuration, with the deadline of
    /// the download under way (a delta's piece map, glue and ranges).
    func makeClient() throws(HTTPClient.Failure) -> HTTPClient {
        let made = try HTTPClient(configuration: options.http)
        made.deadline = deadline
        return made
    }

    /// Downloads `request` and installs it.
    ///
    /// - Parameter progress: called with the bytes on disk and the total as
    ///   they arrive (on this thread).
    /// - Throws: `.downloadFailed` with `.notFound` (404, 410), `.refused`
    ///   (another non-transient status), `.sizeMismatch`, `.checksumMismatch`
    ///   (the partial file is discarded in these cases), `.retriesExhausted`,
    ///   `.timedOut` or `.transport` (the partial file stays for a later resume);
    ///   `.store` when the verified file does not install; `.system`.
    @discardableResult
    public func download(_ request: DownloadRequest, progress: ((UInt64, UInt64) -> Void)? = nil) throws(DeliveryError) -> InstallOutcome {
        try download(request, monitor: progress.map(ProgressOnly.init))
    }

    /// Downloads `request` and installs it, told of each step and steered by
    /// `monitor`: a pause stops the transfer, keeps the partial file and
    /// waits in ``DownloadMonitor/waitWhilePaused()``; a cancel discards the
    /// partial file and its journal entry.
    ///
    /// - Throws: as ``download(_:progress:)``, and `.downloadFailed` with
    ///   `.cancelled` when the monitor cancelled it.
    ///
    /// With a piece map in `request` (and installed members to copy), it is
    /// a delta download (``DeltaDownload``); when the delta fails in any way,
    /// its file goes and this is the download of the whole file, the monitor
    /// told why (``DownloadMonitor/going(_:note:)``).
    @discardableResult
    public func download(_ request: DownloadRequest, monitor: (any DownloadMonitor)?) throws(DeliveryError) -> InstallOutcome {
        try checkRoom(for: request)
        deadline = options.maximumTime.map { HTTPClient.Deadline(seconds: $0) }
        client.deadline = deadline
        var note: String?
        if request.pieces != nil {
            switch try DeltaDownload(downloader: self, request: request, monitor: monitor).run() {
            case .installed(let outcome): return outcome
            case .notTried: break
            case .fellBack(let reason): note = reason
            }
        }
        monitor?.going(.full, note: note)
        let partial = try PartialDownload(for: request, in: store)
        try fetch(into: partial, monitor: monitor)
        let found = try systemCall { () throws(Errno) in try partial.digest() }
        guard found == request.sha256 else {
            partial.discard()
            throw failure(request, .checksumMismatch(expected: request.sha256, found: found))
        }
        return try install(partial, monitor: monitor)
    }

    /// Refuses `request` when its file cannot fit, before anything is
    /// written (a delta sizes its file to the catalog's size at once, which
    /// a size like 2^53 − 1 makes `ftruncate` fail naming nothing): its size
    /// against the process's file size limit, and, less what a partial file
    /// the journal would resume already holds, against the free space of
    /// `staging/`'s file system.
    ///
    /// - Throws: `.downloadFailed` with `.noRoom`.
    func checkRoom(for request: DownloadRequest) throws(DeliveryError) {
        if let limit = FileSystem.fileSizeLimit, request.size > limit {
            throw failure(request, .noRoom(size: request.size, available: limit, room: .fileSizeLimit))
        }
        let staging = store.container.stagingPath
        guard let free = FileSystem.freeSpace(at: staging) else { return }
        var held: UInt64 = 0
        if let entry = try storing(store.journalEntry(forPack: request.pack)), PartialDownload.resumes(entry, request),
           let name = entry.stagingName, !name.contains("/"),
           let status = (try? FileDescriptor.status(of: staging + "/" + name, followingLinks: false)) ?? nil {
            held = UInt64(max(0, status.size))
        }
        guard request.size - min(held, request.size) <= free else {
            throw failure(request, .noRoom(size: request.size, available: free, room: .freeSpace(path: staging)))
        }
    }

    /// Installs the verified file of `partial` by adoption.
    func install(_ partial: PartialDownload, monitor: (any DownloadMonitor)?) throws(DeliveryError) -> InstallOutcome {
        let request = partial.request
        monitor?.installing()
        do {
            // The file is adopted as the archive; the commit that switches it
            // in also ends the download (journal entry and `.download` name).
            let outcome = try storing(store.install(
                adopting: partial.name, verifiedSHA256: request.sha256Bytes, id: request.pack,
                catalogVersion: String(request.version), source: request.url))
            if outcome.change == .unchanged { partial.discard() }
            if partial.deltaPieceMap != nil { try? FileSystem.unlink(partial.rangesPath) }
            return outcome
        } catch {
            partial.discard()
            throw error
        }
    }

    /// Requests until the file has the catalog's size, or fails.
    private func fetch(into partial: PartialDownload, monitor: (any DownloadMonitor)?) throws(DeliveryError) {
        let request = partial.request
        var attempt = 0
        if let interruption = monitor?.progressed(partial.length, of: request.size) {
            try obey(interruption, partial, monitor)
        }
        while partial.length < request.size || attempt == 0 && request.size == 0 {
            attempt += 1
            let outcome = attemptOnce(partial, monitor: monitor)
            switch outcome {
            case .interrupted(let interruption):
                try obey(interruption, partial, monitor)
                attempt -= 1
            case .complete:
                guard partial.length == request.size else {
                    let received = partial.length
                    partial.discard()
                    throw failure(request, .sizeMismatch(expected: request.size, received: received))
                }
            case .failed(let error, let keepsPartial):
                if !keepsPartial { partial.discard() }
                throw error
            case .transient(let detail):
                guard attempt < options.maximumAttempts else {
                    throw failure(request, .retriesExhausted(attempts: attempt), detail)
                }
                if let monitor {
                    if let interruption = monitor.sleep(options.backoff(after: attempt)) { try obey(interruption, partial, monitor) }
                } else {
                    Monotonic.sleep(options.backoff(after: attempt))
                }
            }
        }
    }

    /// Pauses until resumed, or ends the download as cancelled.
    private func obey(_ interruption: DownloadInterruption, _ partial: PartialDownload, _ monitor: (any DownloadMonitor)?) throws(DeliveryError) {
        if interruption == .pause, monitor?.waitWhilePaused() == nil { return }
        partial.discard()
        throw failure(partial.request, .cancelled)
    }

    private enum Attempt {
        /// The response ended normally.
        case complete
        /// Worth another try; `detail` says what went wrong.
        case transient(String)
        /// The download is over; the partial file is useless unless `keepsPartial`.
        case failed(DeliveryError, keepsPartial: Bool = false)
        /// The monitor asked to pause or cancel; the partial file is intact.
        case interrupted(DownloadInterruption)
    }

    /// One GET: from the partial file's end with `Range`/`If-Range`, or from 0.
    private func attemptOnce(_ partial: PartialDownload, monitor: (any DownloadMonitor)?) -> Attempt {
        let request = partial.request
        let start = partial.length
        var started = false
        var stop: Attempt?
        do {
            // Only a strong validator goes into If-Range (RFC 9110 §13.1.5);
            // without one the range is asked for alone.
            let ifRange = start > 0 ? partial.etag.flatMap { HTTPValidator.isRangeValidator($0) ? $0 : nil } : nil
            try client.get(request.url, rangeStart: start, ifRange: ifRange) { head, bytes in
                do {
                    if !started {
                        started = true
                        if head.status == 206 {
                            guard head.rangeStart == partial.length else {
                                try partial.restart()
                                stop = .transient("the server sent another range than the one asked for")
                                return false
                            }
                        } else if partial.length > 0 {
                            // The whole file again (Range ignored, or If-Range failed).
                            try partial.restart()
                        }
                        let validator = head.rangeValidator
                        if validator != partial.etag { try partial.record(etag: validator) }
                    }
                    guard partial.length + UInt64(bytes.count) <= request.size else {
                        stop = .failed(failure(request, .sizeMismatch(expected: request.size, received: partial.length + UInt64(bytes.count))))
                        return false
                    }
                    try partial.append(bytes)
                } catch let error as Errno {
                    stop = .failed(.system(error))
                    return false
                } catch let error as DeliveryError {
                    stop = .failed(error)
                    return false
                } catch {
                    return false
                }
                if let interruption = monitor?.progressed(partial.length, of: request.size) {
                    stop = .interrupted(interruption)
                    return false
                }
                return true
            }
            return .complete
        } catch {
            if let stop { return stop }
            if error.kind == .httpStatus, error.status == 416 {
                // The partial file is longer than the server's: start again.
                do { try partial.restart() } catch { return .failed(.system(error)) }
                return .transient("HTTP 416")
            }
            if error.isTransient { return .transient(error.status.map { "HTTP \($0)" } ?? error.message) }
            let problem = error.problem
            if case .timedOut = problem { return .failed(failure(request, problem), keepsPartial: true) }
            return .failed(failure(request, problem, problem == .transport ? error.message : ""), keepsPartial: problem == .transport)
        }
    }

    func failure(_ request: DownloadRequest, _ problem: DeliveryError.DownloadProblem, _ detail: String = "") -> DeliveryError {
        .downloadFailed(url: request.url, pack: request.pack, problem: problem, detail: detail)
    }
}

/// A monitor that only reports progress.
private final class ProgressOnly: DownloadMonitor {
    let report: (UInt64, UInt64) -> Void
    init(_ report: @escaping (UInt64, UInt64) -> Void) { self.report = report }
    func progressed(_ bytes: UInt64, of total: UInt64) -> DownloadInterruption? {
        report(bytes, total)
        return nil
    }
    func installing() {}
    func waitWhilePaused() -> DownloadInterruption? { nil }
    func sleep(_ seconds: Double) -> DownloadInterruption? {
        Monotonic.sleep(seconds)
        return nil
    }
}

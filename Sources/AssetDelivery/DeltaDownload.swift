import Dispatch
import Foundation
import Synchronization
import AssetArchive
import AssetStore
import AssetSystem

/// The download of a pack file that copies what the container has and
/// fetches only the rest: the pack's piece map (`<file>.pieces`, see
/// ``PieceMap``) says where each member's stored bytes lie in the new file
/// and what their SHA-256 is; every member an installed archive (of any
/// pack, under any path) holds with the same SHA-256 is copied from it, the
/// glue (`<file>.glue`: headers, central directory) comes in one GET, and
/// the members left come as closed ranges of the pack's URL itself, up to
/// ``Downloader/Options/maximumRangeRequests`` at once. The file is then
/// hashed whole and must have the catalog's SHA-256, and is installed by
/// adoption as a full download is.
///
/// It works in the same `staging/` file and journal entry as a full
/// download (the entry says delta and names the piece map's SHA-256), and
/// appends a line to `<file>.download.ranges` after each piece's bytes are
/// written (`g` the glue, `c FIRST END` a copied member, `f FIRST END` a
/// fetched range; END exclusive), so a process killed at any moment leaves
/// a download the next one resumes without fetching again what it had.
/// What the list claims is checked on resume: the glue and every member
/// it covers whole are hashed again; what does not match is fetched again.
///
/// Any failure of the delta — piece map or glue missing, of the wrong size
/// or SHA-256, invalid; a server that answers a range with `200` or another
/// range; the assembled file's SHA-256 not the catalog's — discards its file
/// and ends in ``Outcome/fellBack(_:)`` with the reason, and the caller
/// downloads the whole file. Transient failures through every attempt end
/// as a full download's do, the file kept for a resume.
struct DeltaDownload {
    enum Outcome {
        case installed(InstallOutcome)
        /// No delta: no piece map, nothing installed or no member of the
        /// file installed anywhere, or a full download of it under way (the journal's).
        case notTried
        /// The delta failed; `reason` is for people (`delta: …; full download`).
        case fellBack(String)
    }

    /// Why the delta stops.
    enum Stop: Error {
        /// The whole file is downloaded instead.
        case fallback(String)
        /// The download ends with this error (cancelled, retries exhausted, store, system).
        case fatal(DeliveryError)
    }

    /// Missing member data separated by at most this many bytes (glue, or
    /// members in place) is fetched in one range, the bytes between sent again.
    static let mergeGap: UInt64 = 64 << 10
    /// The largest range asked for: progress and resume stay fine-grained.
    static let maximumRange: UInt64 = 16 << 20

    let downloader: Downloader
    let request: DownloadRequest
    let monitor: (any DownloadMonitor)?

    var store: AssetStore { downloader.store }
    var options: Downloader.Options { downloader.options }

    func run() throws(DeliveryError) -> Outcome {
        guard let pieces = request.pieces else { return .notTried }
        let old = try storing(store.journalEntry(forPack: request.pack)).flatMap { PartialDownload.resumes($0, request) ? $0 : nil }
        // A download of the whole file under way goes on as one.
        if let old, old.deltaPieceMap == nil { return .notTried }
        guard try !storing(store.allPackRecords()).isEmpty else { return .notTried }
        let resuming = old != nil
        var partial: PartialDownload?
        do throws(Stop) {
            let (map, mapDigest, mapBytes) = try fetchPieceMap(pieces)
            let source: ReuseSource
            do { source = try store.reuseSource() } catch {
                throw .fallback("delta: the installed archives cannot be read (\(error)); full download")
            }
            // Nothing to copy, and nothing in place: the whole file in one GET is cheaper.
            guard resuming || map.members.contains(where: {
                !source.candidates(method: $0.method, crc32: $0.crc32, length: $0.length, storedSize: $0.size, path: $0.path).isEmpty
            }) else { return .notTried }
            let file = try fatal { () throws(DeliveryError) in try PartialDownload(for: request, in: store, deltaPieceMap: mapDigest) }
            partial = file
            monitor?.going(.delta, note: nil)
            let assembly = try DeltaAssembly(delta: self, map: map, partial: file, fetchedBefore: mapBytes)
            try assembly.build(from: source)
            let found = try fatal { () throws(DeliveryError) in try systemCall { () throws(Errno) in try file.digest() } }
            guard found == request.sha256 else {
                throw .fallback("delta: the assembled file's SHA-256 is not the catalog's; full download")
            }
            return .installed(try fatal { () throws(DeliveryError) in try downloader.install(file, monitor: monitor) })
        } catch {
            switch error {
            case .fallback(let reason):
                // (A delta file of an earlier process the full download discards itself.)
                partial?.discard()
                return .fellBack(reason)
            case .fatal(let error):
                throw error
            }
        }
    }

    /// The piece map: refused above ``PieceMap/maximumLength`` before a byte
    /// is read, at most its catalog size read, its size and SHA-256 checked,
    /// then parsed and validated against the request.
    private func fetchPieceMap(_ pieces: DownloadRequest.Pieces) throws(Stop) -> (PieceMap, [UInt8], UInt64) {
        do throws(DeliveryError) { try PieceMap.checkSize(of: pieces, url: pieces.url, pack: request.pack) } catch {
            throw .fallback("delta: \(error); full download")
        }
        var bytes: [UInt8] = []
        try fetchWhole(pieces.url, limit: pieces.size, what: "piece map", into: &bytes)
        let digest = bytes.withUnsafeBytes { SHA256.hash($0) }
        guard UInt64(bytes.count) == pieces.size, SHA256.hex(digest) == pieces.sha256 else {
            throw .fallback("delta: piece map SHA-256 mismatch (\(bytes.count) bytes, the catalog gives \(pieces.size)); full download")
        }
        do throws(DeliveryError) {
            let map = try PieceMap.parse(bytes, path: pieces.url, pack: request.pack)
            // The entry the request was made of, as far as the map describes it.
            try map.validate(against: Catalog.Entry(id: request.pack, version: request.version, size: request.size, sha256: request.sha256,
                                                    downloadPolicy: .onDemand, platforms: [], url: request.url, pieces: pieces))
            return (map, digest, UInt64(bytes.count))
        } catch {
            throw .fallback("delta: \(error); full download")
        }
    }

    /// GETs all of `url` into `bytes`, at most `limit` of them, retrying
    /// transient failures from the start.
    private func fetchWhole(_ url: String, limit: UInt64, what: String, into bytes: inout [UInt8]) throws(Stop) {
        let client = try makeClient()
        // The size the catalog gives (checked against the limit before): no doubling past it as pieces arrive.
        bytes.reserveCapacity(Int(limit))
        try retrying(what) { () -> Step in
            bytes.removeAll(keepingCapacity: true)
            var tooLong = false
            do throws(HTTPClient.Failure) {
                try client.get(url) { _, chunk in
                    guard UInt64(bytes.count + chunk.count) <= limit else { tooLong = true; return false }
                    bytes.append(contentsOf: chunk)
                    return true
                }
            } catch {
                if tooLong { return .stop(.fallback("delta: the \(what) is longer than the catalog says; full download")) }
                return step(for: error, what: what)
            }
            return .done
        }
    }

    /// What one attempt came to.
    enum Step {
        case done
        /// Worth another try; `detail` says what went wrong.
        case transient(String)
        /// The monitor asked to pause or cancel; after a pause, the attempt is made again.
        case interrupted(DownloadInterruption)
        case stop(Stop)
    }

    /// The step a request's failure makes: transient ones are retried, any
    /// other status ends the delta.
    func step(for error: HTTPClient.Failure, what: String) -> Step {
        if error.isTransient { return .transient(error.status.map { "HTTP \($0)" } ?? error.message) }
        // A deadline ends the download, not only the delta: its file stays for a resume.
        if case .timedOut = error.problem { return .stop(.fatal(downloader.failure(request, error.problem))) }
        let why = error.status.map { "HTTP \($0)" } ?? error.message
        return .stop(.fallback("delta: the \(what) could not be fetched (\(why)); full download"))
    }

    /// Runs `attempt` until it is done or stops, with the downloader's
    /// backoff between transient failures (the monitor may pause or cancel
    /// meanwhile). Retries exhausted end the download, its file kept.
    func retrying(_ what: String, _ attempt: () -> Step) throws(Stop) {
        var attempts = 0
        while true {
            attempts += 1
            switch attempt() {
            case .done: return
            case .stop(let stop): throw stop
            case .interrupted(let interruption):
                try obey(interruption)
                attempts -= 1
            case .transient(let detail):
                guard attempts < options.maximumAttempts else {
                    throw .fatal(downloader.failure(request, .retriesExhausted(attempts: attempts), "\(what): \(detail)"))
                }
                let delay = options.backoff(after: attempts)
                if let monitor {
                    if let interruption = monitor.sleep(delay) { try obey(interruption) }
                } else {
                    Monotonic.sleep(delay)
                }
            }
        }
    }

    /// Waits while paused; a cancel ends the download (its file discarded by the caller's `fatal`).
    func obey(_ interruption: DownloadInterruption) throws(Stop) {
        if interruption == .pause, monitor?.waitWhilePaused() == nil { return }
        if let entry = try? store.journalEntry(forPack: request.pack), entry.deltaPieceMap != nil {
            _ = try? Downloader.discardPartial(of: request.pack, in: store)
        }
        throw .fatal(downloader.failure(request, .cancelled))
    }

    func makeClient() throws(Stop) -> HTTPClient {
        do { return try downloader.makeClient() } catch {
            throw .fatal(error.caFileRefusal(options.http)
                         ?? .downloadFailed(url: request.url, pack: request.pack, problem: .transport, detail: error.message))
        }
    }

    func fatal<R>(_ body: () throws(DeliveryError) -> R) throws(Stop) -> R {
        do { return try body() } catch { throw .fatal(error) }
    }

    /// `missing` (sorted, disjoint) as the ranges to ask for: neighbours at
    /// most `gap` apart joined, then each cut to at most `cap` bytes.
    static func plan(_ missing: [Range<UInt64>], gap: UInt64 = mergeGap, cap: UInt64 = maximumRange) -> [Range<UInt64>] {
        var merged: [Range<UInt64>] = []
        for range in missing where !range.isEmpty {
            if let last = merged.last, range.lowerBound >= last.upperBound, range.lowerBound - last.upperBound <= gap {
                merged[merged.count - 1] = last.lowerBound..<range.upperBound
            } else {
                merged.append(range)
            }
        }
        return merged.flatMap { range in
            stride(from: range.lowerBound, to: range.upperBound, by: UInt64.Stride(cap)).map { $0..<min($0 + cap, range.upperBound) }
        }
    }
}

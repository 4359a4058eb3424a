public import Foundation
import AssetDelivery
import AssetStore
import AssetSystem
import Synchronization

/// Where a pack's latest download stands, as its status record in the
/// container says (`<container>/downloads/<pack>.status`, documented in
/// docs/downloads.md) — whichever process runs it.
public struct AssetPackDownloadStatus: Sendable, Hashable {
    public enum State: String, Sendable, CaseIterable {
        case began, downloading, paused, deferred, installing, finished, failed, cancelled
    }

    public let packID: String
    /// The download's ID (16 hex digits); a pause, resume or cancel names it.
    public let downloadID: String
    public let state: State
    /// Bytes on disk, and the catalog's size.
    public let completedBytes: UInt64
    public let totalBytes: UInt64
    /// Bytes a second lately; 0 when unknown.
    public let bytesPerSecond: UInt64
    public let version: String
    public let url: String
    public let processID: Int32
    public let started: Date
    public let updated: Date
    /// Why it is deferred or paused, or why a delta update fell back to the
    /// whole file (`delta: piece map SHA-256 mismatch; full download`).
    public let reason: String?
    /// Whether the download copies installed members and fetches the rest
    /// (a delta update), or fetches the whole file.
    public let isDelta: Bool
    /// Bytes received from the server for the file, and bytes copied from
    /// installed archives (a delta's).
    public let bytesFetched: UInt64
    public let bytesReused: UInt64
    /// For a failed or cancelled download, its error's message and code.
    public let errorMessage: String?
    public let errorCode: AssetPackError.Code?
    /// Whether a process is running the download now. A record that is
    /// neither final nor running was left by a process that died: the
    /// journal resumes it at the next request.
    public let isRunning: Bool

    /// Whether the download is over (finished, failed or cancelled).
    public var isFinal: Bool { state == .finished || state == .failed || state == .cancelled }

    /// Seconds until the rest arrives at the current rate, when known.
    public var estimatedTimeRemaining: Double? {
        bytesPerSecond == 0 || isFinal ? nil : Double(totalBytes - min(totalBytes, completedBytes)) / Double(bytesPerSecond)
    }

    /// The record as one line of JSON (no newline): the record's members,
    /// then `"running"`.
    public var jsonLine: String { String(decoding: json, as: UTF8.self) }

    private let json: [UInt8]

    init(_ s: DownloadStatus, running: Bool) {
        packID = s.pack
        downloadID = s.download
        state = State(rawValue: s.state.rawValue)!
        completedBytes = s.bytes
        totalBytes = s.total
        bytesPerSecond = s.rate
        version = s.version
        url = s.url
        processID = s.pid
        started = Date(timeIntervalSince1970: Double(s.started) / 1e6)
        updated = Date(timeIntervalSince1970: Double(s.updated) / 1e6)
        reason = s.reason
        isDelta = s.mode == .delta
        bytesFetched = s.fetched
        bytesReused = s.reused
        errorMessage = s.error
        errorCode = s.code.flatMap { Int32(exactly: $0) }.flatMap(AssetPackError.Code.init(rawValue:))
        isRunning = running && !s.state.isFinal
        json = Array(s.encoded(running: isRunning).dropLast())
    }
}

/// A download's progress as an observer saw it, and the handle to steer
/// that download — from any process of the container.
///
/// ``cancel()`` works every time: it names this download by its ID, so it
/// reaches the process running it (this one, another, the daemon) and
/// never a later download of the same pack.
public final class AssetPackDownloadProgress: Sendable {
    public let packID: String
    public let downloadID: String
    public let completedUnitCount: Int64
    public let totalUnitCount: Int64
    /// Bytes a second lately, when known.
    public let throughput: Int?
    /// Of the bytes completed, those received from the server (for a delta
    /// update: its piece map, glue and ranges) and those copied from
    /// installed archives (0 but for a delta update).
    public let bytesFetched: Int64
    public let bytesReused: Int64
    /// Why a delta update fell back to downloading the whole file, when it did.
    public let reason: String?
    /// When the process running the download wrote this progress.
    public let updated: Date
    private let board: DownloadBoard

    init(_ status: DownloadStatus, board: DownloadBoard) {
        packID = status.pack
        downloadID = status.download
        completedUnitCount = Int64(clamping: status.bytes)
        totalUnitCount = Int64(clamping: status.total)
        throughput = status.rate == 0 ? nil : Int(clamping: status.rate)
        bytesFetched = Int64(clamping: status.fetched)
        bytesReused = Int64(clamping: status.reused)
        reason = status.reason
        updated = Date(timeIntervalSince1970: Double(status.updated) / 1e6)
        self.board = board
    }

    public var fractionCompleted: Double { totalUnitCount == 0 ? 1 : Double(completedUnitCount) / Double(totalUnitCount) }

    /// Seconds until the rest arrives at the current rate, when known.
    public var estimatedTimeRemaining: Double? {
        throughput.map { Double(totalUnitCount - completedUnitCount) / Double($0) }
    }

    /// Whether this download has been cancelled (its record says so now).
    public var isCancelled: Bool {
        guard let s = board.status(of: packID), s.download == downloadID else { return false }
        return s.state == .cancelled
    }

    /// Asks the download to stop: nothing is installed and its partial file
    /// goes. Every `ensureLocalAvailability` waiting for it throws
    /// `.downloadCancelled`. A download that is over already is not affected.
    public func cancel() { request(.cancel) }
    /// Asks the download to pause: the transfer stops, its partial file stays.
    public func pause() { request(.pause) }
    /// Asks a paused download to go on where it stopped.
    public func resume() { request(.resume) }

    private func request(_ r: DownloadControl.Request) {
        try? board.send(DownloadControl(download: downloadID, request: r), to: packID)
    }
}

extension AssetPackManager {
    /// A step of a pack's download, as ``statusUpdates(forAssetPackWithID:)`` reports it.
    public enum DownloadStatusUpdate: Sendable {
        /// A download began (it took the pack's lock).
        case began(AssetPack)
        /// Bytes arrived (or the install of them is under way); the progress
        /// can cancel, pause or resume the download.
        case downloading(AssetPack, AssetPackDownloadProgress)
        /// Paused by a request, or deferred (a discretionary download
        /// waiting for power or a quieter machine).
        case paused(AssetPack)
        /// Installed: the pack as now installed.
        case finished(AssetPack)
        /// Ended by an error, or cancelled (`.downloadCancelled`).
        case failed(AssetPack, AssetPackError)
    }

    /// The steps of `id`'s downloads — run by this process, another one or
    /// the daemon — as they are written to the container.
    ///
    /// The first element is the latest download's state when there is one
    /// (a download that finished an hour ago reports `.finished` at once);
    /// then every change, within milliseconds of its writer (the sequence
    /// waits on `inotify`, or polls every 50 ms where there is none). What
    /// is read is the download's latest record, so quick steps between two
    /// reads are seen as the last of them — except that every new download
    /// reports `.began` first. The sequence does not end by itself: stop
    /// iterating, or cancel the task, when done.
    public func statusUpdates(forAssetPackWithID id: String) -> AsyncStream<DownloadStatusUpdate> {
        let board = downloadBoard
        let initial = board.status(of: id)?.download
        return watching(board, read: { board.status(of: id) }, map: { [self] record, previous in
            // A reader sees the latest record only: a download that began and
            // moved on between two reads still reports that it began.
            let isNew = previous.map { $0.download != record.download } ?? (record.download != initial)
            let began = isNew && record.state != .began ? [DownloadStatusUpdate.began(AssetPack(downloading: record))] : []
            return began + [update(record)]
        })
    }

    /// The status records of the downloads of `id` (of every pack, with
    /// `nil`): the current ones at once, then all of them again each time
    /// one changes. For monitors (`assetpack status --watch`); like
    /// ``statusUpdates(forAssetPackWithID:)``, it does not end by itself.
    public func downloadStatusChanges(ofAssetPackWithID id: String? = nil) -> AsyncStream<[AssetPackDownloadStatus]> {
        watching(downloadBoard, read: { [self] in
            id.map { downloadStatus(ofAssetPackWithID: $0).map { [$0] } ?? [] } ?? allDownloadStatuses()
        }, map: { records, _ in [records] })
    }

    /// A sequence of what `read` returns, through `map` (given the value
    /// read before, if any): now, then after each change on `board` that
    /// makes it different; read on a thread of its own.
    private func watching<Key: Equatable & SendableMetatype, T: Sendable>(
        _ board: DownloadBoard, read: @escaping @Sendable () -> Key?, map: @escaping @Sendable (Key, Key?) -> [T]
    ) -> AsyncStream<T> {
        AsyncStream { continuation in
            let flag = StopFlag(watch: board.watch())
            continuation.onTermination = { _ in flag.stop() }
            Thread.detachNewThread {
                var last: Key?
                flag.untilStopped {
                    if let value = read(), value != last {
                        for element in map(value, last) { continuation.yield(element) }
                        last = value
                    }
                }
            }
        }
    }

    /// The latest download of `id` as its status record has it, or `nil` when it has none.
    public func downloadStatus(ofAssetPackWithID id: String) -> AssetPackDownloadStatus? {
        snapshot(downloadBoard.status(of: id))
    }

    /// Every pack's latest download, sorted by pack.
    public func allDownloadStatuses() -> [AssetPackDownloadStatus] {
        downloadBoard.all().compactMap(snapshot)
    }

    /// `record` with whether its process runs, read consistently: the lock
    /// is probed between two reads of the record that agree (a download
    /// that ends between the read and the probe would otherwise look dead).
    private func snapshot(_ record: DownloadStatus?) -> AssetPackDownloadStatus? {
        let board = downloadBoard
        var record = record
        while let first = record {
            let running = board.isRunning(first)
            record = board.status(of: first.pack)
            if record == first { return AssetPackDownloadStatus(first, running: running) }
        }
        return nil
    }

    /// Asks the running download of `id` to pause.
    ///
    /// - Throws: `.invalidPackID`; `.noDownloadInProgress` when no process
    ///   runs one; `.requestNotPermitted` (`.otherUsersDownload`) when
    ///   another user runs it (only that user, the container's owner and
    ///   root may steer it: the download would ignore the request).
    public func pauseDownload(ofAssetPackWithID id: String) throws(AssetPackError) {
        try request(.pause, id)
    }

    /// Asks the paused download of `id` to go on.
    ///
    /// - Throws: as ``pauseDownload(ofAssetPackWithID:)``.
    public func resumeDownload(ofAssetPackWithID id: String) throws(AssetPackError) {
        try request(.resume, id)
    }

    /// Cancels the download of `id`: a running one is asked to stop (its
    /// process discards the partial file); one left by a process that died
    /// has its partial file and journal entry removed here.
    ///
    /// - Throws: `.invalidPackID`; `.noDownloadInProgress` when there is
    ///   neither; `.requestNotPermitted` as ``pauseDownload(ofAssetPackWithID:)``.
    public func cancelDownload(ofAssetPackWithID id: String) throws(AssetPackError) {
        try AssetPack.validate(id: id)
        if let s = downloadBoard.status(of: id), downloadBoard.isRunning(s) {
            try request(.cancel, id)
            return
        }
        // Nobody runs it: take the lock so nobody starts it meanwhile (when
        // somebody just did, it has a record to be asked through).
        let lock: FileDescriptor
        do { lock = try downloadLock(id, wait: false) } catch where error.code == .lockTimeout {
            Monotonic.sleep(DownloadReporter.writeInterval)
            return try cancelDownload(ofAssetPackWithID: id)
        }
        let discarded = Result { () throws(AssetPackError) in
            try delivery { () throws(DeliveryError) in try Downloader.discardPartial(of: id, in: store) }
        }
        _ = consume lock
        guard try discarded.get() || downloadBoard.status(of: id).map({ !$0.state.isFinal }) == true else {
            throw AssetPackError(.noDownloadInProgress, pack: id, message: "no download of '\(id)' is in progress")
        }
        if var s = downloadBoard.status(of: id) {
            s.state = .cancelled
            s.rate = 0
            s.updated = DownloadBoard.now
            try? downloadBoard.write(s)
        }
    }

    private func request(_ r: DownloadControl.Request, _ id: String) throws(AssetPackError) {
        try AssetPack.validate(id: id)
        let board = downloadBoard
        guard let (s, runner) = board.statusRecord(of: id), board.isRunning(s) else {
            throw AssetPackError(.noDownloadInProgress, pack: id, message: "no download of '\(id)' is in progress")
        }
        guard mayControl(runBy: runner) else {
            throw AssetPackError(.requestNotPermitted, reason: .otherUsersDownload, pack: id,
                                 message: "the download of '\(id)' is run by uid \(runner); only that user, the container's owner and root may \(r.rawValue) it")
        }
        do { try board.send(DownloadControl(download: s.download, request: r), to: id) } catch { throw AssetPackError(error) }
    }

    /// Whether this process may steer a download run by the user `runner`
    /// (the writer of its status record), as the download will judge its
    /// request: the same user, the container's owner or root.
    func mayControl(runBy runner: UInt32) -> Bool {
        downloadBoard.isTrusted(writer: geteuid(), forDownloadsOf: runner)
    }

    /// Whether a record written by `writer` may decide for this process
    /// (a cancellation it reports): written by this user, the container's
    /// owner or root.
    func mayControl(writtenBy writer: UInt32) -> Bool {
        downloadBoard.isTrusted(writer: writer)
    }

    var downloadBoard: DownloadBoard { DownloadBoard(store: store) }

    /// The update a status record stands for.
    func update(_ s: DownloadStatus) -> DownloadStatusUpdate {
        let pack = AssetPack(downloading: s)
        switch s.state {
        case .began: return .began(pack)
        case .downloading, .installing: return .downloading(pack, AssetPackDownloadProgress(s, board: downloadBoard))
        case .paused, .deferred: return .paused(pack)
        case .finished:
            let installed = (try? store.packRecord(s.pack)).flatMap { $0 }.map(AssetPack.init)
            return .finished(installed ?? pack)
        case .failed, .cancelled:
            let code = s.code.flatMap { Int32(exactly: $0) }.flatMap(AssetPackError.Code.init(rawValue:))
                ?? (s.state == .cancelled ? .downloadCancelled : .downloadFailed)
            return .failed(pack, AssetPackError(code, pack: s.pack, path: s.url, message: s.error ?? "download of '\(s.pack)' \(s.state.rawValue)"))
        }
    }
}

/// Ends a status sequence's thread from its termination handler.
private final class StopFlag: Sendable {
    private let stopped = Atomic<Bool>(false)
    let watch: DirectoryWatch?
    init(watch: DirectoryWatch?) { self.watch = watch }
    var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// Runs `step`, then waits for the next change on the board (or polls
    /// every 50 ms without inotify), until ``stop()``.
    func untilStopped(_ step: () -> Void) {
        while !isStopped {
            step()
            if let watch { watch.wait(timeout: 1) } else { Monotonic.sleep(DownloadReporter.writeInterval) }
        }
    }
    func stop() {
        stopped.store(true, ordering: .releasing)
        watch?.interrupt()
    }
}

extension AssetPack {
    /// The pack a download record is for: the catalog's version and size.
    init(downloading s: DownloadStatus) {
        id = s.pack
        version = s.version
        downloadPolicy = .onDemand
        platforms = []
        archiveSize = s.total
        memberCount = 0
        totalSize = 0
        installDate = .distantPast
        sha256 = ""
        status = s.state.isFinal ? [] : .downloading
    }
}

/// Follows a pack's status record on a thread of its own while another
/// process (the daemon) runs the download, and reports it as an in-process
/// download reports itself: `progress` for bytes, `deferred` for each new
/// reason to wait.
final class StatusFollower: Sendable {
    private let flag: StopFlag

    init(board: DownloadBoard, pack: String, progress: (@Sendable (AssetPackProgress) -> Void)?, deferred: ((String) -> Void)?) {
        flag = StopFlag(watch: board.watch())
        let flag = self.flag
        // `deferred` is called on the follower's thread only.
        nonisolated(unsafe) let deferred = deferred
        let initial = board.status(of: pack)
        Thread.detachNewThread {
            var last = initial
            var reason: String?
            flag.untilStopped {
                if let s = board.status(of: pack), s != last, s.download != initial?.download || s.updated != initial?.updated {
                    last = s
                    switch s.state {
                    case .downloading, .installing:
                        progress?(AssetPackProgress(phase: .downloading, unit: .bytes, completed: s.bytes, total: s.total))
                    case .deferred where s.reason != reason:
                        reason = s.reason
                        if let r = s.reason { deferred?(r) }
                    default: break
                    }
                }
            }
        }
    }

    func stop() { flag.stop() }
}

import AssetSystem
#if canImport(Glibc)
import Glibc
#endif

/// What a download is asked to do between two pieces of its body.
public enum DownloadInterruption: Sendable, Equatable {
    case pause, cancel
}

/// Watches a ``Downloader`` at work and steers it: told of every step, it
/// answers whether to go on, pause or cancel.
public protocol DownloadMonitor: AnyObject {
    /// `bytes` of `total` are on disk. Returns an interruption to obey, or `nil`.
    func progressed(_ bytes: UInt64, of total: UInt64) -> DownloadInterruption?
    /// Every byte arrived and matched; the install begins.
    func installing()
    /// Blocks while the download is paused. Returns `.cancel` when it was
    /// cancelled meanwhile, `nil` when it resumes.
    func waitWhilePaused() -> DownloadInterruption?
    /// Sleeps `seconds` (a retry's backoff); returns early with an
    /// interruption that arrives meanwhile.
    func sleep(_ seconds: Double) -> DownloadInterruption?
    /// The download goes `mode`; `note` says why a delta fell back to the
    /// whole file (`delta: piece map SHA-256 mismatch; full download`).
    func going(_ mode: DownloadStatus.Mode, note: String?)
    /// Of the file's bytes, `fetched` came from the server so far and
    /// `reused` were copied from installed archives (told before `progressed`).
    func counted(fetched: UInt64, reused: UInt64)
}

extension DownloadMonitor {
    public func going(_ mode: DownloadStatus.Mode, note: String?) {}
    public func counted(fetched: UInt64, reused: UInt64) {}
}

/// The ``DownloadMonitor`` of one download that keeps its status record on
/// the container's ``DownloadBoard`` and obeys the board's requests to it.
///
/// The record is rewritten at most every ``writeInterval`` seconds while
/// bytes arrive, and at once on every change of state; the request file
/// is looked at at most every ``controlInterval`` seconds. Failures to
/// write a record are ignored: records inform, they never decide. A request
/// the board does not let this download obey (written by another user than
/// the container's owner, root or this process's; not a regular file) is
/// ignored, and said once: in the record's `reason` and to ``log``.
public final class DownloadReporter: DownloadMonitor {
    public let board: DownloadBoard
    /// The record as last written.
    public private(set) var status: DownloadStatus
    /// Called on the downloading thread after each write of the record.
    public var onChange: ((DownloadStatus) -> Void)?
    /// Called with a line for the operator's log: a request ignored, and why.
    public var log: ((String) -> Void)?

    public static let writeInterval = 0.05
    /// What the record's reason starts with when a request was ignored.
    public static let ignoredPrefix = "ignored: "
    public static let controlInterval = 0.05

    /// Why a delta fell back, kept as the record's reason while no state has
    /// a reason of its own, so the status stream shows it to the end.
    private var note: String?
    /// Why the last request was ignored, so that each is said once.
    private var ignored: String?
    private var lastWrite = 0.0
    private var lastControlCheck = 0.0
    /// (seconds, bytes) samples of the last seconds, for the rate.
    private var samples: [(Double, UInt64)] = []

    /// Starts a record for a download of `request` on `board`, in `state`
    /// (`began`, or `deferred` with its `reason`).
    public init(board: DownloadBoard, request: DownloadRequest, state: DownloadStatus.State = .began, reason: String? = nil) {
        self.board = board
        let now = DownloadBoard.now
        status = DownloadStatus(
            pack: request.pack, download: Self.newID(), state: state, bytes: 0, total: request.size,
            version: String(request.version), url: request.url, pid: getpid(), started: now, updated: now, reason: reason)
        // A request left for an earlier download means nothing to this one.
        if case .request(let stale) = board.control(of: request.pack), stale.download != status.download {
            board.clearControl(of: request.pack)
        }
        publish()
    }

    /// Sets the state (with its reason, error and code) and writes the record now.
    public func set(_ state: DownloadStatus.State, reason: String? = nil, error: String? = nil, code: Int? = nil) {
        status.state = state
        status.reason = reason ?? (state == .paused || state == .deferred ? nil : note)
        status.error = error
        status.code = code
        if state == .finished { status.bytes = status.total }
        if state.isFinal {
            status.rate = 0
            if case .request(let control) = board.control(of: status.pack), control.download == status.download {
                board.clearControl(of: status.pack)
            }
        }
        publish()
    }

    /// Makes the record one of a download of `request` (the catalog may have
    /// moved on while a deferred download waited), in state `began`.
    public func retarget(_ request: DownloadRequest) {
        status.version = String(request.version)
        status.url = request.url
        status.total = request.size
        if status.state != .began { set(.began) }
    }

    // MARK: DownloadMonitor

    public func progressed(_ bytes: UInt64, of total: UInt64) -> DownloadInterruption? {
        let now = Monotonic.now
        status.bytes = bytes
        status.total = total
        samples.append((now, bytes))
        if let first = samples.first, now - first.0 > 3 { samples.removeFirst(samples.count / 2) }
        if let first = samples.first, now - first.0 > 0.2, bytes >= first.1 {
            status.rate = UInt64(Double(bytes - first.1) / (now - first.0))
        }
        if status.mode == .full { status.fetched = bytes }
        if status.state != .downloading || now - lastWrite >= Self.writeInterval || bytes == total {
            status.state = .downloading
            status.reason = note
            publish()
        }
        guard now - lastControlCheck >= Self.controlInterval else { return nil }
        lastControlCheck = now
        return pendingRequest()
    }

    public func installing() { set(.installing) }

    public func going(_ mode: DownloadStatus.Mode, note: String?) {
        if let note { self.note = note }
        guard mode != status.mode || note != nil else { return }
        status.mode = mode
        if mode == .full { status.reused = 0 }
        status.reason = self.note
        publish()
    }

    public func counted(fetched: UInt64, reused: UInt64) {
        status.fetched = fetched
        status.reused = reused
    }

    public func waitWhilePaused() -> DownloadInterruption? {
        samples.removeAll()
        set(.paused, reason: "paused by request")
        let watch = board.watch()
        while true {
            switch pendingRequest() {
            case .cancel: return .cancel
            case .pause: break
            case nil:
                set(.downloading)
                return nil
            }
            if let watch { watch.wait(timeout: 1) } else { Monotonic.sleep(Self.controlInterval) }
        }
    }

    public func sleep(_ seconds: Double) -> DownloadInterruption? {
        let deadline = Monotonic.now + seconds
        let watch = board.watch()
        while true {
            if let request = pendingRequest() { return request }
            let left = deadline - Monotonic.now
            guard left > 0 else { return nil }
            if let watch { watch.wait(timeout: left) } else { Monotonic.sleep(min(left, Self.controlInterval)) }
        }
    }

    /// The request for this download on the board: `.pause`, `.cancel`, or
    /// `nil` (none, `resume`, or one for another download).
    private func pendingRequest() -> DownloadInterruption? {
        let control: DownloadControl
        switch board.control(of: status.pack) {
        case .none:
            return nil
        case .ignored(let reason):
            if reason != ignored {
                ignored = reason
                log?("download of '\(status.pack)': ignored: \(reason)")
                // Kept as the record's reason, as a delta's fallback is,
                // unless the download has a reason of its own already.
                if note == nil || note?.hasPrefix(Self.ignoredPrefix) == true {
                    note = Self.ignoredPrefix + reason
                    if status.state != .paused && status.state != .deferred { status.reason = note }
                    publish()
                }
            }
            return nil
        case .request(let request):
            control = request
        }
        guard control.download == status.download else { return nil }
        switch control.request {
        case .pause: return .pause
        case .cancel: return .cancel
        case .resume: return nil
        }
    }

    private func publish() {
        status.updated = DownloadBoard.now
        lastWrite = Monotonic.now
        try? board.write(status)
        onChange?(status)
    }

    private static func newID() -> String {
        let hex = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

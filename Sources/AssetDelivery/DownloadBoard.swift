import Foundation
public import AssetSystem

/// The container's `downloads/` directory: per pack, the lock its one
/// download holds (`<pack>.lock`), the status record of its latest download
/// (`<pack>.status`, ``DownloadStatus``) and requests to it
/// (`<pack>.control`, ``DownloadControl``).
///
/// Records are written by the process running the download and read by
/// anyone; none is ever needed for correctness — the index's journal is what
/// a resume starts from — so they are replaced whole (rename), and only a
/// download's final record (finished, failed, cancelled) is flushed to disk
/// (the file, then the directory): the one that outlives the process, so
/// that after a power loss `status` tells what the command reported rather
/// than a download in progress that nothing runs. The directory itself is
/// made durably (``prepare()``).
public struct DownloadBoard: Sendable {
    public static let statusSuffix = ".status"
    public static let controlSuffix = ".control"
    public static let lockSuffix = ".lock"

    /// `<container>/downloads`.
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// The board of the container at `containerPath`.
    public init(containerPath: String) {
        self.init(directory: containerPath + "/downloads")
    }

    public func lockPath(of pack: String) -> String { directory + "/" + pack + Self.lockSuffix }
    public func statusPath(of pack: String) -> String { directory + "/" + pack + Self.statusSuffix }
    public func controlPath(of pack: String) -> String { directory + "/" + pack + Self.controlSuffix }

    /// Creates the directory if it is missing, durably (flushed into the
    /// container, as `FileSystem.createDirectories` does).
    public func prepare() throws(Errno) { try FileSystem.createDirectories(directory) }

    /// The latest record of `pack`'s download, or `nil` (none, or unreadable).
    public func status(of pack: String) -> DownloadStatus? {
        read(statusPath(of: pack)).flatMap(DownloadStatus.init(parsing:))
    }

    /// Every pack's latest record, sorted by pack.
    public func all() -> [DownloadStatus] {
        FileSystem.names(in: directory).filter { $0.hasSuffix(Self.statusSuffix) && !$0.hasPrefix(".") }
            .compactMap { status(of: String($0.dropLast(Self.statusSuffix.count))) }
            .sorted { $0.pack < $1.pack }
    }

    /// Whether a process holds `pack`'s download lock now: a record that is
    /// not final and whose lock is free was left by a process that died.
    public func isRunning(_ pack: String) -> Bool {
        (try? FileLock.isHeld(path: lockPath(of: pack))) ?? false
    }

    /// Whether the download `status` describes is alive: it holds the pack's
    /// lock — or, deferred (a discretionary download waiting for its turn,
    /// before the lock), its process exists.
    public func isRunning(_ status: DownloadStatus) -> Bool {
        guard !status.state.isFinal else { return false }
        if status.state == .deferred { return kill(status.pid, 0) == 0 || errno == EPERM }
        return isRunning(status.pack)
    }

    /// Replaces `pack`'s status record; a final one durably.
    public func write(_ status: DownloadStatus) throws(Errno) {
        try replace(statusPath(of: status.pack), with: status.encoded(), durably: status.state.isFinal)
    }

    /// The request waiting for `pack`'s download, or `nil`.
    public func control(of pack: String) -> DownloadControl? {
        read(controlPath(of: pack)).flatMap(DownloadControl.init(parsing:))
    }

    /// Asks the download `control.download` of `pack` to pause, resume or cancel.
    public func send(_ control: DownloadControl, to pack: String) throws(Errno) {
        try prepare()
        try replace(controlPath(of: pack), with: control.encoded())
    }

    /// Removes `pack`'s request, if there is one.
    public func clearControl(of pack: String) {
        try? FileSystem.unlink(controlPath(of: pack))
    }

    /// A watch on the directory (created if missing), to wait for the next change.
    public func watch() throws(Errno) -> DirectoryWatch {
        try prepare()
        return try DirectoryWatch(directory: directory)
    }

    private func read(_ path: String) -> [UInt8]? {
        guard let fd = try? FileDescriptor.open(path, [.readOnly, .noFollow]) else { return nil }
        return try? fd.readToEnd()
    }

    /// Writes `bytes` beside `path` and renames them over it; `durably`,
    /// flushes the file before the rename and the directory after it.
    private func replace(_ path: String, with bytes: [UInt8], durably: Bool = false) throws(Errno) {
        let slash = path.lastIndex(of: "/")!
        let temporary = String(path[..<slash]) + "/" + AtomicFile.temporaryName(for: String(path[path.index(after: slash)...]))
        do {
            let fd = try FileDescriptor.open(temporary, [.writeOnly, .create, .exclusive, .noFollow])
            try fd.write(bytes)
            if durably { try fd.sync() }
            try FileSystem.rename(temporary, to: path)
        } catch {
            try? FileSystem.unlink(temporary)
            throw error
        }
        if durably { try FileSystem.syncDirectory(containing: path) }
    }

    /// Now, in microseconds since 1970.
    public static var now: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }
}

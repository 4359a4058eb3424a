import Foundation
public import AssetStore
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
/// made durably, with the container's layout.
///
/// Every file is reached relative to the directory the container's layout
/// opened (``AssetStore/downloadsDirectory``: no symlink followed, neither
/// at `downloads/` nor at a record), opened with `O_NONBLOCK` (a FIFO planted
/// as a record never blocks a reader) and read only when it is a regular
/// file of at most ``maximumRecordSize`` bytes. A file name is made from a
/// pack ID only after `PackID.validate` accepted it (``fileName(_:_:)``).
/// A control record is obeyed only when its file was written by the
/// container's owner, by root, or by the user running the download
/// (``control(of:runBy:)``).
public struct DownloadBoard: Sendable {
    public static let statusSuffix = ".status"
    public static let controlSuffix = ".control"
    public static let lockSuffix = ".lock"
    /// The most bytes of a record that are read: a record is one line of a
    /// few hundred bytes.
    public static let maximumRecordSize = 64 << 10

    /// The store of the container whose board this is.
    public let store: AssetStore

    public init(store: AssetStore) {
        self.store = store
    }

    /// `downloads/`, as the container's layout opened it.
    public var directory: LayoutDirectory { store.downloadsDirectory }

    /// The name of `pack`'s file with `suffix` (`<pack>.status`).
    ///
    /// - Throws: `.invalidPackID` for an ID that no pack may have: no
    ///   name is made from it.
    public static func fileName(_ pack: String, _ suffix: String) throws(StoreError) -> String {
        try PackID.validate(pack)
        return pack + suffix
    }

    /// The latest record of `pack`'s download, or `nil` (none, unreadable,
    /// not a regular file, or an invalid pack ID).
    public func status(of pack: String) -> DownloadStatus? {
        statusRecord(of: pack)?.status
    }

    /// `pack`'s status record with the user who wrote its file.
    public func statusRecord(of pack: String) -> (status: DownloadStatus, writer: UInt32)? {
        guard let name = try? Self.fileName(pack, Self.statusSuffix), case .record(let bytes, let writer) = read(name),
              let status = DownloadStatus(parsing: bytes), status.pack == pack else { return nil }
        return (status, writer)
    }

    /// Every pack's latest record, sorted by pack.
    public func all() -> [DownloadStatus] {
        directory.names.filter { $0.hasSuffix(Self.statusSuffix) && !$0.hasPrefix(".") }
            .compactMap { status(of: String($0.dropLast(Self.statusSuffix.count))) }
            .sorted { $0.pack < $1.pack }
    }

    /// Whether a process holds `pack`'s download lock now: a record that is
    /// not final and whose lock is free was left by a process that died.
    /// A lock file that is not a regular file is held by nobody.
    public func isRunning(_ pack: String) -> Bool {
        guard let name = try? Self.fileName(pack, Self.lockSuffix), directory.status(of: name)?.isRegularFile == true,
              let anchor = directory.openAnchor else { return false }
        return (try? FileLock.isHeld(path: name, relativeTo: anchor)) ?? false
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
    ///
    /// - Throws: `.invalidPackID`, `.symlinkInContainer` when `downloads/`
    ///   is a symlink, `.system`.
    public func write(_ status: DownloadStatus) throws(StoreError) {
        try replace(try Self.fileName(status.pack, Self.statusSuffix), with: status.encoded(), durably: status.state.isFinal)
    }

    /// What `pack`'s control record asks, for a download run by the user
    /// `uid` (by default this process's).
    public enum ControlReading: Sendable, Equatable {
        /// No request (no record, or one that is not a request).
        case none
        /// A request to obey when it names the download.
        case request(DownloadControl)
        /// A record that is not obeyed, and why (for the log).
        case ignored(reason: String)
    }

    /// Whether a request written by the user `writer` may steer a download
    /// run by the user `runner`: root, the container's owner and the
    /// runner itself may.
    public func isTrusted(writer: UInt32, forDownloadsOf runner: UInt32 = geteuid()) -> Bool {
        writer == 0 || writer == runner || writer == (try? store.containerDirectory.owner().uid)
    }

    /// The request waiting for `pack`'s download run by `uid`: obeyed only
    /// when the record's file belongs to the container's owner, to root or
    /// to `uid` — in a container others may write (a group's), a member of
    /// the group does not steer the owner's downloads. A record that is not
    /// a regular file (a FIFO) or is too long is ignored too.
    public func control(of pack: String, runBy uid: UInt32 = geteuid()) -> ControlReading {
        guard let name = try? Self.fileName(pack, Self.controlSuffix) else { return .none }
        switch read(name) {
        case .absent:
            return .none
        case .refused(let why):
            return .ignored(reason: "\(directory.path(of: name)) \(why)")
        case .record(let bytes, let writer):
            guard let control = DownloadControl(parsing: bytes) else { return .none }
            guard !isTrusted(writer: writer, forDownloadsOf: uid) else { return .request(control) }
            let by = (try? store.containerDirectory.owner().uid).map { "the container's owner (uid \($0))" } ?? "the container's owner"
            return .ignored(reason: "a \(control.request.rawValue) request in \(directory.path(of: name)) was written by uid \(writer), "
                            + "not by \(by), root or the download's user (uid \(uid))")
        }
    }

    /// Asks the download `control.download` of `pack` to pause, resume or cancel.
    ///
    /// - Throws: `.invalidPackID`, `.symlinkInContainer`, `.system`.
    public func send(_ control: DownloadControl, to pack: String) throws(StoreError) {
        try replace(try Self.fileName(pack, Self.controlSuffix), with: control.encoded())
    }

    /// Removes `pack`'s request, if there is one.
    public func clearControl(of pack: String) {
        guard let name = try? Self.fileName(pack, Self.controlSuffix) else { return }
        try? directory.unlink(name)
    }

    /// Opens `pack`'s download lock file (creating it with the container's
    /// lock file mode, 0600 or 0660 in a group's container) and locks it
    /// (OFD), waiting as `wait` says: one download of a pack at a time
    /// across threads and processes.
    ///
    /// - Throws: `.invalidPackID`; `.notAFile` naming the lock when it is
    ///   not a regular file (a FIFO, a directory); `.symlinkInContainer`;
    ///   `.lockTimeout` naming "the download lock of '<pack>'" and its
    ///   holder when the wait ends first (at once with `.none`); `.system`.
    public func lock(_ pack: String, wait: FileLock.Wait) throws(StoreError) -> FileDescriptor {
        let name = try Self.fileName(pack, Self.lockSuffix)
        let fd = try directory.openLockFile(name, mode: store.lockFileMode)
        do { try FileLock.lock(fd, wait: wait, path: directory.path(of: name)) } catch {
            switch error {
            case .timedOut(let t): throw .lockTimeout(t.named("the download lock of '\(pack)'"))
            case .system(let e): throw .system(e)
            }
        }
        return fd
    }

    /// A watch on the directory, to wait for the next change; `nil` when
    /// none notifies (no inotify, `downloads/` not there or a symlink):
    /// the caller then polls.
    public func watch() -> DirectoryWatch? {
        guard let watch = try? DirectoryWatch(directory: directory.path), watch.isNotifying else { return nil }
        return watch
    }

    /// What reading a record found.
    enum Reading {
        case absent
        case record([UInt8], writer: UInt32)
        /// Something that is not read, and why.
        case refused(String)
    }

    /// The record `name`: opened without following a symlink and without
    /// waiting (`O_NONBLOCK`), read when it is a regular file of at most
    /// ``maximumRecordSize`` bytes.
    func read(_ name: String) -> Reading {
        let fd: FileDescriptor
        do { fd = try directory.openFile(name, [.readOnly, .nonBlocking]) } catch where error == .noSuchFile {
            return .absent
        } catch where error == .tooManySymbolicLinkLevels {
            return .refused("is a symbolic link")
        } catch {
            return .refused("cannot be opened: \(error.message)")
        }
        guard let status = try? fd.status(), let writer = try? fd.owner().uid else { return .refused("cannot be looked at") }
        guard status.isRegularFile else { return .refused("is not a regular file") }
        guard status.size <= Int64(Self.maximumRecordSize) else { return .refused("is longer than \(Self.maximumRecordSize) bytes") }
        guard let bytes = try? fd.read(count: Self.maximumRecordSize, at: 0) else { return .refused("cannot be read") }
        return .record(bytes, writer: writer)
    }

    /// Writes `bytes` beside `name` and renames them over it, relative to
    /// the directory's descriptor; `durably`, flushes the file before the
    /// rename and the directory after it.
    private func replace(_ name: String, with bytes: [UInt8], durably: Bool = false) throws(StoreError) {
        let directory = self.directory
        let anchor = try directory.anchor()
        let temporary = AtomicFile.temporaryName(for: name)
        do {
            let fd = try FileDescriptor.open(temporary, [.writeOnly, .create, .exclusive, .noFollow], relativeTo: anchor)
            try fd.write(bytes)
            if durably { try fd.sync() }
            try FileSystem.rename(temporary, to: name, relativeTo: anchor)
        } catch {
            try? FileSystem.unlink(temporary, relativeTo: anchor)
            throw .system(error.with(operation: error.operation, path: directory.path(of: name)))
        }
        if durably { try directory.sync() }
    }

    /// Now, in microseconds since 1970.
    public static var now: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }
}

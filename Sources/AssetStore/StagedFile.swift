import AssetSystem

/// A new archive on its way into `packs/`, and the crash-safety protocol
/// that goes with it.
///
/// The file is created unnamed (`O_TMPFILE`), locked (OFD, exclusive), and
/// only then linked as `staging/<label>.<random>.install`; its lock is held
/// for as long as this value lives. Once checked it is renamed to
/// `staging/<archive name>.install` and *hard-linked* into `packs/` — the
/// staging name stays until the index switch is committed. So a file in
/// `packs/` that no record names always has a twin in `staging/` whose lock
/// is free when its writer died: the next writer (``AssetStore``'s reclaim)
/// removes both, and verify reports the pair as reclaimable, not damage.
///
/// A finished download is *adopted* instead (``init(adopting:in:label:wait:)``):
/// its file, `staging/<pack>-<random>.download`, is locked and hard-linked
/// as the `.install` name, and from there goes the same way, keeping its
/// `.download` name until the index switch (which also drops the journal
/// entry naming it) is committed. Until then a writer that dies leaves the
/// download whole and resumable; after it, the `.download` name is unlinked
/// (``unlinkAdoptedName()``), and one left by a writer that died in between
/// is known by its inode being the installed archive's (reclaim removes it).
///
/// Every name is made relative to the descriptors of `staging/` and
/// `packs/` (``LayoutDirectory``); none of these calls follows a symlink.
struct StagedFile: ~Copyable {
    let descriptor: FileDescriptor
    private(set) var name: String
    let staging: LayoutDirectory
    /// The `.download` name of an adopted download, until it is unlinked.
    private(set) var adoptedName: String?
    /// Where and under which name it went in `packs/`, once published.
    private var published: (packs: LayoutDirectory, name: String)?
    private var committed = false

    static let suffix = ".install"

    /// Makes the staging file (`groupShared`: in a group's container, whose
    /// members get read-write access to the archive, so that they can
    /// replace it later: a hard link to another user's file needs it).
    init(in staging: LayoutDirectory, label: String, groupShared: Bool = false) throws(StoreError) {
        let anchor = try staging.anchor()
        do {
            let fd = try FileDescriptor.temporary(in: anchor)
            if groupShared { try fd.addPermissionsIfOwned(0o060) }
            // Nobody else can see an unnamed file, so its lock is granted at once.
            _ = try FileLock.tryLock(fd)
            self.name = try Self.link(fd, in: anchor, label: label)
            self.descriptor = fd
        } catch {
            throw .system(error.with(operation: error.operation, path: staging.path))
        }
        self.staging = staging
    }

    /// Adopts the finished download `staging/<downloadName>`: opens it
    /// (`O_NOFOLLOW`), locks it shared (waiting as `wait` says: only a
    /// probe's exclusive lock, held for an instant, stands in the way) and
    /// links the file opened — not whatever the name leads to by then — as
    /// `<label>.<random>.install`. The `.download` name stays.
    ///
    /// The lock is shared because the file becomes an archive that other
    /// users may read, and any reader can hold a shared lock on it: an
    /// exclusive lock here would wait for them. A shared lock still shows a
    /// probe (an exclusive try) that a writer is alive. Adopters of one pack
    /// are one at a time anyway (the download lock), and two of one file
    /// would meet at the pack lock, where the second finds it installed.
    ///
    /// - Throws: `.notAFile` when `downloadName` is not one component ending
    ///   in `.download` or names no regular file, `.symlinkInContainer` for a
    ///   symlink, `.lockTimeout`, `.system` (`ENOENT` when nothing has that name).
    init(adopting downloadName: String, in staging: LayoutDirectory, label: String, wait: FileLock.Wait,
         groupShared: Bool = false) throws(StoreError) {
        let path = staging.path(of: downloadName)
        guard downloadName.hasSuffix(JournalEntry.stagingSuffix), !downloadName.contains("/"),
              downloadName.count > JournalEntry.stagingSuffix.count else { throw .notAFile(path) }
        guard let fd = try staging.open(downloadName, .readWrite) else {
            throw .system(Errno.noSuchFile.with(operation: "open", path: path))
        }
        let anchor = try staging.anchor()
        let status: FileStatus
        do { status = try fd.status() } catch { throw .system(error.with(operation: "fstat", path: path)) }
        guard status.isRegularFile else { throw .notAFile(path) }
        do {
            try FileLock.lock(fd, kind: .shared, wait: wait, path: path)
        } catch {
            throw .fromLock(error, what: "the lock of the download being installed", path: path)
        }
        do {
            if groupShared { try fd.addPermissionsIfOwned(0o060) }
            self.name = try Self.link(fd, in: anchor, label: label)
        } catch {
            throw .system(error.path == nil ? error.with(operation: error.operation, path: path) : error)
        }
        self.descriptor = fd
        self.staging = staging
        self.adoptedName = downloadName
    }

    /// Links `fd` in `anchor` as `<label>.<random>.install`; returns the name.
    private static func link(_ fd: borrowing FileDescriptor, in anchor: DirectoryAnchor, label: String) throws(Errno) -> String {
        while true {
            let name = label + "." + String(UInt64.random(in: 1...UInt64.max), radix: 16) + Self.suffix
            do {
                try fd.link(as: name, in: anchor)
                return name
            } catch where error == .fileExists {
                continue
            }
        }
    }

    var path: String { staging.path(of: name) }

    /// Renames the staging file to `<archiveName>.install`, flushes
    /// `staging/`, and links the file into `packs` as `archiveName`, failing
    /// with `EEXIST` if that is taken. The caller then flushes `packs/`,
    /// commits the index and calls ``commit()``.
    ///
    /// The flush comes before the link: a `packs/` file that survives a
    /// power loss without the commit that names it has its twin by then,
    /// which proves it garbage to reclaim (and so does a retirement twin
    /// linked before this call).
    mutating func publish(as archiveName: String, in packs: LayoutDirectory) throws(StoreError) {
        let twin = archiveName + Self.suffix
        let (from, to) = (try staging.anchor(), try packs.anchor())
        do {
            try FileSystem.rename(name, to: twin, relativeTo: from, noReplace: true)
        } catch {
            throw .system(error.with(operation: error.operation, path: path))
        }
        name = twin
        try staging.sync()
        do {
            try FileSystem.link(twin, to: archiveName, relativeTo: from, destinationRelativeTo: to)
        } catch {
            throw .system(error.with(operation: error.operation, path: packs.path(of: archiveName)))
        }
        published = (packs, archiveName)
    }

    /// Marks the index switch as committed: the `packs/` name stays.
    mutating func commit() { committed = true }

    /// After the commit: unlinks an adopted download's `.download` name.
    /// Returns whether there was one.
    mutating func unlinkAdoptedName() -> Bool {
        precondition(committed, "an adopted download keeps its name until the switch is committed")
        guard let adoptedName else { return false }
        try? staging.unlink(adoptedName)
        self.adoptedName = nil
        return true
    }

    deinit {
        if let published, !committed {
            // The twin goes only once the unlink from packs/ is flushed: the
            // other order could leave, after a power loss, a packs/ file
            // that nothing proves garbage (an orphan for verify to report).
            guard (try? published.packs.unlink(published.name)) != nil, (try? published.packs.sync()) != nil else { return }
        }
        try? staging.unlink(name)
    }
}

/// An installed archive on its way out: hard-linked as
/// `staging/<archive name>.retire` and locked before the index switch that
/// drops it, unlinked from `packs/` after the switch commits. A writer killed
/// in between leaves a free-locked twin, by which reclaim and verify know the
/// `packs/` file for garbage. The caller flushes `staging/` between this
/// link and the switch, so that the twin outlives a power loss too.
struct RetiringArchive: ~Copyable {
    let descriptor: FileDescriptor
    let archiveName: String
    let packs: LayoutDirectory
    let staging: LayoutDirectory
    private var committed = false
    /// The archive is unlinked and that unlink flushed: the twin may go.
    private var gone = false

    static let suffix = ".retire"

    /// Locks `packs/archiveName`, shared, and links its twin in `staging`.
    /// Returns `nil` when the archive is already gone.
    ///
    /// The lock comes first, so the twin is never visible unlocked while its
    /// writer lives; probes (reclaim, verify) hold a free lock only for an
    /// instant, so the wait here is short (at most 5 s). It is shared: the
    /// archive is a file other users may read (and a daemon's peer holds a
    /// descriptor of), so anyone may hold a shared lock on it, which a
    /// shared lock does not wait for; a probe's exclusive try still sees it.
    ///
    /// - Throws: `.symlinkInContainer` when the archive is a symlink,
    ///   `.lockTimeout`, `.system`.
    init?(archiveName: String, packs: LayoutDirectory, staging: LayoutDirectory) throws(StoreError) {
        self.archiveName = archiveName
        self.packs = packs
        self.staging = staging
        guard let fd = try packs.open(archiveName, .readWrite) else { return nil }
        let (from, to) = (try packs.anchor(), try staging.anchor())
        do {
            try FileLock.lock(fd, kind: .shared, wait: .seconds(5), path: packs.path(of: archiveName))
        } catch {
            throw .fromLock(error, what: "the lock of the archive being replaced", path: packs.path(of: archiveName))
        }
        do {
            do {
                try FileSystem.link(archiveName, to: archiveName + Self.suffix, relativeTo: from, destinationRelativeTo: to)
            } catch where error == .fileExists {
                // The twin of a writer that died: this one takes it over.
            }
        } catch {
            throw .system(error.with(operation: error.operation, path: packs.path(of: archiveName)))
        }
        descriptor = fd
    }

    /// After the switch commits: unlinks the archive from `packs/` and
    /// flushes `packs/`, so that the archive stays gone after a power loss.
    /// The twin goes at deinit, and only once this has succeeded: unlinked
    /// first, it could leave an archive no record names and nothing proves
    /// garbage.
    ///
    /// - Throws: `.system` naming the archive or `packs/` when either step
    ///   fails; the twin then stays, for the next writer to reclaim with
    ///   the archive.
    mutating func unlinkArchive() throws(StoreError) {
        committed = true
        do { try packs.unlink(archiveName) } catch where error == .noSuchFile {} catch { throw .system(error) }
        try packs.sync()
        gone = true
    }

    deinit {
        // Not committed: the archive stays current, and its twin goes.
        if !committed || gone { try? staging.unlink(archiveName + Self.suffix) }
    }
}

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
struct StagedFile: ~Copyable {
    let descriptor: FileDescriptor
    private(set) var name: String
    let stagingPath: String
    /// The name in `packs/`, once published.
    private(set) var published: String?
    private var committed = false

    static let suffix = ".install"

    init(in stagingPath: String, label: String) throws(Errno) {
        let directory = try FileDescriptor.open(stagingPath, .directory)
        let fd = try FileDescriptor.temporary(in: directory)
        // Nobody else can see an unnamed file, so its lock is granted at once.
        _ = try FileLock.tryLock(fd)
        var name = ""
        while true {
            name = label + "." + String(UInt64.random(in: 1...UInt64.max), radix: 16) + Self.suffix
            do {
                try fd.link(as: name, in: directory)
                break
            } catch where error == .fileExists {
                continue
            }
        }
        self.descriptor = fd
        self.name = name
        self.stagingPath = stagingPath
    }

    var path: String { stagingPath + "/" + name }

    /// Renames the staging file to `<archiveName>.install` and links it into
    /// `packsPath` as `archiveName`, failing with `EEXIST` if that is taken.
    /// The caller then commits the index and calls ``commit()``.
    mutating func publish(as archiveName: String, in packsPath: String) throws(Errno) {
        let twin = archiveName + Self.suffix
        try FileSystem.rename(path, to: stagingPath + "/" + twin, noReplace: true)
        name = twin
        try FileSystem.link(path, to: packsPath + "/" + archiveName)
        published = packsPath + "/" + archiveName
    }

    /// Marks the index switch as committed: the `packs/` name stays.
    mutating func commit() { committed = true }

    deinit {
        if let published, !committed { try? FileSystem.unlink(published) }
        try? FileSystem.unlink(stagingPath + "/" + name)
    }
}

/// An installed archive on its way out: hard-linked as
/// `staging/<archive name>.retire` and locked before the index switch that
/// drops it, unlinked from `packs/` after the switch commits. A writer killed
/// in between leaves a free-locked twin, by which reclaim and verify know the
/// `packs/` file for garbage.
struct RetiringArchive: ~Copyable {
    let descriptor: FileDescriptor
    let archivePath: String
    let twinPath: String
    private var committed = false

    static let suffix = ".retire"

    /// Locks `packsPath/archiveName` and links its twin. Returns `nil` when
    /// the archive is already gone.
    ///
    /// The lock comes first, so the twin is never visible unlocked while its
    /// writer lives; probes (reclaim, verify) hold a free lock only for an
    /// instant, so the wait here is short.
    init?(archiveName: String, packsPath: String, stagingPath: String) throws(Errno) {
        archivePath = packsPath + "/" + archiveName
        twinPath = stagingPath + "/" + archiveName + Self.suffix
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(archivePath, .readWrite)
        } catch where error == .noSuchFile {
            return nil
        }
        try FileLock.lock(fd, wait: .seconds(5), path: archivePath)
        do {
            try FileSystem.link(archivePath, to: twinPath)
        } catch where error == .fileExists {
            // The twin of a writer that died: this one takes it over.
        }
        descriptor = fd
    }

    /// Marks the switch as committed: the archive goes at deinit.
    mutating func commit() { committed = true }

    deinit {
        if committed { try? FileSystem.unlink(archivePath) }
        try? FileSystem.unlink(twinPath)
    }
}

import AssetSystem

/// A file being written in `staging/`: named only once it is locked, removed
/// unless it is moved out with ``publish(as:in:)``.
///
/// The file is created unnamed (`O_TMPFILE`), locked (OFD, exclusive), and
/// only then linked under `staging/<label>.<random>.install`. Its lock is held
/// for as long as this value lives, so a staging file whose lock can be taken
/// belongs to a process that died, and the next writer removes it.
struct StagedFile: ~Copyable {
    let descriptor: FileDescriptor
    let name: String
    let stagingPath: String
    private var published = false

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

    /// Moves the file to `directory/name`, failing if that name exists.
    mutating func publish(as target: String, in directory: String) throws(Errno) {
        try FileSystem.rename(path, to: directory + "/" + target, noReplace: true)
        published = true
    }

    deinit {
        if !published { try? FileSystem.unlink(stagingPath + "/" + name) }
    }

    /// Removes staging files left by processes that died: each one whose lock
    /// can be taken at once. Returns the names removed.
    @discardableResult
    static func reclaimLeftovers(in stagingPath: String, suffix: String = StagedFile.suffix) -> [String] {
        var removed: [String] = []
        for name in FileSystem.names(in: stagingPath) where name.hasSuffix(suffix) {
            let path = stagingPath + "/" + name
            guard let fd = try? FileDescriptor.open(path, .readWrite, relativeTo: .workingDirectory),
                  (try? FileLock.tryLock(fd)) == true else { continue }
            if (try? FileSystem.unlink(path)) != nil { removed.append(name) }
        }
        return removed
    }
}

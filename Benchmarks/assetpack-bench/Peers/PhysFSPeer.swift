import CPhysFS

/// PhysicsFS — what a C game reads its ZIP archives with today — on the
/// same ZIP file as the pack: `PHYSFS_mount` once (which reads the central
/// directory), then each member by path: `PHYSFS_openRead`,
/// `PHYSFS_readBytes` into a buffer, `PHYSFS_close`. PhysicsFS has one
/// global search path per process, so there is one of these at a time.
final class PhysFSArchive {
    private let path: String

    init(mounting path: String) throws {
        if PHYSFS_isInit() == 0 {
            guard PHYSFS_init(CommandLine.unsafeArgv[0]) != 0 else { throw PeerError("PHYSFS_init: \(Self.lastError)") }
        }
        guard PHYSFS_mount(path, "/", 1) != 0 else { throw PeerError("PHYSFS_mount \(path): \(Self.lastError)") }
        self.path = path
    }

    deinit { PHYSFS_unmount(path) }

    static var lastError: String {
        PHYSFS_getErrorByCode(PHYSFS_getLastErrorCode()).map { String(cString: $0) } ?? "unknown error"
    }

    /// Reads member `name` into `buffer`; returns the byte count.
    @inline(__always)
    func read(_ name: UnsafePointer<CChar>, into buffer: ByteBuffer) throws -> Int {
        guard let file = PHYSFS_openRead(name) else { throw PeerError("PHYSFS_openRead \(String(cString: name)): \(Self.lastError)") }
        let n = PHYSFS_readBytes(file, buffer.pointer, PHYSFS_uint64(buffer.capacity))
        PHYSFS_close(file)
        guard n >= 0 else { throw PeerError("PHYSFS_readBytes \(String(cString: name)): \(Self.lastError)") }
        return Int(n)
    }
}

/// A member read by path from the archive PhysicsFS has mounted.
struct PhysFSRead: Operation {
    let archive: PhysFSArchive
    let names: CStrings
    let buffer: ByteBuffer
    let consume: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let n = try archive.read(names[item], into: buffer)
        return consume ? Int(truncatingIfNeeded: sumBytes(buffer.pointer, n)) : n
    }
}

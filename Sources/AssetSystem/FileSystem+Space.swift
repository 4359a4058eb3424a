#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// The bytes this process may still write on the file system holding
    /// `path` (the blocks reserved for root count for root only), or `nil`
    /// when it cannot be asked. The corresponding C function is `statvfs`.
    public static func freeSpace(at path: String) -> UInt64? {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return nil }
        let blocks = geteuid() == 0 ? s.f_bfree : s.f_bavail
        return UInt64(blocks) * UInt64(s.f_frsize)
    }

    /// The largest file this process may write (`RLIMIT_FSIZE`, soft),
    /// or `nil` when it has no such limit. The corresponding C function is
    /// `getrlimit`.
    public static var fileSizeLimit: UInt64? {
        var limit = rlimit()  // rlim_t.max is RLIM_INFINITY
        guard getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return UInt64(limit.rlim_cur)
    }
}

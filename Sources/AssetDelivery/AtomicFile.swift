import Foundation
public import AssetSystem

/// Replacing a file whole, so that a reader sees the old bytes or the new
/// ones, never a part: write a temporary file in the same directory, flush
/// it, rename it over the name, flush the directory.
public enum AtomicFile {
    /// The prefix of the temporary names (`.tmp-catalog.json-<random>`), so
    /// that a leftover of a crash is recognisable.
    public static let temporaryPrefix = ".tmp-"

    /// Replaces `name` in the open directory `directory` (named `path` in
    /// errors) with `contents`.
    ///
    /// The new file's modification time is later, in whole seconds, than
    /// the one it replaces (a second past it when the clock has not moved
    /// on): web servers build validators from the time in seconds and the
    /// size (nginx's `ETag` is exactly that), so a catalog republished
    /// within the second at the same size would otherwise revalidate as
    /// unchanged — `304` for a new catalog.
    ///
    /// - Throws: `Errno` naming the file.
    public static func replace(_ name: String, in directory: borrowing FileDescriptor, path: String,
                               contents: [UInt8], permissions: UInt32 = 0o644) throws(Errno) {
        let temporary = temporaryName(for: name)
        let anchor = DirectoryAnchor.descriptor(directory.rawValue)
        do {
            let fd = try FileDescriptor.open(temporary, [.writeOnly, .create, .exclusive, .noFollow],
                                             permissions: permissions, relativeTo: anchor)
            try fd.write(contents)
            // O_PATH: the old file is only looked at (a FIFO there would block an open for reading).
            if let replaced = try? FileDescriptor.open(name, [.path, .noFollow], relativeTo: anchor),
               let old = try? replaced.modificationSeconds() {
                let now = try fd.modificationSeconds()
                if now <= old { try fd.setModificationTime(seconds: old + 1) }
            }
            try fd.sync()
        } catch {
            try? FileSystem.unlink(temporary, relativeTo: anchor)
            throw error.with(operation: error.operation, path: path + "/" + temporary)
        }
        try commit(temporary, as: name, in: directory, path: path)
    }

    /// Renames the finished temporary file `temporary` over `name` and
    /// flushes the directory; removes the temporary file if that fails.
    public static func commit(_ temporary: String, as name: String, in directory: borrowing FileDescriptor, path: String) throws(Errno) {
        let anchor = DirectoryAnchor.descriptor(directory.rawValue)
        do {
            try FileSystem.rename(temporary, to: name, relativeTo: anchor)
            try directory.sync()
        } catch {
            try? FileSystem.unlink(temporary, relativeTo: anchor)
            throw error.with(operation: error.operation, path: path + "/" + name)
        }
    }

    /// A fresh temporary name for `name`.
    public static func temporaryName(for name: String) -> String {
        temporaryPrefix + name + "-" + UUID().uuidString.prefix(12).lowercased()
    }
}

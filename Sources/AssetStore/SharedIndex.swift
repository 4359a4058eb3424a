import Synchronization
import AssetIndex
import AssetSystem

/// One container's open index and archive mappings, shared by every
/// ``AssetStore`` of that container in this process.
///
/// LMDB must not open one environment twice in a process (the second open
/// would reset the reader table under the first), so stores find the open
/// one here, by the index directory's device and inode. It closes when the
/// last store using it goes away.
final class SharedIndex: Sendable {
    let environment: Environment
    let packs: Database
    let members: Database
    let paths: Database
    let meta: Database
    let journal: Database
    let archives: ArchiveCache
    let lookups = LookupCache()

    private struct Key: Hashable { let device: UInt64; let inode: UInt64 }
    private struct Entry { weak var index: SharedIndex? }
    private static let open = Mutex<[Key: Entry]>([:])

    private init(environment: Environment, packsPath: String) {
        self.environment = environment
        packs = environment.database(IndexSchema.packs)
        members = environment.database(IndexSchema.members)
        paths = environment.database(IndexSchema.paths)
        meta = environment.database(IndexSchema.meta)
        journal = environment.database(IndexSchema.journal)
        archives = ArchiveCache(packsPath: packsPath)
    }

    /// The shared index of `container`, opening it if this process has not.
    static func open(container: GroupContainer, options storeOptions: AssetStore.Options) throws(StoreError) -> SharedIndex {
        let status: FileStatus?
        do { status = try FileDescriptor.status(of: container.indexPath) } catch { throw .system(error) }
        guard let status else { throw .system(Errno.noSuchFile.with(operation: "open index", path: container.indexPath)) }
        let key = Key(device: status.device, inode: status.inode)
        return try open.withLock { (table) throws(StoreError) -> SharedIndex in
            if let existing = table[key]?.index { return existing }
            var options = Environment.Options()
            options.mapSize = storeOptions.initialMapSize
            options.maximumMapSize = storeOptions.maximumMapSize
            options.clearsStaleReadersOnOpen = storeOptions.clearsStaleReaders
            options.maxDatabases = 8
            let environment: Environment
            do throws(LMDBError) {
                environment = try Environment(
                    path: container.indexPath,
                    databases: [
                        (IndexSchema.meta, .plain), (IndexSchema.packs, .plain), (IndexSchema.members, .plain),
                        (IndexSchema.paths, .plain), (IndexSchema.journal, .plain),
                    ],
                    options: options)
            } catch {
                throw .index(error)
            }
            let index = SharedIndex(environment: environment, packsPath: container.packsPath)
            table[key] = Entry(index: index)
            return index
        }
    }
}

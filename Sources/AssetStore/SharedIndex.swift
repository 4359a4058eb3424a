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
    /// The container's limits as read at a commit (``AssetStore/limits()``).
    let limits = Mutex<(commit: Int, limits: PackLimits)?>(nil)
    let layout: ContainerLayout

    private struct Key: Hashable { let device: UInt64; let inode: UInt64 }
    private struct Entry { weak var index: SharedIndex? }
    private static let open = Mutex<[Key: Entry]>([:])

    private init(environment: Environment, layout: ContainerLayout) {
        self.environment = environment
        self.layout = layout
        packs = environment.database(IndexSchema.packs)
        members = environment.database(IndexSchema.members)
        paths = environment.database(IndexSchema.paths)
        meta = environment.database(IndexSchema.meta)
        journal = environment.database(IndexSchema.journal)
        archives = ArchiveCache(packs: layout.packs)
    }

    /// The shared index of `container`, opening it if this process has not
    /// (with `layout`, the directories the caller just opened; a store that
    /// finds the index open shares the layout it was opened with).
    static func open(container: GroupContainer, layout: ContainerLayout, options storeOptions: AssetStore.Options) throws(StoreError) -> SharedIndex {
        let status = try layout.index.status()
        let key = Key(device: status.device, inode: status.inode)
        return try open.withLock { (table) throws(StoreError) -> SharedIndex in
            if let existing = table[key]?.index { return existing }
            var options = Environment.Options()
            options.mapSize = storeOptions.initialMapSize
            options.maximumMapSize = storeOptions.maximumMapSize
            options.clearsStaleReadersOnOpen = storeOptions.clearsStaleReaders
            options.maxDatabases = 8
            options.lockFileMode = layout.lockFileMode
            options.groupWrites = layout.isGroupShared
            options.lockWait = storeOptions.lockWait
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
                throw .fromIndex(error)
            }
            let index = SharedIndex(environment: environment, layout: layout)
            table[key] = Entry(index: index)
            return index
        }
    }
}

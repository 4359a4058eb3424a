import AssetSystem
import AssetStore

extension DescriptorDaemon {
    /// An open description of one archive that a connection keeps and hands
    /// out for every stored member of it that the connection asks for with
    /// the shared-position flag (``DaemonProtocol/sharedFlag``): each reply
    /// passes the same descriptor (`SCM_RIGHTS` gives the client a new
    /// descriptor of the same description), so such a handout opens,
    /// duplicates and closes nothing. Only one connection's handouts share
    /// it — one client's, as a process's own handouts share theirs — never
    /// another client's. Closed once the connection and every reply still
    /// waiting to pass it have let go of it.
    final class SharedDescription: Sendable {
        let archive: ArchiveID
        let descriptor: FileDescriptor

        init(archive: ArchiveID, descriptor: consuming FileDescriptor) {
            self.archive = archive
            self.descriptor = descriptor
        }
    }

    /// The shared descriptions one connection keeps: at most
    /// ``perConnection``, the most recently used last, each in a slot of
    /// its own (1 to ``perConnection``) that a client that keeps them
    /// (``DaemonProtocol/keepFlag``) keeps it in too. Keeping one of a
    /// pack's archive drops those of the pack's other archives: an older
    /// version is never asked for again, as an archive's key names one file.
    struct SharedDescriptions {
        /// Descriptions one connection keeps at most.
        static let perConnection = DaemonProtocol.keptSlots
        /// Descriptions all connections keep at most (each is a descriptor).
        static let maximum = 4096

        struct Kept {
            let description: SharedDescription
            /// The slot the client keeps it in once it is passed with one.
            let slot: UInt8
            /// The client was passed it with its slot (it asked to keep
            /// descriptions), so a reply may name the slot instead.
            var clientKeeps = false
        }

        private(set) var kept: [Kept] = []

        var isEmpty: Bool { kept.isEmpty }
        /// The archives of the descriptions kept.
        var archives: [ArchiveID] { kept.map(\.description.archive) }
        var count: Int { kept.count }

        /// The description kept for `archive`, counted as used, and where
        /// it lies in ``kept``.
        mutating func use(_ archive: ArchiveID) -> Int? {
            guard let last = kept.last else { return nil }
            if last.description.archive == archive { return kept.count - 1 }
            guard let i = kept.firstIndex(where: { $0.description.archive == archive }) else { return nil }
            let found = kept.remove(at: i)
            kept.append(found)
            return kept.count - 1
        }

        /// Marks the description at `index` as passed to the client with its slot.
        mutating func passedToKeep(_ index: Int) {
            kept[index].clientKeeps = true
        }

        /// Keeps `description`, keeping at most `bound` (at least 1), in the
        /// lowest slot no other kept description holds, and returns how many
        /// kept before it were let go. It is last in ``kept``.
        mutating func keep(_ description: SharedDescription, bound: Int) -> Int {
            let before = kept.count
            kept.removeAll { $0.description.archive.pack == description.archive.pack }
            if kept.count >= max(1, bound) { kept.removeFirst(kept.count - max(1, bound) + 1) }
            var slot: UInt8 = 1
            while kept.contains(where: { $0.slot == slot }) { slot += 1 }
            kept.append(Kept(description: description, slot: slot))
            return before - (kept.count - 1)
        }

        /// Lets go of the descriptions of archives `isGone` names and returns
        /// how many there were. Their slots are free for the next ones; a
        /// client that keeps descriptions holds its copy until then.
        mutating func removeAll(where isGone: (ArchiveID) -> Bool) -> Int {
            let before = kept.count
            kept.removeAll { isGone($0.description.archive) }
            return before - kept.count
        }

        /// Lets go of every description and returns how many there were.
        mutating func removeAll() -> Int {
            defer { kept = [] }
            return kept.count
        }
    }

    /// What ``answerShared(_:shared:room:)`` came to.
    enum SharedAnswer {
        /// The reply: the shared description, or an error of the lookup.
        case reply(Outgoing)
        /// A memory file's member: a worker makes it.
        case memoryFile
        /// No description could be kept: answer as without the flag.
        case unshared
    }

    /// The reply to a shared-position request for a stored member, passing
    /// the connection's description of its archive (opened now when it
    /// has none, if `room` allows one more or it can let one go) with its
    /// position set to the member — or, to a client that keeps
    /// descriptions (``DaemonRequest/keeps``) and was passed this one
    /// before, naming its slot instead: no `lseek` and no `SCM_RIGHTS`,
    /// the client duplicates and positions its own.
    func answerShared(_ request: DaemonRequest, shared: inout SharedDescriptions, room: inout Int) -> SharedAnswer {
        let store = manager.store
        do throws(StoreError) {
            guard case .stored(let place) = try store.placement(of: request.path, inPack: request.pack) else { return .memoryFile }
            let index: Int
            if let found = shared.use(place.archive) {
                index = found
            } else {
                guard room > 0 || !shared.isEmpty, let fd = try store.openArchive(place.archive) else { return .unshared }
                room += shared.keep(SharedDescription(archive: place.archive, descriptor: fd),
                                    bound: room > 0 ? SharedDescriptions.perConnection : shared.count) - 1
                index = shared.count - 1
            }
            let kept = shared.kept[index]
            let slot = request.keeps ? kept.slot : 0
            if request.keeps && kept.clientKeeps {
                let reply = DaemonReply.Success(offset: place.offset, length: place.length, size: place.archiveSize, source: .archive,
                                                crc32: place.crc32, slot: slot, reuse: true)
                return .reply(Outgoing(reply))
            }
            do throws(Errno) { try kept.description.descriptor.seek(to: place.offset) } catch { throw .system(error) }
            if request.keeps { shared.passedToKeep(index) }
            let reply = DaemonReply.Success(offset: place.offset, length: place.length, size: place.archiveSize, source: .archive,
                                            crc32: place.crc32, slot: slot)
            return .reply(Outgoing(reply, sharing: kept.description))
        } catch {
            return .reply(Outgoing(DaemonReply.failure(for: AssetPackError(error))))
        }
    }
}

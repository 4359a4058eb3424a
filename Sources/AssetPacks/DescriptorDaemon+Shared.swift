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
    /// ``perConnection``, the most recently used last. Keeping one of a
    /// pack's archive drops those of the pack's other archives: an older
    /// version is never asked for again, as an archive's key names one file.
    struct SharedDescriptions {
        /// Descriptions one connection keeps at most.
        static let perConnection = 4
        /// Descriptions all connections keep at most (each is a descriptor).
        static let maximum = 4096

        private(set) var kept: [SharedDescription] = []

        var isEmpty: Bool { kept.isEmpty }

        /// The description kept for `archive`, counted as used.
        mutating func use(_ archive: ArchiveID) -> SharedDescription? {
            guard let last = kept.last else { return nil }
            if last.archive == archive { return last }
            guard let i = kept.firstIndex(where: { $0.archive == archive }) else { return nil }
            let found = kept.remove(at: i)
            kept.append(found)
            return found
        }

        /// Keeps `description`, keeping at most `bound` (at least 1), and
        /// returns how many kept before it were let go.
        mutating func keep(_ description: SharedDescription, bound: Int) -> Int {
            let before = kept.count
            kept.removeAll { $0.archive.pack == description.archive.pack }
            if kept.count >= max(1, bound) { kept.removeFirst(kept.count - max(1, bound) + 1) }
            kept.append(description)
            return before - (kept.count - 1)
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
    /// has none, if `room` allows one more or it can let one go).
    func answerShared(_ request: DaemonRequest, shared: inout SharedDescriptions, room: inout Int) -> SharedAnswer {
        let store = manager.store
        do throws(StoreError) {
            guard case .stored(let place) = try store.placement(of: request.path, inPack: request.pack) else { return .memoryFile }
            let description: SharedDescription
            if let kept = shared.use(place.archive) {
                description = kept
            } else {
                guard room > 0 || !shared.isEmpty, let fd = try store.openArchive(place.archive) else { return .unshared }
                description = SharedDescription(archive: place.archive, descriptor: fd)
                room += shared.keep(description, bound: room > 0 ? SharedDescriptions.perConnection : shared.kept.count) - 1
            }
            do throws(Errno) { try description.descriptor.seek(to: place.offset) } catch { throw .system(error) }
            let reply = DaemonReply.Success(offset: place.offset, length: place.length, size: place.archiveSize, source: .archive, crc32: place.crc32)
            return .reply(Outgoing(reply, sharing: description))
        } catch {
            return .reply(Outgoing(DaemonReply.failure(for: AssetPackError(error))))
        }
    }
}

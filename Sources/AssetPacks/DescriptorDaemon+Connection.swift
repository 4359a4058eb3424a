import Foundation
import AssetSystem
import AssetStore

extension DescriptorDaemon {
    /// One client connection. Owned by the event loop's thread: nothing else
    /// touches it (work done off the loop names it by ``id``), so its
    /// properties skip the run-time exclusivity check
    /// (`@exclusivity(unchecked)`): with it, the loop's `swift_beginAccess`
    /// calls were a tenth of its instructions per request.
    final class Connection {
        let socket: UnixSocket
        let id: Int
        /// The peer's user (`SO_PEERCRED`, read once when it connected),
        /// whom memory files and the per-user limit are counted against.
        let uid: UInt32
        var number: Int32 { socket.descriptor.rawValue }
        /// Bytes received and not yet answered: a request cut short, or
        /// requests pipelined behind one at work.
        @exclusivity(unchecked) var input: [UInt8] = []
        /// Replies not yet sent, in order (the socket's buffer was full);
        /// ``sent`` bytes of the first are gone.
        @exclusivity(unchecked) var output: [Outgoing] = []
        @exclusivity(unchecked) var sent = 0
        /// A request is at a worker or a download thread: nothing more is
        /// read or answered until its replies are back.
        @exclusivity(unchecked) var atWork = false
        /// Close once ``output`` is sent, reading and answering nothing more
        /// (after a refusal, or a send that failed).
        @exclusivity(unchecked) var closing = false
        /// The peer's end of stream came: close once what came whole is answered.
        @exclusivity(unchecked) var ended = false
        /// The peer hung up while a request was at work; closed when it is back.
        @exclusivity(unchecked) var hungUp = false
        /// Since when it has waited for a request to begin (nothing received,
        /// nothing at work or unsent); `nil` otherwise.
        @exclusivity(unchecked) var idleSince: Double?
        /// When the first request must be whole; `nil` once it was.
        @exclusivity(unchecked) var firstDeadline: Double?
        /// When the request under way must be whole.
        @exclusivity(unchecked) var requestDeadline: Double?
        /// When a client that reads no replies is given up.
        @exclusivity(unchecked) var outputDeadline: Double?
        /// What the loop closes it at, if nothing happens first.
        @exclusivity(unchecked) var deadline = Double.infinity
        /// What epoll watches it for.
        @exclusivity(unchecked) var watching: Epoll.Events = .readable
        /// The memory files handed out on this connection (``MemoryFiles``).
        @exclusivity(unchecked) var given = Set<Int>()
        /// The archives' open descriptions its shared-position requests get.
        @exclusivity(unchecked) var shared = SharedDescriptions()

        init(socket: consuming UnixSocket, id: Int, uid: UInt32, firstDeadline: Double) {
            self.socket = socket
            self.id = id
            self.uid = uid
            self.firstDeadline = firstDeadline
            self.idleSince = Monotonic.now
        }

        /// Whether it may be closed to make room: waiting for a request to
        /// begin, with nothing received, at work or unsent.
        var isIdle: Bool { idleSince != nil && input.isEmpty && !atWork && output.isEmpty && !closing && !ended }
    }

    /// What the bytes at the start of a connection's input hold.
    enum Parsed {
        case request(DaemonRequest)
        case batch(DaemonBatchRequest)
        case download(DaemonDownloadRequest)
        /// A reply to send at once; the stream is still framed and goes on.
        case answer([UInt8])
        /// The connection must end after this failure reply.
        case refused(AssetPackError.Code, String)
    }

    /// The first request of `bytes`, with how many bytes it took in
    /// `consumed`; `nil` while it is not whole. (Not a `(Parsed, Int)?`: an
    /// optional tuple of it is destroyed through its value witnesses, a
    /// few hundred instructions a request.)
    static func parse(_ bytes: UnsafeRawBufferPointer, consumed: inout Int) -> Parsed? {
        guard bytes.count >= DaemonProtocol.headerSize else { return nil }
        let header = DaemonRequest.parseHeader(UnsafeRawBufferPointer(rebasing: bytes[..<DaemonProtocol.headerSize]))
        func body(_ length: Int) -> UnsafeRawBufferPointer? {
            bytes.count - DaemonProtocol.headerSize >= length
                ? UnsafeRawBufferPointer(rebasing: bytes[DaemonProtocol.headerSize..<(DaemonProtocol.headerSize + length)]) : nil
        }
        switch header {
        case .refused(let status, let message):
            consumed = bytes.count
            return .refused(status, message)
        case .body(let length, let packLength, let standalone, let shared, let keeps):
            guard let b = body(length) else { return nil }
            let parsed = DaemonRequest.decode(body: b, packLength: packLength, standalone: standalone, shared: shared, keeps: keeps).map(Parsed.request)
                ?? .answer(DaemonReply.failure(.malformedRequest, message: "the pack ID or path is not valid UTF-8"))
            consumed = DaemonProtocol.headerSize + length
            return parsed
        case .download(let length, let packLength, let wait, let discretionary):
            guard let b = body(length) else { return nil }
            let parsed = DaemonDownloadRequest.decode(body: b, packLength: packLength, wait: wait, discretionary: discretionary)
                .map(Parsed.download)
                ?? .answer(DaemonReply.failure(.malformedRequest, message: "the download request's fields do not fill its body, or are not valid UTF-8"))
            consumed = DaemonProtocol.headerSize + length
            return parsed
        case .batch(let length, let packLength, let standalone, let shared, let keeps):
            guard let b = body(length) else { return nil }
            let parsed: Parsed
            switch DaemonBatchRequest.decode(body: b, packLength: packLength, standalone: standalone, shared: shared, keeps: keeps) {
            case .success(let batch): parsed = .batch(batch)
            case .failure(let refusal): parsed = .answer(refusal.reply)
            }
            consumed = DaemonProtocol.headerSize + length
            return parsed
        }
    }

    // MARK: Answering

    /// The reply to `request`, as the loop can give it without waiting: a
    /// stored member's descriptor (one lookup; with the shared-position
    /// flag the connection's description of its archive, `c.shared`, which
    /// `room` bounds, see ``answerShared(_:shared:room:)``;
    /// else a spare open description of its archive when ``Spares`` has
    /// one, else an `openat`; no `fstat`), or an error of the lookup. `nil`
    /// when making it may block (a memory file), so a worker must. An
    /// archive whose spares run low is added to `refills`, for
    /// ``refill(_:)`` once the reply is sent.
    func answerAtOnce(_ request: DaemonRequest, of c: Connection, room: inout Int, refills: inout [ArchiveID]) -> Outgoing? {
        guard !request.standalone else { return nil }
        if request.shared {
            switch answerShared(request, shared: &c.shared, room: &room) {
            case .reply(let reply): return reply
            case .memoryFile: return nil
            case .unshared: break
            }
        }
        let spares = self.spares
        var low: ArchiveID?
        do throws(StoreError) {
            let found = try manager.store.handout(for: request.path, inPack: request.pack) { archive in
                var refill = false
                let spare = spares.take(archive, refill: &refill)
                if refill { low = archive }
                return spare
            }
            if let low { refills.append(low) }
            switch consume found {
            case .memoryFile: return nil
            case .stored(let h):
                let reply = DaemonReply.Success(offset: h.offset, length: h.length, size: h.archiveSize, source: .archive, crc32: h.crc32)
                return Outgoing(reply, passing: FileDescriptor(adopting: h.take()))
            }
        } catch {
            if let low { refills.append(low) }
            return Outgoing(DaemonReply.failure(for: AssetPackError(error)))
        }
    }

    /// Has a worker open spares of `archives` (``Spares/refill(_:opening:)``).
    func refill(_ archives: [ArchiveID]) {
        let (spares, store) = (self.spares, manager.store)
        workers.submit {
            for archive in archives {
                spares.refill(archive) { try? store.openArchive(archive) ?? nil }
            }
        }
    }

    /// The reply to `request`, whatever it takes (run by a worker).
    func answer(_ request: DaemonRequest, uid: UInt32, given: inout Set<Int>) -> Outgoing {
        do throws(AssetPackError) {
            return success(try descriptor(for: request, uid: uid, given: &given))
        } catch {
            return Outgoing(DaemonReply.failure(for: error))
        }
    }

    /// The success carrying `d` (and its file's size: a sealed memory file
    /// holds exactly the member; an archive's is asked of the file).
    private func success(_ d: consuming MemberDescriptor) -> Outgoing {
        var size = d.length
        if d.source != .memory {
            do { size = try d.descriptor.status().size } catch {
                return Outgoing(DaemonReply.failure(for: AssetPackError(error)))
            }
        }
        let reply = DaemonReply.Success(offset: d.offset, length: d.length, size: size, source: d.source, crc32: d.crc32)
        return Outgoing(reply, passing: FileDescriptor(adopting: d.take()))
    }

    /// The descriptor to send: a stored member's archive as the store
    /// opens it; a memory file from ``MemoryFiles``, shared with every
    /// request for the same member of the same pack version, as a new
    /// open description (its own file position) of the one file. Never a
    /// `dup`: a client must not share a file position with others.
    private func descriptor(for request: DaemonRequest, uid: UInt32, given: inout Set<Int>) throws(AssetPackError) -> MemberDescriptor {
        let store = manager.store
        let options: DescriptorOptions = request.standalone ? [.standalone, .ownOffset] : .ownOffset
        let found: (pack: String, record: MemberRecord)
        do { found = try store.member(at: request.path, inPack: request.pack) } catch { throw AssetPackError(error) }
        guard found.record.method != .stored || request.standalone else {
            do { return try store.descriptor(for: request.path, inPack: request.pack, options: options) } catch { throw AssetPackError(error) }
        }
        let files = memoryFiles
        let key = MemoryFiles.Key(pack: found.pack, path: request.path, standalone: request.standalone, record: found.record)
        let file = try files.file(for: key) { () throws(AssetPackError) -> MemberDescriptor in
            // Refused before inflating, when it could not be handed out anyway.
            if let refusal = files.refusal(adding: Int64(found.record.size), for: uid) { throw refusal }
            do throws(StoreError) { return try store.descriptor(for: request.path, inPack: found.pack, options: options) } catch { throw AssetPackError(error) }
        }
        if let refusal = files.charge(file, to: uid, given: &given) { throw refusal }
        do { return try file.opened() } catch { throw AssetPackError(error) }
    }
}

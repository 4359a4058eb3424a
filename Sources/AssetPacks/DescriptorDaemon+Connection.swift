import Foundation
import AssetSystem
import AssetStore

extension DescriptorDaemon {
    /// One client connection, served on its own thread: reads requests,
    /// answers each in order, and ends at end of stream, on a timeout, or
    /// after a request that cannot be framed.
    final class Connection: Sendable {
        let socket: UnixSocket
        let id: Int
        /// The peer's user (`SO_PEERCRED`), whom memory files are counted against.
        let uid: UInt32
        let daemon: DescriptorDaemon

        init(socket: consuming UnixSocket, id: Int, uid: UInt32, daemon: DescriptorDaemon) {
            self.socket = socket
            self.id = id
            self.uid = uid
            self.daemon = daemon
        }

        /// Serves requests until the connection ends.
        func serve() {
            // The shared memory files handed out on this connection.
            var given = Set<Int>()
            defer {
                daemon.memoryFiles.release(given, of: uid)
                daemon.finished(id)
            }
            var reader = RequestReader(configuration: daemon.configuration) { [daemon, id] idle in daemon.setIdle(id, idle) }
            while let next = reader.next(from: socket) {
                switch next {
                case .request(let request):
                    guard answer(request, given: &given) else { return }
                case .download(let request):
                    guard send(daemon.downloads.answer(request, uid: uid)) else { return }
                case .malformed(let message):
                    // The body was unreadable but the stream is still framed.
                    guard send(DaemonReply.failure(.malformedRequest, message: message)) else { return }
                case .refused(let status, let message):
                    _ = send(DaemonReply.failure(status, message: message))
                    return
                }
            }
        }

        /// Looks the member up and sends its descriptor or the error.
        /// Returns whether the reply was sent.
        private func answer(_ request: DaemonRequest, given: inout Set<Int>) -> Bool {
            // A pack ID no pack can have comes back from the lookup as
            // `invalidPackID` (`StoreError.notInstalled`), as it does in the
            // caller's own process.
            daemon.lookups.wait()
            let result = Result { () throws(AssetPackError) in try descriptor(for: request, given: &given) }
            daemon.lookups.signal()
            switch consume result {
            case .success(let d):
                let size: Int64
                do { size = try d.descriptor.status().size } catch {
                    return send(DaemonReply.failure(for: AssetPackError(error)))
                }
                return send(DaemonReply.success(offset: d.offset, length: d.length, size: size, source: d.source, crc32: d.crc32),
                            passing: d.descriptor.rawValue)
            case .failure(let error):
                return send(DaemonReply.failure(for: error))
            }
        }

        /// The descriptor to send: a stored member's archive as the store
        /// opens it; a memory file from ``MemoryFiles``, shared with every
        /// request for the same member of the same pack version, as a new
        /// open description (its own file position) of the one file. Never a
        /// `dup`: a client must not share a file position with others.
        private func descriptor(for request: DaemonRequest, given: inout Set<Int>) throws(AssetPackError) -> MemberDescriptor {
            let store = daemon.manager.store
            let options: DescriptorOptions = request.standalone ? [.standalone, .ownOffset] : .ownOffset
            let found: (pack: String, record: MemberRecord)
            do { found = try store.member(at: request.path, inPack: request.pack) } catch { throw AssetPackError(error) }
            guard found.record.method != .stored || request.standalone else {
                do { return try store.descriptor(for: request.path, inPack: request.pack, options: options) } catch { throw AssetPackError(error) }
            }
            let files = daemon.memoryFiles
            let uid = self.uid
            let key = MemoryFiles.Key(pack: found.pack, path: request.path, standalone: request.standalone, record: found.record)
            let file = try files.file(for: key) { () throws(AssetPackError) -> MemberDescriptor in
                // Refused before inflating, when it could not be handed out anyway.
                if let refusal = files.refusal(adding: Int64(found.record.size), for: uid) { throw refusal }
                do throws(StoreError) { return try store.descriptor(for: request.path, inPack: found.pack, options: options) } catch { throw AssetPackError(error) }
            }
            if let refusal = files.charge(file, to: uid, given: &given) { throw refusal }
            do { return try file.opened() } catch { throw AssetPackError(error) }
        }

        private func send(_ bytes: [UInt8], passing fd: Int32? = nil) -> Bool {
            do {
                try socket.sendAll(bytes, passing: fd)
                return true
            } catch {
                daemon.configuration.log?("connection \(id): \(error)")
                return false
            }
        }
    }

    /// Reads framed requests from a connection, enforcing the size limit and
    /// the timeouts: ``Configuration/firstRequestTimeout`` from the start
    /// until the first request is whole, ``Configuration/idleTimeout`` while
    /// waiting for a later request to begin, ``Configuration/requestTimeout``
    /// for the rest of a request once it has begun.
    struct RequestReader {
        enum Next {
            case request(DaemonRequest)
            case download(DaemonDownloadRequest)
            /// The body could not be decoded; the connection may go on.
            case malformed(String)
            /// The connection must end after this failure reply.
            case refused(AssetPackError.Code, String)
        }

        private let idleTimeout: Int
        private let requestTimeout: Double
        /// When the first request must be whole; `nil` once it was.
        private var firstDeadline: Double?
        /// Told `true` when the reader waits for a request to begin, `false`
        /// when one has.
        private let idle: (Bool) -> Void
        /// A connection starts idle (``DescriptorDaemon/admit(_:uid:into:limit:perUser:)`` records it so).
        private var isIdle = true
        private var buffer: [UInt8]
        private var start = 0
        private var end = 0
        /// When the request under way must be complete.
        private var deadline: Double?
        /// The socket's current receive timeout, in milliseconds.
        private var timeoutSet = -1

        init(configuration: Configuration, idle: @escaping (Bool) -> Void = { _ in }) {
            self.idleTimeout = max(1, Int(configuration.idleTimeout * 1000))
            self.requestTimeout = configuration.requestTimeout
            self.firstDeadline = Monotonic.now + configuration.firstRequestTimeout
            self.idle = idle
            self.buffer = [UInt8](repeating: 0, count: DaemonProtocol.headerSize + DaemonProtocol.maximumRequestBody)
        }

        /// The next request, or `nil` when the connection has ended (end of
        /// stream, timeout, or a receive error).
        mutating func next(from socket: borrowing UnixSocket) -> Next? {
            while true {
                let available = end - start
                if available >= DaemonProtocol.headerSize {
                    let header = buffer.withUnsafeBytes { DaemonRequest.parseHeader(UnsafeRawBufferPointer(rebasing: $0[start..<(start + DaemonProtocol.headerSize)])) }
                    switch header {
                    case .refused(let status, let message):
                        return .refused(status, message)
                    case .body(let length, let packLength, let standalone):
                        let next = take(length, { body in
                            DaemonRequest.decode(body: body, packLength: packLength, standalone: standalone).map(Next.request)
                                ?? .malformed("the pack ID or path is not valid UTF-8")
                        })
                        if let next { return next }
                    case .download(let length, let packLength, let wait, let discretionary):
                        let next = take(length, { body in
                            DaemonDownloadRequest.decode(body: body, packLength: packLength, wait: wait, discretionary: discretionary)
                                .map(Next.download)
                                ?? .malformed("the download request's fields do not fill its body, or are not valid UTF-8")
                        })
                        if let next { return next }
                    }
                }
                switch receive(from: socket) {
                case .data: continue
                case .ended: return nil
                case .timedOut:
                    guard end > start else { return nil }
                    return .refused(.malformedRequest, "the request did not arrive whole in time")
                case .descriptor:
                    return .refused(.malformedRequest, "requests carry no descriptors")
                }
            }
        }

        /// The request of the `length`-byte body after the buffered header,
        /// as `decode` reads it, once it is all buffered; `nil` before.
        private mutating func take(_ length: Int, _ decode: (UnsafeRawBufferPointer) -> Next) -> Next? {
            let total = DaemonProtocol.headerSize + length
            guard end - start >= total else { return nil }
            let bodyStart = start + DaemonProtocol.headerSize
            let next = buffer.withUnsafeBytes { decode(UnsafeRawBufferPointer(rebasing: $0[bodyStart..<(start + total)])) }
            start += total
            deadline = nil
            firstDeadline = nil
            return next
        }

        private enum Received { case data, ended, timedOut, descriptor }

        /// Receives more bytes after the ones buffered.
        private mutating func receive(from socket: borrowing UnixSocket) -> Received {
            if start > 0 {
                if start < end { buffer.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<end])) } }
                end -= start
                start = 0
            }
            let now = Monotonic.now
            if end == 0 {
                if !isIdle { isIdle = true; idle(true) }
                let milliseconds: Int
                if let first = firstDeadline {
                    if first <= now { return .timedOut }
                    milliseconds = min(idleTimeout, max(1, Int(((first - now) * 1000).rounded(.up))))
                } else {
                    milliseconds = idleTimeout
                }
                // Wait for a request to begin, and mark the connection busy
                // before reading a byte of it. The daemon evicts an idle
                // connection only when nothing it sent waits to be read
                // (``DescriptorDaemon/admit(_:uid:into:limit:perUser:)``):
                // had the bytes been read first, a request under way would
                // look idle until `idle(false)`, and could be evicted.
                guard let ready = try? Poll.readable([socket.descriptor.rawValue], timeout: Double(milliseconds) / 1000) else { return .ended }
                if ready.isEmpty { return .timedOut }
                isIdle = false
                idle(false)
            } else {
                let limit = min(deadline ?? (now + requestTimeout), firstDeadline ?? .infinity)
                deadline = limit
                if limit <= now { return .timedOut }
                let milliseconds = max(1, Int(((limit - now) * 1000).rounded(.up)))
                if milliseconds != timeoutSet {
                    guard (try? socket.setTimeouts(milliseconds: milliseconds)) != nil else { return .ended }
                    timeoutSet = milliseconds
                }
            }
            let from = end
            do throws(Errno) {
                // A descriptor a client sent is closed at once (it leaves scope here).
                let (count, carriedDescriptor) = try buffer.withUnsafeMutableBytes { b in
                    Result { () throws(Errno) -> (Int, Bool) in
                        let received = try socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: b[from...]))
                        return (received.count, received.descriptor != nil)
                    }
                }.get()
                if carriedDescriptor { return .descriptor }
                if count == 0 { return .ended }
                end += count
                return .data
            } catch {
                return error == .wouldBlock ? .timedOut : .ended
            }
        }
    }
}

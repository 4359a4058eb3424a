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
        let daemon: DescriptorDaemon

        init(socket: consuming UnixSocket, id: Int, daemon: DescriptorDaemon) {
            self.socket = socket
            self.id = id
            self.daemon = daemon
        }

        /// Serves requests until the connection ends.
        func serve() {
            defer { daemon.finished(id) }
            var reader = RequestReader(configuration: daemon.configuration)
            while let next = reader.next(from: socket) {
                switch next {
                case .request(let request):
                    guard answer(request) else { return }
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
        private func answer(_ request: DaemonRequest) -> Bool {
            let result: Result<MemberDescriptor, StoreError>
            if let pack = request.pack, case .failure(let error) = Result(catching: { () throws(StoreError) in try PackID.validate(pack) }) {
                result = .failure(error)
            } else {
                daemon.lookups.wait()
                result = Result { () throws(StoreError) in
                    try daemon.manager.store.descriptor(for: request.path, inPack: request.pack,
                                                  options: request.standalone ? .standalone : [])
                }
                daemon.lookups.signal()
            }
            switch consume result {
            case .success(let d):
                let size: Int64
                do { size = try d.descriptor.status().size } catch {
                    return send(DaemonReply.failure(for: AssetPackError(error)))
                }
                return send(DaemonReply.success(offset: d.offset, length: d.length, size: size, source: d.source, crc32: d.crc32),
                            passing: d.descriptor.rawValue)
            case .failure(let error):
                return send(DaemonReply.failure(for: AssetPackError(error)))
            }
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
    /// the timeouts: ``Configuration/idleTimeout`` while waiting for a
    /// request to begin, ``Configuration/requestTimeout`` for the rest of it
    /// once it has.
    struct RequestReader {
        enum Next {
            case request(DaemonRequest)
            /// The body could not be decoded; the connection may go on.
            case malformed(String)
            /// The connection must end after this failure reply.
            case refused(AssetPackError.Code, String)
        }

        private let idleTimeout: Int
        private let requestTimeout: Double
        private var buffer: [UInt8]
        private var start = 0
        private var end = 0
        /// When the request under way must be complete.
        private var deadline: Double?
        /// The socket's current receive timeout, in milliseconds.
        private var timeoutSet = -1

        init(configuration: Configuration) {
            self.idleTimeout = max(1, Int(configuration.idleTimeout * 1000))
            self.requestTimeout = configuration.requestTimeout
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
                        let total = DaemonProtocol.headerSize + length
                        if available >= total {
                            let bodyStart = start + DaemonProtocol.headerSize
                            let request = buffer.withUnsafeBytes {
                                DaemonRequest.decode(body: UnsafeRawBufferPointer(rebasing: $0[bodyStart..<(start + total)]),
                                                     packLength: packLength, standalone: standalone)
                            }
                            start += total
                            deadline = nil
                            guard let request else { return .malformed("the pack ID or path is not valid UTF-8") }
                            return .request(request)
                        }
                    }
                }
                switch receive(from: socket) {
                case .data: continue
                case .ended: return nil
                case .timedOut:
                    guard end > start else { return nil }
                    return .refused(.malformedRequest, "the request did not arrive whole within \(requestTimeout) s")
                case .descriptor:
                    return .refused(.malformedRequest, "requests carry no descriptors")
                }
            }
        }

        private enum Received { case data, ended, timedOut, descriptor }

        /// Receives more bytes after the ones buffered.
        private mutating func receive(from socket: borrowing UnixSocket) -> Received {
            if start > 0 {
                if start < end { buffer.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<end])) } }
                end -= start
                start = 0
            }
            let milliseconds: Int
            if end == 0 {
                milliseconds = idleTimeout
            } else {
                let limit = deadline ?? (Monotonic.now + requestTimeout)
                deadline = limit
                milliseconds = max(1, Int(((limit - Monotonic.now) * 1000).rounded(.up)))
                if limit <= Monotonic.now { return .timedOut }
            }
            if milliseconds != timeoutSet {
                guard (try? socket.setTimeouts(milliseconds: milliseconds)) != nil else { return .ended }
                timeoutSet = milliseconds
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

internal import CCurl
import AssetSystem

/// A blocking HTTP client over one libcurl easy handle: GETs whose bodies go
/// to a callback as they arrive. Requests of one client run one at a time;
/// every client's requests run through the process's one multi handle
/// (``TransferLoop``), so concurrent downloads share one event loop and one
/// connection cache: a request reuses an idle connection any client left.
/// The body, header and progress callbacks run on the loop's thread while
/// the caller waits.
///
/// HTTP/1.1 and HTTP/2 (ALPN over TLS); TLS with the system's certificate
/// authorities plus ``Configuration/caFile``; proxies from `http_proxy`,
/// `https_proxy`, `no_proxy` (libcurl's default); redirects followed up to
/// ``Configuration/maximumRedirects``. A response that delivers no byte for
/// ``Configuration/stallTimeout`` seconds ends the request as
/// ``Failure/Kind/timedOut`` (retried: a stalled connection); one that
/// delivers less than ``Configuration/lowSpeedLimit`` bytes a second for
/// ``Configuration/lowSpeedTime`` seconds as ``Failure/Kind/tooSlow``; one
/// still running at the client's ``deadline`` as
/// ``Failure/Kind/deadlineExceeded``.
///
/// The CA file (``Configuration/caFile``) is read when the client is made,
/// on the caller's thread, and handed to libcurl as bytes
/// (`CURLOPT_CAINFO_BLOB`): libcurl never opens it on the transfer thread,
/// which every transfer of the process shares (``TransferLoop``). It must
/// be a regular file — opened with `O_NONBLOCK` and checked with `fstat`
/// before a byte is read, so a FIFO or a device is refused at once instead
/// of blocking — of at most ``maximumCAFileSize`` bytes.
public final class HTTPClient {
    public struct Configuration: Sendable {
        /// A PEM file of certificate authorities trusted besides the system's.
        public var caFile: String?
        public var maximumRedirects = 10
        /// Seconds to wait for a connection.
        public var connectTimeout = 30
        /// Seconds without a byte after which a response counts as stalled.
        public var stallTimeout = 30.0
        /// Bytes a second below which a transfer counts as too slow
        /// (`CURLOPT_LOW_SPEED_LIMIT`; 0: never)…
        public var lowSpeedLimit = 1024
        /// …when it stays below for this many seconds (`CURLOPT_LOW_SPEED_TIME`).
        public var lowSpeedTime = 60
        /// The most bytes a second to receive (`CURLOPT_MAX_RECV_SPEED_LARGE`); `nil`: no cap.
        public var maximumReceiveSpeed: Int64?
        public var userAgent = "assetpacks/1"

        public init() {}

        /// The low-speed limit in force: ``lowSpeedLimit``, but at most half
        /// of a receive cap, so that a capped transfer is never too slow by
        /// the cap alone.
        public var effectiveLowSpeedLimit: Int {
            guard let cap = maximumReceiveSpeed else { return lowSpeedLimit }
            return Int(min(Int64(lowSpeedLimit), cap / 2))
        }
    }

    /// An instant by which a client's requests must be done: the total
    /// deadline of a download (all its requests and retries) or of a
    /// catalog fetch.
    public struct Deadline: Sendable, Equatable {
        /// `Monotonic.nanoseconds` at the deadline.
        public var instant: UInt64
        /// The seconds it was set to, for messages.
        public var seconds: Double

        /// `seconds` from now.
        public init(seconds: Double) {
            self.seconds = seconds
            instant = Monotonic.nanoseconds + UInt64(max(seconds, 0) * 1e9)
        }

        /// Whether it has passed.
        public var hasPassed: Bool { Monotonic.nanoseconds >= instant }
    }

    /// The head of a response: its status and the headers a download needs.
    public struct Head: Sendable, Equatable {
        public var status: Int
        /// The `ETag`, when it is an entity-tag (``HTTPValidator/isEntityTag(_:)``);
        /// one that is not (a control character, no quotes) is left out.
        public var etag: String?
        /// `Last-Modified` and `Date`, as sent, when they are HTTP-dates.
        public var lastModified: String? = nil
        public var date: String? = nil
        /// The first byte of a `206`'s `Content-Range: bytes FIRST-LAST/TOTAL`.
        public var rangeStart: UInt64?
        /// Its last byte and its total (`nil` for `*` or when absent).
        public var rangeEnd: UInt64? = nil
        public var rangeTotal: UInt64? = nil

        /// What a resume of this response may send in `If-Range`
        /// (``HTTPValidator/rangeValidator(etag:lastModified:date:)``): the
        /// ETag when strong, else a strong `Last-Modified`, else `nil`.
        public var rangeValidator: String? {
            HTTPValidator.rangeValidator(etag: etag, lastModified: lastModified, date: date)
        }

        /// Whether this is a `206` for exactly the bytes `first...last` of a
        /// representation of `total` bytes (`Content-Range: bytes FIRST-LAST/TOTAL`).
        public func isPartial(first: UInt64, last: UInt64, total: UInt64) -> Bool {
            status == 206 && rangeStart == first && rangeEnd == last && rangeTotal == total
        }
    }

    /// Why a request did not complete.
    public struct Failure: Error, Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            /// No connection could be made (refused, unreachable, DNS).
            case connectionFailed
            /// The connection broke, or the server sent nothing or too little.
            case connectionLost
            /// The connect timeout ran out, or the response stalled.
            case timedOut
            /// Less than the low-speed limit arrived for its time (``Failure/deadline`` says which).
            case tooSlow
            /// The client's ``HTTPClient/deadline`` passed (``Failure/deadline``).
            case deadlineExceeded
            /// The CA file cannot be used (``Failure/caFileProblem``).
            case badCAFile
            /// The server answered with an error status (`Failure/status`).
            case httpStatus
            /// The body callback stopped the transfer.
            case aborted
            /// Anything else: TLS, a bad URL, too many redirects, ….
            case other
        }

        public var kind: Kind
        /// The HTTP status, when a response arrived.
        public var status: Int?
        /// libcurl's message.
        public var message: String
        /// For ``Kind/tooSlow`` and ``Kind/deadlineExceeded``: the deadline that ran out.
        public var deadline: DeliveryError.Deadline? = nil
        /// For ``Kind/badCAFile``: what is wrong with it.
        public var caFileProblem: DeliveryError.CAFileProblem? = nil

        public init(kind: Kind, status: Int?, message: String, deadline: DeliveryError.Deadline? = nil,
                    caFileProblem: DeliveryError.CAFileProblem? = nil) {
            self.kind = kind
            self.status = status
            self.message = message
            self.deadline = deadline
            self.caFileProblem = caFileProblem
        }

        /// Whether trying again may succeed: no connection, a broken or
        /// stalled one, `408`, `429` and `5xx`. A transfer that was too
        /// slow or past its deadline is not retried: the server answers,
        /// slowly, and the partial file stays for a later resume.
        public var isTransient: Bool {
            switch kind {
            case .connectionFailed, .connectionLost, .timedOut: return true
            case .httpStatus: return status.map { $0 == 408 || $0 == 429 || (500...599).contains($0) } ?? false
            case .aborted, .other, .tooSlow, .deadlineExceeded, .badCAFile: return false
            }
        }
    }

    public let configuration: Configuration
    /// When set, every request must be done by then: one that would start
    /// after it fails at once, and one still running at it is stopped
    /// (`CURLOPT_TIMEOUT_MS`), both as ``Failure/Kind/deadlineExceeded``.
    public var deadline: Deadline?
    private let handle: UnsafeMutableRawPointer
    /// The CA file's bytes, read once when the client was made.
    private let caBundle: [UInt8]?

    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// A client with `configuration`.
    ///
    /// - Throws: `Failure` of kind `.badCAFile` when the CA file cannot be
    ///   used (not a regular file, too large, unreadable), `.other` when
    ///   libcurl cannot make a handle.
    public init(configuration: Configuration = Configuration()) throws(Failure) {
        caBundle = try configuration.caFile.map { (path) throws(Failure) in try Self.readCAFile(path) }
        guard Self.globalInit == CURLE_OK, let handle = curl_easy_init() else {
            throw Failure(kind: .other, status: nil, message: "libcurl could not be initialised")
        }
        self.configuration = configuration
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// GETs `url`, handing the final response's head and then each piece
    /// of its body to `body`, which returns `false` to stop the transfer.
    ///
    /// - Parameters:
    ///   - rangeStart: sends `Range: bytes=N-` (when above 0).
    ///   - rangeEnd: with it, sends the closed range `Range: bytes=N-END`
    ///     instead (also from 0); the caller checks the `206`'s
    ///     `Content-Range` (``Head/isPartial(first:last:total:)``).
    ///   - ifRange: sends `If-Range` with this validator (with a range
    ///     only); the caller passes a strong one (``HTTPValidator``).
    ///   - ifNoneMatch: sends `If-None-Match` with this validator; a `304`
    ///     then returns with no body.
    /// - Returns: the final response's head (a `2xx` or `304`).
    /// - Throws: `Failure`: an error status (`4xx`/`5xx`) is `.httpStatus`.
    @discardableResult
    public func get(
        _ url: String, rangeStart: UInt64 = 0, rangeEnd: UInt64? = nil, ifRange: String? = nil, ifNoneMatch: String? = nil,
        body: (Head, UnsafeRawBufferPointer) -> Bool
    ) throws(Failure) -> Head {
        var headers: UnsafeMutablePointer<curl_slist>?
        if rangeStart > 0 || rangeEnd != nil {
            headers = curl_slist_append(headers, "Range: bytes=\(rangeStart)-" + (rangeEnd.map { String($0) } ?? ""))
            if let ifRange { headers = curl_slist_append(headers, "If-Range: \(ifRange)") }
        }
        if let ifNoneMatch { headers = curl_slist_append(headers, "If-None-Match: \(ifNoneMatch)") }
        defer { curl_slist_free_all(headers) }
        return try withoutActuallyEscaping(body) { (body) throws(Failure) -> Head in
            let transfer = Transfer(handle: handle, stallTimeout: configuration.stallTimeout, body: body)
            return try withExtendedLifetime(transfer) { () throws(Failure) -> Head in
                if let deadline, deadline.hasPassed { throw deadlineFailure(deadline, status: nil) }
                try configure(url: url, headers: headers, transfer: Unmanaged.passUnretained(transfer).toOpaque())
                var code = TransferLoop.shared.perform(handle)
                if transfer.stalled { code = CURLE_OPERATION_TIMEDOUT }
                var status = 0
                _ = cas_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
                guard code == CURLE_OK else {
                    if code == CURLE_OPERATION_TIMEDOUT && !transfer.stalled {
                        if let deadline, deadline.hasPassed { throw deadlineFailure(deadline, status: status == 0 ? nil : status) }
                        // Connected, so not the connect timeout: the low-speed limit (when there is one).
                        var connected: curl_off_t = 0
                        _ = cas_curl_getinfo_offset(handle, CURLINFO_CONNECT_TIME_T, &connected)
                        if connected > 0 && configuration.effectiveLowSpeedLimit > 0 { throw tooSlowFailure(status: status == 0 ? nil : status) }
                    }
                    throw Failure(kind: Self.kind(of: code), status: status == 0 ? nil : status,
                                  message: String(cString: curl_easy_strerror(code)))
                }
                var head = transfer.head
                head.status = status
                return head
            }
        }
    }

    private func configure(url: String, headers: UnsafeMutablePointer<curl_slist>?, transfer: UnsafeMutableRawPointer) throws(Failure) {
        let c = configuration
        var codes: [CURLcode] = [
            cas_curl_setopt_string(handle, CURLOPT_URL, url),
            cas_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, headers.map { UnsafeMutableRawPointer($0) }),
            cas_curl_setopt_long(handle, CURLOPT_HTTPGET, 1),
            cas_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1),
            cas_curl_setopt_long(handle, CURLOPT_MAXREDIRS, c.maximumRedirects),
            cas_curl_setopt_long(handle, CURLOPT_FAILONERROR, 1),
            cas_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            cas_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)),
            cas_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, c.connectTimeout),
            cas_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, c.effectiveLowSpeedLimit),
            cas_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, c.lowSpeedTime),
            cas_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, deadline.map { Self.milliseconds(until: $0) } ?? 0),
            cas_curl_setopt_offset(handle, CURLOPT_MAX_RECV_SPEED_LARGE, Int(c.maximumReceiveSpeed ?? 0)),
            cas_curl_setopt_string(handle, CURLOPT_USERAGENT, c.userAgent),
            cas_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            cas_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"),
            // Bigger receive chunks than libcurl's 16 KiB: fewer write calls and hash updates per GiB.
            cas_curl_setopt_long(handle, CURLOPT_BUFFERSIZE, Self.bufferSize(cap: c.maximumReceiveSpeed)),
            cas_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION, writeBody),
            cas_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, transfer),
            cas_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION, readHeader),
            cas_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, transfer),
            cas_curl_setopt_progress(handle, watchProgress),
            cas_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, transfer),
            cas_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
        ]
        if let caBundle {
            // The blob replaces the default bundle (CURLOPT_CAINFO); the
            // system's directory of hashed certificates (CAPATH) keeps
            // the system's authorities trusted beside it.
            codes.append(caBundle.withUnsafeBytes { cas_curl_setopt_blob(handle, CURLOPT_CAINFO_BLOB, $0.baseAddress, $0.count) })
            codes.append(cas_curl_setopt_string(handle, CURLOPT_CAPATH, "/etc/ssl/certs"))
        }
        if let bad = codes.first(where: { $0 != CURLE_OK }) {
            throw Failure(kind: .other, status: nil, message: String(cString: curl_easy_strerror(bad)))
        }
    }

    /// The receive buffer: 512 KiB, or under a receive cap a thousandth of
    /// the cap (1 KiB at least). libcurl (7.88) reads a readable socket up to
    /// a hundred buffers in a row before it looks at the cap again, so with
    /// big buffers on a fast link a capped transfer ran at full speed; this
    /// keeps each burst to a tenth of a second's worth.
    static func bufferSize(cap: Int64?) -> Int {
        guard let cap else { return 512 << 10 }
        return Int(min(512 << 10, max(1 << 10, cap / 1000)))
    }

    private static func kind(of code: CURLcode) -> Failure.Kind {
        switch code {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .connectionFailed
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .connectionLost
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        case CURLE_HTTP_RETURNED_ERROR: return .httpStatus
        case CURLE_WRITE_ERROR, CURLE_ABORTED_BY_CALLBACK: return .aborted
        default: return .other
        }
    }
}

/// One request's state, reached from libcurl's callbacks through their
/// context pointer; it lives for the duration of `curl_easy_perform`.
private final class Transfer {
    let handle: UnsafeMutableRawPointer
    let body: (HTTPClient.Head, UnsafeRawBufferPointer) -> Bool
    var head = HTTPClient.Head(status: 0, etag: nil, rangeStart: nil)
    let stallNanoseconds: UInt64
    /// When the last byte (of a header or the body) arrived, or the transfer began.
    var lastByte = Monotonic.nanoseconds
    var stalled = false

    init(handle: UnsafeMutableRawPointer, stallTimeout: Double, body: @escaping (HTTPClient.Head, UnsafeRawBufferPointer) -> Bool) {
        self.handle = handle
        self.stallNanoseconds = UInt64(max(stallTimeout, 0.001) * 1e9)
        self.body = body
    }

    /// Whether the transfer has gone `stallTimeout` without a byte.
    func checkStall() -> Bool {
        if Monotonic.nanoseconds - lastByte > stallNanoseconds { stalled = true }
        return stalled
    }

    /// One header line; a status line starts a new response (a redirect's
    /// or an interim one's headers are forgotten).
    func header(_ line: String) {
        lastByte = Monotonic.nanoseconds
        if line.hasPrefix("HTTP/") {
            head = HTTPClient.Head(status: 0, etag: nil, rangeStart: nil)
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingSpaces
        switch name {
        case "etag": head.etag = HTTPValidator.isEntityTag(value) ? value : nil
        case "last-modified": head.lastModified = HTTPDate.parse(value) != nil ? value : nil
        case "date": head.date = HTTPDate.parse(value) != nil ? value : nil
        case "content-range":
            // bytes FIRST-LAST/TOTAL
            guard value.lowercased().hasPrefix("bytes ") else { return }
            let spec = value.dropFirst(6)
            head.rangeStart = UInt64(spec.prefix { $0 != "-" })
            let afterDash = spec.drop { $0 != "-" }.dropFirst()
            head.rangeEnd = UInt64(afterDash.prefix { $0 != "/" })
            head.rangeTotal = UInt64(afterDash.drop { $0 != "/" }.dropFirst())
        default: break
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        lastByte = Monotonic.nanoseconds
        var status = 0
        _ = cas_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        head.status = status
        return body(head, bytes)
    }
}

private func writeBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    return transfer.write(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private func watchProgress(_ context: UnsafeMutableRawPointer?, _: curl_off_t, _: curl_off_t, _: curl_off_t, _: curl_off_t) -> Int32 {
    guard let context else { return 0 }
    return Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue().checkStall() ? 1 : 0
}

private func readHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let context, let data else { return length }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    transfer.header(String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self))
    return length
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs, CR and LF.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        return String(self.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}

internal import AssetJSON

/// Where one download of a pack stands, as the process running it writes
/// it to `<container>/downloads/<pack>.status`: one JSON object on one
/// line, replaced whole (written beside and renamed over), so that any
/// reader — another process, a shell script, a C program, a monitoring
/// agent — reads one state, never a mixture.
///
/// ```json
/// {"format":1,"pack":"Base","download":"3f9c0d2e5a7b1c44","state":"downloading",
///  "bytes":1048576,"total":67108864,"rate":52428800,"version":"2",
///  "url":"http://cdn.example/Base-0123456789ab.zip","pid":4242,
///  "started":1796124000123456,"updated":1796124001123456,"mode":"full","fetched":1048576,"reused":0}
/// ```
///
/// `mode` is `full` (the whole file from the server) or `delta` (members
/// copied from installed archives, `reused` bytes, the rest `fetched` in
/// ranges). `error`, `code` and `reason` appear when they have a value. Times are
/// microseconds since 1970 (UTC). Readers ignore members they do not know;
/// a new member never changes the meaning of an old one.
public struct DownloadStatus: Sendable, Hashable {
    public static let format = 1

    public enum State: String, Sendable, CaseIterable {
        /// The download has the pack's lock and is about to ask for the first byte.
        case began
        /// Bytes are arriving (or the next attempt is being waited for).
        case downloading
        /// Stopped by a pause request; the partial file stays.
        case paused
        /// A discretionary download waiting for better conditions (``DownloadStatus/reason``).
        case deferred
        /// Every byte arrived and matched; the install is under way.
        case installing
        /// Installed.
        case finished
        /// Ended by an error (``DownloadStatus/error``, ``DownloadStatus/code``).
        case failed
        /// Ended by a cancel request; nothing was installed and the partial file is gone.
        case cancelled

        /// Whether the download is over.
        public var isFinal: Bool { self == .finished || self == .failed || self == .cancelled }
    }

    /// How the file's bytes come: all from the server, or partly copied from installed archives.
    public enum Mode: String, Sendable, CaseIterable {
        case full, delta
    }

    public var pack: String
    /// 16 hex digits naming this download: pause, resume and cancel requests
    /// name it, so that a request meant for one download never reaches the next.
    public var download: String
    public var state: State
    /// Bytes on disk so far, and the catalog's size.
    public var bytes: UInt64
    public var total: UInt64
    /// Bytes a second over the last seconds (0 when unknown).
    public var rate: UInt64
    /// The catalog's version of the pack.
    public var version: String
    public var url: String
    /// The process running the download.
    public var pid: Int32
    /// When the download began, and when this record was written (µs since 1970).
    public var started: UInt64
    public var updated: UInt64
    /// Why the download is deferred or paused, for people.
    public var reason: String?
    /// The error's message, for a failed download.
    public var error: String?
    /// The error's number (`AssetPackError.Code`), for a failed download.
    public var code: Int?
    /// `full` or `delta`; a delta that fell back says why in `reason` and goes on `full`.
    public var mode: Mode
    /// Bytes received from the server for the file so far (a delta's piece
    /// map, glue and ranges; a range may re-send glue bytes already in place),
    /// and bytes copied from installed archives.
    public var fetched: UInt64
    public var reused: UInt64

    public init(pack: String, download: String, state: State, bytes: UInt64, total: UInt64, rate: UInt64 = 0,
                version: String, url: String, pid: Int32, started: UInt64, updated: UInt64,
                reason: String? = nil, error: String? = nil, code: Int? = nil,
                mode: Mode = .full, fetched: UInt64 = 0, reused: UInt64 = 0) {
        self.pack = pack
        self.download = download
        self.state = state
        self.bytes = bytes
        self.total = total
        self.rate = rate
        self.version = version
        self.url = url
        self.pid = pid
        self.started = started
        self.updated = updated
        self.reason = reason
        self.error = error
        self.code = code
        self.mode = mode
        self.fetched = fetched
        self.reused = reused
    }

    /// The record as written: one line of JSON with its newline; with
    /// `running`, a last member `"running"` (what readers add, never the file).
    public func encoded(running: Bool? = nil) -> [UInt8] {
        var members = json.members.map { ($0.key, $0.value) }
        if let running { members.append(("running", .bool(running))) }
        return JSONValue.object(JSONObject(uniqueKeysWithValues: members)).encoded() + [0x0a]
    }

    /// The record as a JSON object, members in the documented order.
    var json: JSONObject {
        var members: [(String, JSONValue)] = [
            ("format", .number(JSONNumber(Int64(Self.format)))),
            ("pack", .string(pack)), ("download", .string(download)), ("state", .string(state.rawValue)),
            ("bytes", .number(JSONNumber(bytes))), ("total", .number(JSONNumber(total))),
            ("rate", .number(JSONNumber(rate))), ("version", .string(version)), ("url", .string(url)),
            ("pid", .number(JSONNumber(Int64(pid)))),
            ("started", .number(JSONNumber(started))), ("updated", .number(JSONNumber(updated))),
            ("mode", .string(mode.rawValue)), ("fetched", .number(JSONNumber(fetched))), ("reused", .number(JSONNumber(reused))),
        ]
        if let reason { members.append(("reason", .string(reason))) }
        if let error { members.append(("error", .string(error))) }
        if let code { members.append(("code", .number(JSONNumber(Int64(code))))) }
        return JSONObject(uniqueKeysWithValues: members)
    }

    /// The record in `bytes`, or `nil` when they are not one (a record of a
    /// later format, a torn or foreign file).
    public init?(parsing bytes: [UInt8]) {
        guard let value = try? JSONValue.parse(bytes), let o = value.objectValue,
              o["format"]?.numberValue?.int64Value == Int64(Self.format),
              let pack = o["pack"]?.stringValue, let download = o["download"]?.stringValue,
              let state = o["state"]?.stringValue.flatMap(State.init(rawValue:)),
              let bytes = o["bytes"]?.numberValue?.uint64Value, let total = o["total"]?.numberValue?.uint64Value,
              let version = o["version"]?.stringValue, let url = o["url"]?.stringValue,
              let pid = o["pid"]?.numberValue?.int64Value.flatMap(Int32.init(exactly:)),
              let started = o["started"]?.numberValue?.uint64Value, let updated = o["updated"]?.numberValue?.uint64Value
        else { return nil }
        self.init(pack: pack, download: download, state: state, bytes: bytes, total: total,
                  rate: o["rate"]?.numberValue?.uint64Value ?? 0, version: version, url: url, pid: pid,
                  started: started, updated: updated, reason: o["reason"]?.stringValue, error: o["error"]?.stringValue,
                  code: o["code"]?.numberValue?.int64Value.flatMap(Int.init(exactly:)),
                  // A record written before delta downloads: the whole file, fetched.
                  mode: o["mode"]?.stringValue.flatMap(Mode.init(rawValue:)) ?? .full,
                  fetched: o["fetched"]?.numberValue?.uint64Value ?? bytes, reused: o["reused"]?.numberValue?.uint64Value ?? 0)
    }
}

/// A request to the process running a download, written by anyone to
/// `<container>/downloads/<pack>.control` (one JSON line, replaced whole):
/// `{"download":"3f9c0d2e5a7b1c44","request":"pause"}`. The runner looks at
/// it every 50 ms at most, while bytes arrive and while it waits; a request
/// naming another download is ignored. Resuming is writing `resume` (or
/// removing the file).
public struct DownloadControl: Sendable, Hashable {
    public enum Request: String, Sendable, CaseIterable {
        case pause, resume, cancel
    }

    public var download: String
    public var request: Request

    public init(download: String, request: Request) {
        self.download = download
        self.request = request
    }

    public func encoded() -> [UInt8] {
        JSONValue.object(["download": .string(download), "request": .string(request.rawValue)]).encoded() + [0x0a]
    }

    public init?(parsing bytes: [UInt8]) {
        guard let o = (try? JSONValue.parse(bytes))?.objectValue, let download = o["download"]?.stringValue,
              let request = o["request"]?.stringValue.flatMap(Request.init(rawValue:)) else { return nil }
        self.init(download: download, request: request)
    }
}

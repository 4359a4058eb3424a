import AssetServer
#if canImport(Glibc)
import Glibc
#endif

/// `assetpack serve`: hosts a directory over HTTP/1.1 for development, with
/// fault injection for testing downloaders.
enum ServeCommand: Command {
    static let name = "serve"
    static let summary = "Serve a directory over HTTP/1.1 on loopback, for development, with fault injection."
    static let discussion = """
        Serves the files under <dir> (a published catalog directory, or any directory) to GET and HEAD, with \
        ranges, ETag and Last-Modified, until SIGINT or SIGTERM. Once listening it prints its URL, \
        http://HOST:PORT/, as the one line on standard output; the access log goes to standard error. No \
        path leaves <dir>, symlinks out of it included. The fault options make it misbehave on purpose, \
        reproducibly for a given --fault-seed. Not for production: use nginx or a CDN.
        """

    static let directory = Positional("dir", help: "The directory to serve.", completion: .directory)
    static let bind = Option.value(
        "bind", placeholder: "address",
        help: "The numeric IPv4 or IPv6 address to listen on (default: 127.0.0.1; ::1 for IPv6 loopback).")
    static let port = Option.value("port", placeholder: "n", help: "The TCP port; 0 picks a free one (default: 8080).")
    static let maxConnections = Option.value(
        "max-connections", placeholder: "n",
        help: "Connections served at once; past it the one waiting longest for a request is closed for a new one, or, with every one busy answering, the new one is answered 503 and closed (default: 512).")
    static let requestTimeout = Option.value(
        "request-timeout", placeholder: "seconds",
        help: "Close a connection whose request head has not arrived whole this long after it began (default: 10).")
    static let idleTimeout = Option.value(
        "idle-timeout", placeholder: "seconds",
        help: "Close a kept-alive connection idle this long, or a response the client stopped reading (default: 60).")
    static let throttle = Option.value(
        "throttle", placeholder: "bytes-per-second",
        help: "Send response bodies at most this fast, per connection (suffix K, M or G).")
    static let dropAfter = Option.value(
        "drop-after", placeholder: "bytes",
        help: "Close the connection after this many bytes of a response body.")
    static let failRate = Option.value(
        "fail-rate", placeholder: "p",
        help: "Answer this fraction (0 to 1) of requests 500 or 503 (with Retry-After), drawn from the seeded generator.")
    static let stallAfter = Option.value(
        "stall-after", placeholder: "bytes",
        help: "Stop sending after this many bytes of a response body, keeping the connection open.")
    static let ignoreRange = Option.flag("ignore-range", help: "Ignore Range: always answer 200 with the whole file.")
    static let faultSeed = Option.value(
        "fault-seed", placeholder: "n",
        help: "Seed of the fault generator, so a run can be replayed (default: random; the log prints it).")
    static let faultPath = Option.value(
        "fault-path", placeholder: "glob",
        help: "Inject faults only into requests whose path matches this pattern, such as '/packs/*.zip' (default: all).")

    static let positionals = [directory]
    static let options = [bind, port, maxConnections, requestTimeout, idleTimeout,
                          throttle, dropAfter, failRate, stallAfter, ignoreRange, faultSeed, faultPath]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        var configuration = try configuration(arguments)
        let dir = arguments.positional(directory)
        configuration.log = { line in Output.error(line) }
        let server: HTTPServer
        do { server = try HTTPServer(directory: dir, configuration: configuration) } catch {
            switch error {
            case .invalidAddress, .tooManyConnections: throw .usage(error.description)
            default: throw .failure(error.description)
            }
        }
        let stop = server.stopHandle
        let signals = TerminationSignals { stop.stop() }
        defer { withExtendedLifetime(signals) {} }
        Output.error("assetpack serve: serving \(dir) at \(server.url) (pid \(getpid()); fault seed \(configuration.faults.seed); faults: \(configuration.faults.summary))")
        Output.line(server.url)
        do { try server.run() } catch { throw .failure(error.description) }
        Output.error("assetpack serve: stopped")
        return ExitCode.success
    }

    /// The server's configuration from the options; usage errors for bad values.
    static func configuration(_ arguments: Arguments) throws(CLIError) -> ServerConfiguration {
        var c = ServerConfiguration()
        if let address = arguments.value(bind) { c.address = address }
        c.port = try arguments.wholeNumber(port, in: 0...65535) ?? c.port
        c.maximumConnections = try arguments.wholeNumber(maxConnections, in: 1...1_000_000) ?? c.maximumConnections
        c.requestTimeout = try arguments.positiveNumber(requestTimeout) ?? c.requestTimeout
        c.idleTimeout = try arguments.positiveNumber(idleTimeout) ?? c.idleTimeout
        if let rate = try bytes(throttle, arguments) {
            guard rate > 0 else { throw .usage("'--throttle' must be more than 0") }
            c.faults.throttle = rate
        }
        c.faults.dropAfter = try bytes(dropAfter, arguments)
        c.faults.stallAfter = try bytes(stallAfter, arguments)
        if let p = try arguments.number(failRate) {
            guard p <= 1 else { throw .usage("'--fail-rate' needs a number from 0 to 1, not '\(p)'") }
            c.faults.failRate = p
        }
        c.faults.ignoreRange = arguments.flag(ignoreRange)
        c.faults.pathPattern = arguments.value(faultPath)
        if let text = arguments.value(faultSeed) {
            guard let seed = UInt64(text) else { throw .usage("'--fault-seed' needs a whole number from 0 to \(UInt64.max), not '\(text)'") }
            c.faults.seed = seed
        } else {
            c.faults.seed = UInt64.random(in: 0...UInt64(UInt32.max))
        }
        return c
    }

    /// A byte count option (suffix K, M, G or T), at most `Int64.max`.
    static func bytes(_ option: Option, _ arguments: Arguments) throws(CLIError) -> Int64? {
        try arguments.byteCount(option, maximum: UInt64(Int64.max)).map { Int64($0) }
    }
}

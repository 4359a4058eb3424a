import AssetPacks
import Foundation

/// `assetpack publish`: puts packs and a catalog into a directory to host.
enum PublishCommand: Command {
    static let name = "publish"
    static let summary = "Publish packs and a (signed) catalog into a directory any HTTP server can host."
    static let discussion = """
        Checks every pack as inspect does, copies it into <dir> as <id>-<first 12 hex of its SHA-256>.zip, and \
        rewrites <dir>/catalog.json atomically with the next sequence number; with --sign, writes \
        catalog.json.sig first. Packs already in the catalog and not given stay. A pack's version is the \
        'version' of its manifest, else the catalog's when its bytes are the same, else one more. A version \
        going backwards, two packs with one ID, a catalog signed by another key, or a signed catalog without \
        --sign are refused. Older pack files stay until --prune. Publishers of one directory take turns \
        (a lock on <dir>/.publish.lock). The catalog names its channel (--channel; default: the \
        directory's catalog's, else 'default'), which clients check against the one they ask for; a \
        channel other than the directory's catalog's is refused. Prints a line per pack, published or \
        unchanged, and a line per file it removed, pruned (a pruned pack, its piece map and its glue one each).
        """

    static let packs = Positional("pack", help: "A pack file to publish.", completion: .file, variadic: true)
    static let to = Option.value("to", placeholder: "dir", help: "The directory to publish into (made if missing).",
                                 required: true, completion: .directory)
    static let sign = Option.value("sign", placeholder: "key",
                                   help: "Sign the catalog with this private key file (from keygen).", completion: .file)
    static let baseURL = Option.value("base-url", placeholder: "url",
                                      help: "Give the packs absolute URLs under this http(s) URL (a CDN apart from the catalog).")
    static let prune = Option.flag("prune", help: "Remove pack files the new catalog no longer names.")
    static let expires = Option.value("expires", placeholder: "duration|time", help: """
        When clients stop accepting the catalog: a duration from now (30m, 12h, 7d, 2w) or an RFC 3339 \
        time (2027-01-01T00:00:00Z). Default: never.
        """)

    static let channel = Option.value("channel", placeholder: "name", help: """
        The catalog's channel, which clients ask for with --channel (letters, digits, '.', '_', '-'). \
        Default: the directory's catalog's, else 'default'. Publish each channel to a directory of its own.
        """)

    static let positionals = [packs]
    static let options = [to, sign, baseURL, prune, expires, channel, CommonOptions.json]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let now = Date()
        var options = AssetPackPublisher.Options(baseURL: arguments.value(baseURL), prune: arguments.flag(prune),
                                                 channel: arguments.value(channel))
        options.expires = try arguments.value(expires).map { (text) throws(CLIError) in try expiry(text, now: now) }
        let report: AssetPackPublisher.Report
        do {
            options.signingKey = try arguments.value(sign).map { (path) throws(AssetPackError) in try AssetPackSigningKey.load(path: path) }
            report = try AssetPackPublisher.publish(packsAt: arguments.positionals(packs), to: arguments.requiredValue(to),
                                                    options: options, now: now)
        } catch {
            throw .from(error)
        }
        if arguments.flag(CommonOptions.json) {
            try Output.json(ReportJSON(report, signedBy: options.signingKey?.publicKey.keyID))
            return ExitCode.success
        }
        for change in report.changes {
            switch change.kind {
            case .published, .unchanged:
                Output.line("\(change.kind.rawValue) \(change.pack) version \(change.version ?? 0) \(change.file)")
            case .pruned:
                Output.line("pruned \(change.file)")
            }
        }
        let signed = options.signingKey.map { ", signed by \($0.publicKey.keyID)" } ?? ", unsigned"
        Output.error("catalog sequence \(report.catalog.sequence), channel \(report.catalog.channel ?? AssetPackCatalog.defaultChannel): "
                     + "\(TextLayout.count(report.catalog.packs.count, "pack"))\(signed)")
        return ExitCode.success
    }

    /// `--expires`: a duration from `now` or an RFC 3339 time in the future.
    static func expiry(_ text: String, now: Date) throws(CLIError) -> Date {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        if let unit = text.last.flatMap({ units[$0] }), let n = UInt32(text.dropLast()), n > 0 {
            return now.addingTimeInterval(Double(n) * unit)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: text) else {
            throw .usage("'--expires' needs a duration (30m, 12h, 7d, 2w) or an RFC 3339 time, not '\(text)'")
        }
        guard date > now else { throw .usage("'--expires' \(text) is not in the future") }
        return date
    }

    /// The publish as `publish --json` prints it.
    struct ReportJSON: Encodable {
        struct Change: Encodable {
            let change: String
            let pack: String
            let version: UInt64?
            let file: String
        }
        let sequence: UInt64
        let channel: String?
        let signedBy: String?
        let changes: [Change]

        init(_ report: AssetPackPublisher.Report, signedBy: String?) {
            sequence = report.catalog.sequence
            channel = report.catalog.channel
            self.signedBy = signedBy
            changes = report.changes.map { Change(change: $0.kind.rawValue, pack: $0.pack, version: $0.version, file: $0.file) }
        }
    }
}

import Foundation
import AssetPacks
#if canImport(Glibc)
import Glibc
#endif

/// `assetpack status`: the container's downloads, as their status records
/// say — once, or live.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "Show where the container's downloads stand (once, or live with --watch)."
    static let discussion = """
        Reads the status record each download keeps in <container>/downloads/<pack>.status, whichever \
        process runs it (this one, another, the daemon): a line per pack with its state, bytes, rate and \
        time left ("interrupted" for a download whose process died: the next fetch resumes it). With \
        --json: a JSON object per line, the record's members plus "running" (a delta update's line says \
        "mode":"delta" with the bytes "reused" from installed packs and "fetched"; one that fell back to \
        the whole file says why in "reason"). With --watch, on a \
        terminal the lines are redrawn as they change; otherwise (or with --json) a JSON line is printed \
        per change. With a pack, --watch ends when that pack's latest download is over (at once if it \
        is already): exit 0 when it finished, 1 when it failed, was cancelled or its process died; \
        without one it runs until interrupted.
        """

    static let pack = Positional("pack", help: "Only this pack's download.", optional: true)
    static let watch = Option.flag("watch", help: "Keep showing changes as they are written.")

    static let positionals = [pack]
    static let options = [watch, CommonOptions.json] + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let id = arguments.optionalPositional(pack)
        if let id { do { try AssetPack.validate(id: id) } catch { throw .from(error) } }
        let manager = try StoreOptions.manager(arguments, createsContainer: false)
        let json = arguments.flag(CommonOptions.json)
        guard arguments.flag(watch) else {
            let records = id.map { manager.downloadStatus(ofAssetPackWithID: $0).map { [$0] } ?? [] } ?? manager.allDownloadStatuses()
            if let id, records.isEmpty { throw .failure("no download of '\(id)' is recorded in \(manager.container.path)") }
            for record in records { Output.line(json ? record.jsonLine : StatusLine.text(record)) }
            return ExitCode.success
        }
        let screen = json || isatty(1) != 1 ? nil : StatusScreen()
        let final: AssetPackDownloadStatus?
        do {
            final = try CatalogOptions.wait { () async -> AssetPackDownloadStatus? in
                for await records in manager.downloadStatusChanges(ofAssetPackWithID: id) {
                    if let screen { screen.draw(records) } else { records.forEach { Output.line($0.jsonLine) } }
                    // One pack watched: done when its download is.
                    if id != nil, let record = records.first, record.isFinal || !record.isRunning { return record }
                }
                return nil
            }
        } catch {
            throw .from(error)
        }
        guard let final else { return ExitCode.success }
        if final.state == .finished { return ExitCode.success }
        throw .failure("\(final.packID): " + (final.errorMessage ?? (final.isRunning ? final.state.rawValue : "its process died (\(final.state.rawValue)); fetch resumes it")))
    }
}

/// A line of `status` on a terminal.
enum StatusLine {
    static func text(_ r: AssetPackDownloadStatus) -> String {
        let state = r.isFinal || r.isRunning ? r.state.rawValue : "interrupted"
        var parts = [r.packID, state, "\(bytes(r.completedBytes)) of \(bytes(r.totalBytes))"]
        let width = 20
        let filled = r.totalBytes == 0 ? width : Int(Double(width) * Double(min(r.completedBytes, r.totalBytes)) / Double(r.totalBytes))
        parts.append("[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]")
        if r.isRunning, r.bytesPerSecond > 0 { parts.append(bytes(r.bytesPerSecond) + "/s") }
        if r.isRunning, let left = r.estimatedTimeRemaining { parts.append(duration(left) + " left") }
        if r.isDelta { parts.append("delta: \(bytes(r.bytesReused)) reused, \(bytes(r.bytesFetched)) fetched") }
        if let reason = r.reason, !r.isFinal { parts.append("(\(reason))") }
        if let message = r.errorMessage, r.state == .failed { parts.append(message) }
        return parts.joined(separator: "  ")
    }

    /// `512 B`, `1.5 KiB`, `64.0 MiB`, `1.0 GiB`.
    static func bytes(_ n: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// `0:07`, `12:30`, `1:02:03`.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        let (h, m, r) = (s / 3600, s / 60 % 60, s % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, r) : String(format: "%d:%02d", m, r)
    }
}

/// The terminal's last lines, redrawn in place: one per pack.
final class StatusScreen: @unchecked Sendable {
    // Drawn from the one task that watches.
    private var drawn = 0

    func draw(_ records: [AssetPackDownloadStatus]) {
        var out = drawn > 0 ? "\u{1b}[\(drawn)A" : ""
        for record in records { out += "\r" + StatusLine.text(record) + "\u{1b}[K\n" }
        Output.write(out)
        drawn = records.count
    }
}

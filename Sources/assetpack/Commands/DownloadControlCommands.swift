import Foundation
import AssetPacks

/// `assetpack pause`, `resume` and `cancel`: requests to the process running
/// a pack's download — this one, another, or the daemon — through the
/// container's `downloads/<pack>.control` file; each command waits until
/// the download has answered.
enum DownloadControlCommand {
    static let pack = Positional("pack", help: "The pack whose download to steer.")
    static let timeout = Option.value(
        "timeout", placeholder: "seconds", help: "How long to wait for the download to answer (default: 10).")
    static let options = [timeout] + CommonOptions.containerOptions

    enum Verb { case pause, resume, cancel }

    static func run(_ verb: Verb, _ arguments: Arguments) throws(CLIError) -> Int32 {
        let id = arguments.positional(pack)
        let seconds = try arguments.number(timeout) ?? 10
        guard seconds > 0 else { throw .usage("'--timeout' must be more than 0") }
        do { try AssetPack.validate(id: id) } catch { throw .from(error) }
        let manager = try StoreOptions.manager(arguments, createsContainer: false)
        let before = manager.downloadStatus(ofAssetPackWithID: id)?.downloadID
        do {
            switch verb {
            case .pause: try manager.pauseDownload(ofAssetPackWithID: id)
            case .resume: try manager.resumeDownload(ofAssetPackWithID: id)
            case .cancel: try manager.cancelDownload(ofAssetPackWithID: id)
            }
        } catch {
            throw .from(error)
        }
        // Wait for the download's answer in its record.
        let deadline = Date(timeIntervalSinceNow: seconds)
        while true {
            let record = manager.downloadStatus(ofAssetPackWithID: id)
            let answered: Bool
            switch verb {
            case .pause: answered = record?.state == .paused || record?.isFinal == true
            case .resume: answered = record?.state != .paused
            case .cancel: answered = record == nil || record?.isFinal == true || record?.downloadID != before
            }
            if answered {
                guard let record else { break }
                if record.state == .finished, verb != .resume {
                    throw .failure("\(id): the download finished before it could be \(verb == .pause ? "paused" : "cancelled")")
                }
                if record.state == .failed { throw .failure("\(id): the download failed: \(record.errorMessage ?? "")") }
                Output.error("\(id): \(record.state.rawValue) at \(StatusLine.bytes(record.completedBytes)) of \(StatusLine.bytes(record.totalBytes))")
                return ExitCode.success
            }
            guard Date() < deadline else {
                throw .failure("\(id): the download did not answer within \(StatusLine.duration(seconds)) (it is \(record?.state.rawValue ?? "gone"))")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Output.error("\(id): cancelled")
        return ExitCode.success
    }
}

enum PauseCommand: Command {
    static let name = "pause"
    static let summary = "Pause a pack's download where it stands (its partial file stays)."
    static let discussion = "The download stops receiving and waits; resume goes on from the same byte, with a Range request."
    static let positionals = [DownloadControlCommand.pack]
    static let options = DownloadControlCommand.options
    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 { try DownloadControlCommand.run(.pause, arguments) }
}

enum ResumeCommand: Command {
    static let name = "resume"
    static let summary = "Resume a paused download."
    static let positionals = [DownloadControlCommand.pack]
    static let options = DownloadControlCommand.options
    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 { try DownloadControlCommand.run(.resume, arguments) }
}

enum CancelCommand: Command {
    static let name = "cancel"
    static let summary = "Cancel a pack's download: nothing is installed, its partial file goes."
    static let discussion = """
        A running download is asked to stop, and every fetch waiting for it fails as cancelled. A download \
        left by a process that died has its partial file and journal entry removed here.
        """
    static let positionals = [DownloadControlCommand.pack]
    static let options = DownloadControlCommand.options
    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 { try DownloadControlCommand.run(.cancel, arguments) }
}

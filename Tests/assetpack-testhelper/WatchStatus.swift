import Foundation
import AssetPacks

/// `watch-status`: follows one pack's `statusUpdates` in this process until
/// the download finishes or fails, and reports how late each progress update
/// arrived after its writer wrote it — the cross-process latency of the
/// status records.
enum WatchStatus {
    static func run(_ options: Options) throws -> [String: Any] {
        let manager = try AssetPackManager(container: .init(path: options.string("container")))
        let id = options.string("id")
        let done = DispatchSemaphore(value: 0)
        let result = Box()
        Task {
            var delays: [Double] = []
            var states: [String] = []
            for await update in manager.statusUpdates(forAssetPackWithID: id) {
                switch update {
                case .began: states.append("began")
                case .downloading(_, let progress):
                    delays.append(Date().timeIntervalSince(progress.updated))
                    if states.last != "downloading" { states.append("downloading") }
                case .paused: states.append("paused")
                case .finished: states.append("finished")
                case .failed(_, let error): states.append("failed: \(error.code)")
                }
                if states.last == "finished" || states.last?.hasPrefix("failed") == true { break }
            }
            result.set(delays, states)
            done.signal()
        }
        done.wait()
        let (delays, states) = result.get()
        let sorted = delays.sorted()
        return ["updates": delays.count, "states": states,
                "median": sorted.isEmpty ? -1 : sorted[sorted.count / 2], "max": sorted.last ?? -1]
    }
}

/// The watching task's findings, read after its semaphore.
private final class Box: @unchecked Sendable {
    private var value: ([Double], [String]) = ([], [])
    func set(_ d: [Double], _ s: [String]) { value = (d, s) }
    func get() -> ([Double], [String]) { value }
}

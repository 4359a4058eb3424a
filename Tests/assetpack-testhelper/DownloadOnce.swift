import AssetDelivery
import AssetStore

/// `download`: one download of one pack into a container, for the tests
/// that kill a downloader with SIGKILL (mid-transfer, or at the crash point
/// `ASSETPACKS_CRASH_AT` names in the install that adopts its file) and
/// resume in a second process.
enum DownloadOnce {
    static func run(_ options: Options) throws -> [String: Any] {
        CrashingWriter.arm()
        let store = try AssetStore(container: GroupContainer(path: options.string("container")))
        let request = DownloadRequest(pack: options.string("id"), url: options.string("url"),
                                      version: UInt64(options.int("version")), size: UInt64(options.int("size")),
                                      sha256: options.string("sha256"))
        let outcome = try Downloader(store: store).download(request)
        return ["pack": outcome.record.id, "change": outcome.change.rawValue]
    }
}

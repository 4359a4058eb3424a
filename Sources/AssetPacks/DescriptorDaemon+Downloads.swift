import Foundation
import AssetStore
import Synchronization

extension DescriptorDaemon {
    /// The daemon as the container's background download agent: download
    /// requests (``DaemonDownloadRequest``) become jobs that run on threads
    /// of their own, through ``AssetPackManager/download(_:progress:)`` of a
    /// manager per catalog source that never hands off
    /// (``AssetPackManager/Options/downloadsInProcess``).
    ///
    /// A peer that is not the daemon's own user (the container's owner) may
    /// ask only for a source the owner configured (``AssetPackManager/ConfiguredSource``,
    /// read from the container at each such request): its URL, key and
    /// channel exactly (a request without a channel field asks for
    /// `default`, as a source configured without one is), and no other CA
    /// file. Anything else is refused with `requestNotPermitted` before
    /// anything is fetched, and logged.
    ///
    /// One job per pack and catalog source: a request for one in flight
    /// attaches to it, and every waiting request gets its reply. A job does
    /// not belong to a connection: the client may go away and the download
    /// goes on. At most ``Configuration/maximumDownloads`` run at once; the
    /// others wait in order, those that are not discretionary first. At most
    /// ``maximumJobs`` are queued or running: a request for another is
    /// answered `daemonBusy` (and its client downloads itself).
    final class Downloads: Sendable {
        /// Jobs queued or running at once.
        static let maximumJobs = 256
        /// Managers kept for their catalog sources; past it the cache starts afresh.
        static let maximumManagers = 32

        struct Key: Hashable {
            let pack: String
            let source: AssetPackManager.CatalogSource
        }

        /// One download, and whoever waits for its end.
        final class Job: Sendable {
            let key: Key
            /// Left when the job has ended; waiters wait on it.
            let ended = DispatchGroup()
            private let outcome = Mutex<Result<String, AssetPackError>?>(nil)

            init(_ key: Key) {
                self.key = key
                ended.enter()
            }

            func finish(_ result: Result<String, AssetPackError>) {
                outcome.withLock { $0 = result }
                ended.leave()
            }

            /// The installed version, or the error, once ``ended``.
            func wait() -> Result<String, AssetPackError> {
                ended.wait()
                return outcome.withLock { $0! }
            }
        }

        private struct State {
            var jobs: [Key: Job] = [:]
            /// Jobs not yet started, each with whether it is discretionary.
            var queue: [(job: Job, discretionary: Bool)] = []
            var running = 0
            var managers: [AssetPackManager.CatalogSource: AssetPackManager] = [:]
        }

        private let state = Mutex(State())
        private let container: AssetPackManager.Container
        /// The daemon's manager, whose container's configured sources peers may use.
        private let manager: AssetPackManager
        /// The daemon's user: the container's owner, who may ask for anything.
        private let owner: UInt32
        private let limit: Int
        private let deadlines: AssetPackManager.Deadlines
        private let log: (@Sendable (String) -> Void)?
        /// What the managers of jobs are opened with.
        private let options: AssetPackManager.Options

        init(manager: AssetPackManager, owner: UInt32, maximumDownloads: Int, options: AssetPackManager.Options,
             deadlines: AssetPackManager.Deadlines, log: (@Sendable (String) -> Void)?) {
            self.container = manager.container
            self.manager = manager
            self.owner = owner
            self.limit = max(1, maximumDownloads)
            self.options = options
            self.deadlines = deadlines
            self.log = log
        }

        /// The reply to `request` from the peer `uid`: with wait, once the
        /// download has ended; without, once it is queued.
        func answer(_ request: DaemonDownloadRequest, uid: UInt32) -> [UInt8] {
            var key: Key
            do { key = try Self.key(of: request, deadlines: deadlines) } catch { return DaemonReply.downloadFailure(for: error) }
            if uid != owner {
                do { key = try permitted(key, request, uid: uid) } catch {
                    log?("refused a download of '\(request.pack)' from \(request.catalogURL) for uid \(uid): \(error.message)")
                    return DaemonReply.failure(for: error)
                }
            }
            guard let job = submit(key, discretionary: request.discretionary, uid: uid) else {
                return DaemonReply.failure(.daemonBusy, message: "\(Self.maximumJobs) downloads are queued or running; try again")
            }
            guard request.wait else { return DaemonReply.success(.accepted) }
            switch job.wait() {
            case .success(let version): return DaemonReply.success(.installed(version: version))
            case .failure(let error): return DaemonReply.downloadFailure(for: error)
            }
        }

        /// What `request` asks for, or why it cannot be done.
        ///
        /// - Throws: `.invalidPackID` (with its reason), `.unsupportedURL`
        ///   for a catalog URL that is not `http://` or `https://`,
        ///   `.invalidKey` (`.malformedPublicKey`) for key text that is not a
        ///   key, `.invalidOption` (`catalog.channel`) for a channel that is
        ///   not a channel name.
        static func key(of request: DaemonDownloadRequest, deadlines: AssetPackManager.Deadlines) throws(AssetPackError) -> Key {
            try engine { () throws(StoreError) in try PackID.validate(request.pack) }
            let scheme = request.catalogURL.prefix(8).lowercased()
            guard scheme.hasPrefix("http://") || scheme.hasPrefix("https://") else {
                throw AssetPackError(.unsupportedURL, pack: request.pack, path: request.catalogURL,
                                     message: "cannot download '\(request.pack)' from \(request.catalogURL): the catalog URL must be http:// or https://")
            }
            let key = try request.publicKey.map { (text) throws(AssetPackError) in try AssetPackPublicKey(text) }
            try AssetPackManager.CatalogSource.validate(channel: request.channel)
            var source = AssetPackManager.CatalogSource(url: request.catalogURL, publicKey: key, caFile: request.caFile)
            source.channel = request.channel
            source.deadlines = deadlines
            return Key(pack: request.pack, source: source)
        }

        /// `key` as a peer that is not the owner may have it: its source one
        /// the owner configured, with the configured CA file.
        ///
        /// - Throws: `.requestNotPermitted` with `.unsignedSource` for a
        ///   request without a key, `.sourceNotConfigured` for a URL and key
        ///   the owner did not configure (or that names another CA file),
        ///   `.channelNotConfigured` for a configured URL and key asked for
        ///   another channel than the configured one.
        func permitted(_ key: Key, _ request: DaemonDownloadRequest, uid: UInt32) throws(AssetPackError) -> Key {
            let url = request.catalogURL
            func refusal(_ reason: AssetPackError.Reason, _ why: String) -> AssetPackError {
                AssetPackError(.requestNotPermitted, reason: reason, pack: request.pack, path: url,
                               message: "uid \(uid) may not have the daemon download '\(request.pack)' from \(url): \(why)")
            }
            guard let publicKey = key.source.publicKey else {
                throw refusal(.unsignedSource, "an unsigned catalog is never a source for another user than the container's owner (uid \(owner))")
            }
            var problem = ""
            let sources: [AssetPackManager.ConfiguredSource]
            do { sources = try manager.configuredSources(owner: owner) } catch {
                log?("configured sources ignored: \(error.message)")
                sources = []
                problem = " (\(error.message))"
            }
            let configured = sources.filter { $0.url == url && $0.publicKey == publicKey }
            guard !configured.isEmpty else {
                throw refusal(.sourceNotConfigured, "it is not a source the container's owner configured with key \(publicKey.keyID) ('assetpack sources add')" + problem)
            }
            // Channels are checked against the channel-name rules (key(of:), the file's parse): printable as they are.
            guard let source = configured.first(where: { $0.channel == key.source.channel }) else {
                let channels = configured.map { "'\($0.channel)'" }.joined(separator: ", ")
                throw refusal(.channelNotConfigured,
                              "the container's owner configured it for channel \(channels), not '\(key.source.channel)' ('assetpack sources add --channel')")
            }
            if let caFile = request.caFile, caFile != source.caFile {
                throw refusal(.sourceNotConfigured, "the CA file \(caFile) is not the one configured for this source")
            }
            var permitted = key.source
            permitted.caFile = source.caFile
            return Key(pack: key.pack, source: permitted)
        }

        /// The job for `key`: the one in flight, or a new one in the queue;
        /// `nil` when ``maximumJobs`` are.
        private func submit(_ key: Key, discretionary: Bool, uid: UInt32) -> Job? {
            let (job, new) = state.withLock { s -> (Job?, Bool) in
                if let job = s.jobs[key] {
                    // A request that may not wait promotes a queued job that might.
                    if !discretionary, let i = s.queue.firstIndex(where: { $0.job === job }) { s.queue[i].discretionary = false }
                    return (job, false)
                }
                guard s.jobs.count < Self.maximumJobs else { return (nil, false) }
                let job = Job(key)
                s.jobs[key] = job
                s.queue.append((job, discretionary))
                return (job, true)
            }
            if new { log?("download of '\(key.pack)' requested by uid \(uid)\(discretionary ? " (discretionary)" : "")") }
            startQueued()
            return job
        }

        /// Starts queued jobs while fewer than the limit run.
        private func startQueued() {
            let started = state.withLock { s -> [(job: Job, discretionary: Bool)] in
                var started: [(job: Job, discretionary: Bool)] = []
                while s.running < limit, !s.queue.isEmpty {
                    let i = s.queue.firstIndex { !$0.discretionary } ?? 0
                    started.append(s.queue.remove(at: i))
                    s.running += 1
                }
                return started
            }
            for (job, discretionary) in started {
                let thread = Thread { [self] in run(job, discretionary: discretionary) }
                thread.name = "assetpack-download-\(job.key.pack)"
                thread.start()
            }
        }

        /// Runs `job`; a `discretionary` one waits for its turn as the
        /// daemon's manager's policies say (battery, load, slots, rate cap).
        private func run(_ job: Job, discretionary: Bool) {
            let pack = job.key.pack
            log?("download of '\(pack)' began")
            let result = Result { () throws(AssetPackError) -> String in
                let manager = try manager(for: job.key.source)
                try manager.download(pack, discretionary: discretionary, progress: nil) { [log] reason in
                    log?("download of '\(pack)' deferred: \(reason)")
                }
                return try manager.assetPack(withID: pack).version
            }
            switch result {
            case .success(let version): log?("download of '\(pack)' finished: version \(version) installed")
            case .failure(let error): log?("download of '\(pack)' failed: \(error.message)")
            }
            // Forgotten before the waiters hear: a request from now on is a
            // new job, which finds the pack installed.
            state.withLock { s in
                s.jobs.removeValue(forKey: job.key)
                s.running -= 1
            }
            job.finish(result)
            startQueued()
        }

        /// The manager that downloads from `source`, made on first use.
        private func manager(for source: AssetPackManager.CatalogSource) throws(AssetPackError) -> AssetPackManager {
            if let manager = state.withLock({ $0.managers[source] }) { return manager }
            var options = self.options
            options.catalog = source
            options.downloadsInProcess = true
            options.log = log
            let manager = try AssetPackManager(container: container, options: options)
            return state.withLock { s in
                if let other = s.managers[source] { return other }
                if s.managers.count >= Self.maximumManagers { s.managers.removeAll() }
                s.managers[source] = manager
                return manager
            }
        }
    }
}

import AssetDelivery

extension AssetPackManager.CatalogSource {
    /// - Throws: `.invalidOption` naming the field (`catalog.channel`,
    ///   `catalog.deadlines.minimumSpeedInterval`) that cannot be used.
    func validate() throws(AssetPackError) {
        try Self.validate(channel: channel)
        try deadlines.validate(("AssetPackManager.Options", "catalog.deadlines."))
    }

    /// - Throws: `.invalidOption` (`field`) for a name that breaks the
    ///   channel-name rules (those of pack IDs).
    static func validate(channel: String, field: String = "catalog.channel") throws(AssetPackError) {
        if let problem = Catalog.channelProblem(channel) {
            throw AssetPackError(.invalidOption, field: field,
                                 message: "catalog channel '\(AssetMember.printable(channel))' cannot be used: \(problem)")
        }
    }
}

extension AssetPackManager {
    /// How slow, and how long, a download may be before it ends as
    /// `.downloadTimedOut` — its partial file kept, so that the next request
    /// for the pack resumes it — instead of holding a connection and a
    /// download slot for as long as a server cares to trickle.
    ///
    /// - A **minimum speed**: a transfer that receives less than
    ///   ``minimumBytesPerSecond`` bytes a second for ``minimumSpeedInterval``
    ///   seconds ends (libcurl's `CURLOPT_LOW_SPEED_LIMIT` and
    ///   `CURLOPT_LOW_SPEED_TIME`; reason `belowMinimumSpeed`). It is not
    ///   retried: the server answers, too slowly. Under a receive cap
    ///   (``Discretionary/maximumBytesPerSecond``) the minimum is at most
    ///   half the cap.
    /// - A **total deadline**: one pack's download — every request of it
    ///   (piece map, glue, ranges, the file), every retry and the backoff
    ///   between them — or one catalog fetch ends once it has run
    ///   ``maximumDownloadTime`` seconds (reason `totalDeadline`).
    public struct Deadlines: Sendable, Hashable {
        /// Bytes a second below which a transfer is too slow; 0: no minimum.
        /// Default 1024.
        public var minimumBytesPerSecond: Int
        /// Seconds a transfer may stay below the minimum speed. Default 60.
        public var minimumSpeedInterval: Int
        /// Seconds one pack's download (or catalog fetch) may take in all;
        /// `nil`: no limit. Default 21,600 (6 hours).
        public var maximumDownloadTime: Double?

        public init(minimumBytesPerSecond: Int = 1024, minimumSpeedInterval: Int = 60, maximumDownloadTime: Double? = 6 * 3600) {
            self.minimumBytesPerSecond = minimumBytesPerSecond
            self.minimumSpeedInterval = minimumSpeedInterval
            self.maximumDownloadTime = maximumDownloadTime
        }

        /// - Parameter place: where they are, `owner` then `field` prefix:
        ///   `("AssetPackManager.Options", "catalog.deadlines.")`.
        /// - Throws: `.invalidOption` naming the field out of range
        ///   (`catalog.deadlines.minimumSpeedInterval`).
        func validate(_ place: (owner: String, field: String)) throws(AssetPackError) {
            func refuse(_ field: String, _ what: String) -> AssetPackError {
                AssetPackError(.invalidOption, field: place.field + field, message: "\(place.owner).\(place.field)\(field) \(what)")
            }
            guard minimumBytesPerSecond >= 0 else {
                throw refuse("minimumBytesPerSecond", "must be 0 (no minimum) or more, not \(minimumBytesPerSecond)")
            }
            guard (1...86_400).contains(minimumSpeedInterval) else {
                throw refuse("minimumSpeedInterval", "must be from 1 to 86400 seconds, not \(minimumSpeedInterval)")
            }
            if let time = maximumDownloadTime, !(time.isFinite && time > 0) {
                throw refuse("maximumDownloadTime", "must be more than 0 seconds (nil: no limit), not \(time)")
            }
        }

        /// `options` with these deadlines.
        func applied(to options: Downloader.Options) -> Downloader.Options {
            var options = options
            options.http.lowSpeedLimit = minimumBytesPerSecond
            options.http.lowSpeedTime = minimumSpeedInterval
            options.maximumTime = maximumDownloadTime
            return options
        }
    }
}

public import Foundation
import Synchronization
import AssetDelivery
import AssetSystem

extension AssetPackManager {
    /// How discretionary downloads are held back, as
    /// `URLSessionConfiguration.isDiscretionary` holds back a background
    /// session's: they wait while the machine is on battery or busy, run
    /// at most ``maximumConcurrentDownloads`` at once in the container, and
    /// each receives at most ``maximumBytesPerSecond``.
    ///
    /// Discretionary are the prefetch packs of an installation event
    /// (``ensureAvailability(of:forInstallationEvent:progress:onDeferral:)``,
    /// `assetpack sync`) and the updates ``checkForUpdates()`` starts. Not
    /// discretionary: essential packs, and every download a program asks
    /// for (``ensureLocalAvailability(of:progress:)``, `assetpack fetch`).
    /// docs/downloads.md says how "on battery" and "busy" are decided.
    public struct Discretionary: Sendable, Hashable {
        /// The most bytes a second each discretionary download receives
        /// (libcurl's `CURLOPT_MAX_RECV_SPEED_LARGE`); `nil`, the default:
        /// no cap. The cap is per download: the container's discretionary
        /// downloads together receive at most ``maximumConcurrentDownloads``
        /// times this.
        public var maximumBytesPerSecond: UInt64?
        /// How many discretionary downloads run at once in the container,
        /// across all its processes (1 to 64; default 1). Each holds a slot
        /// lock file, `<container>/downloads/slots/<n>.lock`, while it runs.
        public var maximumConcurrentDownloads: Int
        /// Whether a download waits while the machine is on battery (default `true`).
        public var defersOnBattery: Bool
        /// A 1-minute load average above this makes a download wait; `nil`:
        /// load never does. Default: the number of active processors — above
        /// it, runnable work already queues for a core, and a download's
        /// hashing and writing would take time from it.
        public var maximumLoadAverage: Double?
        /// Seconds between looks at the machine's conditions while a download
        /// waits (more than 0, at most 3600; default 30).
        public var recheckInterval: Double

        public init(maximumBytesPerSecond: UInt64? = nil, maximumConcurrentDownloads: Int = 1, defersOnBattery: Bool = true,
                    maximumLoadAverage: Double? = Double(ProcessInfo.processInfo.activeProcessorCount),
                    recheckInterval: Double = 30) {
            self.maximumBytesPerSecond = maximumBytesPerSecond
            self.maximumConcurrentDownloads = maximumConcurrentDownloads
            self.defersOnBattery = defersOnBattery
            self.maximumLoadAverage = maximumLoadAverage
            self.recheckInterval = recheckInterval
        }

        /// The most ``maximumConcurrentDownloads`` may be.
        public static let slotLimit = 64

        /// - Throws: `.invalidOption` naming the field that is out of range.
        func validate() throws(AssetPackError) {
            func refuse(_ field: String, _ what: String) -> AssetPackError {
                AssetPackError(.invalidOption, field: "discretionary." + field,
                               message: "AssetPackManager.Options.discretionary.\(field) \(what)")
            }
            if let rate = maximumBytesPerSecond, rate == 0 || rate > UInt64(Int64.max) {
                throw refuse("maximumBytesPerSecond", "must be from 1 to \(Int64.max) bytes a second (nil: no cap), not \(rate)")
            }
            guard (1...Self.slotLimit).contains(maximumConcurrentDownloads) else {
                throw refuse("maximumConcurrentDownloads", "must be from 1 to \(Self.slotLimit), not \(maximumConcurrentDownloads)")
            }
            if let load = maximumLoadAverage, !(load.isFinite && load > 0) {
                throw refuse("maximumLoadAverage", "must be a number more than 0 (nil: load never defers), not \(load)")
            }
            guard recheckInterval.isFinite && recheckInterval > 0 && recheckInterval <= 3600 else {
                throw refuse("recheckInterval", "must be more than 0 and at most 3600 seconds, not \(recheckInterval)")
            }
        }
    }

    /// What a manager keeps of its download policies.
    final class Policies: Sendable {
        let discretionary: Discretionary
        let conditions: SystemConditions
        let downloaderExtension: (any AssetPackDownloaderExtension)?
        /// The packs this manager's ``checkForUpdates()`` is updating now.
        let updating = Mutex<Set<String>>([])

        /// - Throws: `.invalidOption` for a value out of range.
        init(_ options: Options) throws(AssetPackError) {
            try options.discretionary.validate()
            discretionary = options.discretionary
            conditions = SystemConditions(root: options.systemRoot ?? SystemConditions.root(environment: ProcessInfo.processInfo.environment))
            downloaderExtension = options.downloaderExtension
        }

        var engine: DiscretionaryPolicy {
            DiscretionaryPolicy(maximumBytesPerSecond: discretionary.maximumBytesPerSecond,
                                maximumConcurrentDownloads: discretionary.maximumConcurrentDownloads,
                                defersOnBattery: discretionary.defersOnBattery,
                                maximumLoadAverage: discretionary.maximumLoadAverage,
                                recheckInterval: discretionary.recheckInterval, conditions: conditions)
        }
    }

    /// Waits until a discretionary download may run (see ``Discretionary``)
    /// and returns its slot, held until the value goes away.
    ///
    /// - Parameters:
    ///   - deferred: called with the reason when the wait begins and each
    ///     time the reason changes.
    ///   - sleep: waits between two looks; `false` gives up (the result is then `nil`).
    func discretionaryTurn(
        deferred: ((String) -> Void)?, sleep: @escaping (Double) -> Bool = { Monotonic.sleep($0); return true }
    ) throws(AssetPackError) -> DiscretionaryTurn? {
        do {
            return try DiscretionaryGate.waitForTurn(policies.engine, slots: store.downloadSlotsDirectory, lockFileMode: store.lockFileMode,
                                                      deferred: deferred, sleep: sleep)
        } catch {
            throw AssetPackError(error)
        }
    }
}

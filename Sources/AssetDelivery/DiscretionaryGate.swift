public import AssetStore
import AssetSystem

/// When a discretionary download may run, as `URLSessionConfiguration.isDiscretionary`
/// decides for a background session: not while the machine is on battery
/// or busy, and no more at once in a container than it has slots.
public struct DiscretionaryPolicy: Sendable, Hashable {
    /// The most bytes a second each discretionary download receives; `nil`: no cap.
    public var maximumBytesPerSecond: UInt64?
    /// Slot lock files (`0.lock` … `n-1.lock`): at most this many
    /// discretionary downloads run at once across the container's processes.
    public var maximumConcurrentDownloads: Int
    /// Whether a download waits while the machine is on battery.
    public var defersOnBattery: Bool
    /// A 1-minute load average above this makes a download wait; `nil`: never.
    public var maximumLoadAverage: Double?
    /// Seconds between looks at the machine's conditions while waiting.
    public var recheckInterval: Double
    /// Where the machine's conditions are read.
    public var conditions: SystemConditions

    public init(maximumBytesPerSecond: UInt64?, maximumConcurrentDownloads: Int, defersOnBattery: Bool,
                maximumLoadAverage: Double?, recheckInterval: Double, conditions: SystemConditions) {
        self.maximumBytesPerSecond = maximumBytesPerSecond
        self.maximumConcurrentDownloads = maximumConcurrentDownloads
        self.defersOnBattery = defersOnBattery
        self.maximumLoadAverage = maximumLoadAverage
        self.recheckInterval = recheckInterval
        self.conditions = conditions
    }

    /// Why a download must wait now (`on battery`, `busy: …`), or `nil`
    /// when the machine lets it run.
    public func deferral() -> String? {
        if defersOnBattery && conditions.isOnBattery { return "the machine is on battery" }
        if let bound = maximumLoadAverage, let load = conditions.loadAverage, load > bound {
            return "the machine is busy (1-minute load average above \(bound))"
        }
        return nil
    }
}

/// A discretionary download's turn: the slot lock it holds until this value
/// goes away (an OFD lock on the open slot file, so a process that dies
/// frees its slot).
public struct DiscretionaryTurn: ~Copyable, Sendable {
    /// The slot's number, from 0.
    public let slot: Int
    private let lock: FileDescriptor

    init(slot: Int, lock: consuming FileDescriptor) {
        self.slot = slot
        self.lock = lock
    }
}

/// Waits for a discretionary download's turn.
public enum DiscretionaryGate {
    /// How often free slots are looked for while all are taken: a slot frees
    /// without notice when its download ends.
    static let slotPoll = 0.1

    /// Waits while `policy` defers downloads (looking again every
    /// `recheckInterval`) and until one of its slots in `slots` (the
    /// container's `downloads/slots/`, ``AssetStore/downloadSlotsDirectory``)
    /// is free, then holds that slot. Slot files are opened relative to the
    /// directory's descriptor, without following a symlink and without
    /// waiting (`O_NONBLOCK`), made with `lockFileMode` (the container's),
    /// and must be regular files.
    ///
    /// - Parameters:
    ///   - deferred: called with the reason when the wait begins and each
    ///     time the reason changes; not called when there is no wait.
    ///   - sleep: waits the seconds given between two looks; returns `false`
    ///     to give up waiting (a cancelled download).
    /// - Returns: the turn, or `nil` when `sleep` gave up.
    /// - Throws: `.notAFile` naming a slot file that is not a regular file
    ///   (a FIFO); `.symlinkInContainer` for a symlinked slot or directory;
    ///   `.system` when a slot file cannot be made or locked (other than
    ///   being held) or the directory is missing.
    public static func waitForTurn(
        _ policy: DiscretionaryPolicy, slots: LayoutDirectory, lockFileMode: UInt32 = FileLock.defaultMode, deferred: ((String) -> Void)?,
        sleep: (Double) -> Bool = { Monotonic.sleep($0); return true }
    ) throws(StoreError) -> DiscretionaryTurn? {
        precondition(policy.maximumConcurrentDownloads >= 1 && policy.recheckInterval > 0, "a validated policy")
        var reported: String?
        func report(_ reason: String) {
            if reason != reported { deferred?(reason) }
            reported = reason
        }
        while true {
            if let reason = policy.deferral() {
                report(reason)
                guard sleep(policy.recheckInterval) else { return nil }
                continue
            }
            for slot in 0..<policy.maximumConcurrentDownloads {
                if let lock = try take(slot, in: slots, mode: lockFileMode) { return DiscretionaryTurn(slot: slot, lock: lock) }
            }
            let n = policy.maximumConcurrentDownloads
            report(n == 1 ? "the container's download slot is in use" : "all \(n) download slots of the container are in use")
            guard sleep(min(slotPoll, policy.recheckInterval)) else { return nil }
        }
    }

    /// Slot `slot`'s file in `slots`, locked; `nil` when another download holds it.
    private static func take(_ slot: Int, in slots: LayoutDirectory, mode: UInt32) throws(StoreError) -> FileDescriptor? {
        let name = "\(slot).lock"
        let fd = try slots.openLockFile(name, mode: mode)
        do {
            try FileLock.lock(fd, wait: .none, path: slots.path(of: name))
            return fd
        } catch {
            guard case .system(let e) = error else { return nil }
            throw .system(e)
        }
    }
}

import AssetArchive

/// How far an install has got: what
/// ``AssetStore/install(packAt:id:catalogVersion:source:progress:)`` hands its
/// `progress` closure.
///
/// The phases come in the order of ``Phase``'s cases; each starts with
/// `completed == 0`, never goes back, and ends with `completed == total`.
/// An install that finds the same archive already installed ends after
/// ``Phase/hashing``.
public struct InstallProgress: Sendable, Hashable {
    /// A stage of the install, and what its counts count.
    public enum Phase: String, Sendable, Hashable, CaseIterable {
        /// Copying the pack file into `staging/`: bytes of the file.
        case copying
        /// Checking every member's data (CRC-32, inflated size): bytes of
        /// member data as stored in the archive.
        case validating
        /// Computing the SHA-256 of the whole file: bytes of the file.
        case hashing
        /// Writing the members' records into the index: members.
        case indexing
    }

    /// The stage the install is in.
    public let phase: Phase
    /// How much of the phase is done, in its unit.
    public let completed: UInt64
    /// How much the phase does in all, in its unit.
    public let total: UInt64

    /// A report of `completed` out of `total` in `phase`.
    public init(phase: Phase, completed: UInt64, total: UInt64) {
        self.phase = phase
        self.completed = completed
        self.total = total
    }
}

extension ProgressMeter {
    /// A meter for `total` units of `phase`, reporting to `progress`; `nil`
    /// without a closure, so that an install without one counts (and sums)
    /// nothing.
    static func install(
        _ phase: InstallProgress.Phase, total: @autoclosure () -> UInt64, reportingTo progress: ((InstallProgress) -> Void)?
    ) -> ProgressMeter? {
        guard let progress else { return nil }
        return ProgressMeter(total: total()) { done, total in
            progress(InstallProgress(phase: phase, completed: done, total: total))
        }
    }
}

import AssetStore

/// How far a long piece of work has come: packaging, installing, verifying.
///
/// Callbacks get one now and then (a bounded number of times per second, and
/// once at the end of each phase with `completed == total`), on the thread
/// doing the work; keep them short.
public struct AssetPackProgress: Sendable, Hashable {
    /// What is being done.
    public enum Phase: String, Sendable, Hashable, CaseIterable {
        /// Reading files and writing them into a pack (bytes).
        case packaging
        /// Copying a pack file into the container's staging area (bytes).
        case copying
        /// Checking a pack's structure and every member's data (bytes of
        /// member data as stored).
        case validating
        /// Computing a pack file's SHA-256 (bytes).
        case hashing
        /// Recording members in the index (members).
        case indexing
        /// Verifying the container (bytes with `deep`, else members).
        case verifying
        /// Downloading a pack file (bytes on disk, a resumed download's
        /// earlier ones included).
        case downloading
    }

    /// What `completed` and `total` count.
    public enum Unit: String, Sendable, Hashable {
        case bytes
        case members
    }

    public let phase: Phase
    public let unit: Unit
    /// How much of the phase is done.
    public let completed: UInt64
    /// How much the phase has in all.
    public let total: UInt64

    public init(phase: Phase, unit: Unit, completed: UInt64, total: UInt64) {
        self.phase = phase
        self.unit = unit
        self.completed = completed
        self.total = total
    }

    /// `completed / total`, 1 when there is nothing to do.
    public var fraction: Double { total == 0 ? 1 : Double(completed) / Double(total) }
}

extension AssetPackProgress {
    /// The public form of the engine's install progress.
    init(_ p: InstallProgress) {
        let phase: Phase
        switch p.phase {
        case .copying: phase = .copying
        case .validating: phase = .validating
        case .hashing: phase = .hashing
        case .indexing: phase = .indexing
        }
        self.init(phase: phase, unit: p.phase == .indexing ? .members : .bytes, completed: p.completed, total: p.total)
    }
}

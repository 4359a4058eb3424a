/// When a pack is downloaded, as in Apple's manifest format.
public enum DownloadPolicy: Sendable, Hashable {
    /// Installed with the program: downloads block the given installation events.
    case essential(Set<InstallationEventType>)
    /// Downloaded in the background after the given installation events.
    case prefetch(Set<InstallationEventType>)
    /// Downloaded only when a program asks for it.
    case onDemand

    /// `essential`, `prefetch` or `onDemand`.
    public var name: String {
        switch self {
        case .essential: return "essential"
        case .prefetch: return "prefetch"
        case .onDemand: return "onDemand"
        }
    }

    /// The installation events of an essential or prefetch policy, sorted; empty for on-demand.
    public var installationEventTypes: [InstallationEventType] {
        switch self {
        case .essential(let e), .prefetch(let e): return e.sorted { $0.rawValue < $1.rawValue }
        case .onDemand: return []
        }
    }
}

/// The installation events after which essential and prefetch packs download.
public enum InstallationEventType: String, Sendable, Hashable, CaseIterable, Codable {
    case firstInstallation
    case subsequentUpdate
}

/// The platforms a pack is for. Apple's names, plus `linux`.
public enum Platform: String, Sendable, Hashable, CaseIterable, Codable {
    case iOS, macOS, tvOS, visionOS, watchOS, linux

    /// Whether a pack that lists `platforms` is for this platform: the list
    /// names it, or is empty — an empty or absent list means every
    /// platform, as in Apple's manifests.
    public func isIncluded(in platforms: [Platform]) -> Bool {
        platforms.isEmpty || platforms.contains(self)
    }
}

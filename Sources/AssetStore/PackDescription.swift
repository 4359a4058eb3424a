internal import AssetJSON

/// What a pack says about itself: its ID, download policy and platforms — the
/// part of its manifest that installing needs — and the version its manifest
/// gave, if any. `assetpack package` records it in the archive comment, so a
/// pack file is self-describing.
public struct PackDescription: Sendable, Hashable {
    public var id: String
    public var downloadPolicy: DownloadPolicy
    public var platforms: [Platform]
    /// The manifest's `version` (an extension of Apple's format), which
    /// `assetpack publish` puts in the catalog; `nil` when it gave none.
    public var version: UInt64?

    /// The largest version a manifest may give: 2^53 − 1, the largest
    /// integer every JSON reader holds exactly.
    public static let maximumVersion: UInt64 = (1 << 53) - 1

    public init(id: String, downloadPolicy: DownloadPolicy, platforms: [Platform], version: UInt64? = nil) {
        self.id = id
        self.downloadPolicy = downloadPolicy
        self.platforms = platforms
        self.version = version
    }

    /// The first line of an archive comment that records a description.
    public static let commentMarker = "AssetPacks-Manifest/1"

    /// The archive comment that records this description: the marker line,
    /// then compact JSON with sorted keys (deterministic).
    public var archiveComment: [UInt8] {
        let policy: JSONValue
        switch downloadPolicy {
        case .onDemand:
            policy = ["onDemand": [:]]
        case .essential, .prefetch:
            let body: JSONValue = ["installationEventTypes": .array(downloadPolicy.installationEventTypes.map { .string($0.rawValue) })]
            policy = .object(JSONObject(uniqueKeysWithValues: [(downloadPolicy.name, body)]))
        }
        var members: [(String, JSONValue)] = [
            ("assetPackID", .string(id)), ("downloadPolicy", policy), ("platforms", .array(platforms.map { .string($0.rawValue) })),
        ]
        // Only when given, so packs without a version keep their bytes.
        if let version { members.append(("version", .number(JSONNumber(version)))) }
        let object = JSONValue.object(JSONObject(uniqueKeysWithValues: members))
        return Array((Self.commentMarker + "\n").utf8) + object.encoded(sortedKeys: true)
    }

    /// Reads a description from an archive comment. Returns `nil` when the
    /// comment does not start with the marker (an ordinary ZIP).
    ///
    /// - Throws: `StoreError.invalidRecordedManifest` when it does but the
    ///   rest is not a valid description (not strict JSON, with the line and
    ///   column of the first error, or not the fields above).
    public static func decode(archiveComment comment: [UInt8], archive: String) throws(StoreError) -> PackDescription? {
        let marker = Array((commentMarker + "\n").utf8)
        guard comment.starts(with: marker) else { return nil }
        func bad(_ reason: String) -> StoreError { .invalidRecordedManifest(archive: archive, reason: reason) }
        // The elements when `value` is an array of strings only.
        func strings(_ value: JSONValue?) -> [String]? {
            guard let list = value?.arrayValue else { return nil }
            let names = list.compactMap(\.stringValue)
            return names.count == list.count ? names : nil
        }
        let root: JSONValue
        do {
            root = try JSONValue.parse(comment[marker.count...])
        } catch {
            throw bad("not valid JSON: \(error)")
        }
        guard let object = root.objectValue else { throw bad("not a JSON object") }
        guard let id = object["assetPackID"]?.stringValue else { throw bad("assetPackID is missing") }
        do { try PackID.validate(id) } catch { throw bad(error.description) }
        guard let policyObject = object["downloadPolicy"]?.objectValue, policyObject.count == 1,
              let (kind, value) = policyObject.first else {
            throw bad("downloadPolicy must have exactly one of essential, prefetch, onDemand")
        }
        let policy: DownloadPolicy
        switch kind {
        case "onDemand":
            policy = .onDemand
        case "essential", "prefetch":
            guard let names = strings(value["installationEventTypes"]) else {
                throw bad("downloadPolicy.\(kind).installationEventTypes is missing")
            }
            var events = Set<InstallationEventType>()
            for name in names {
                guard let e = InstallationEventType(rawValue: name) else { throw bad("unknown installation event type '\(name)'") }
                events.insert(e)
            }
            policy = kind == "essential" ? .essential(events) : .prefetch(events)
        default:
            throw bad("unknown download policy '\(kind)'")
        }
        var platforms: [Platform] = []
        for name in strings(object["platforms"]) ?? [] {
            guard let p = Platform(rawValue: name) else { throw bad("unknown platform '\(name)'") }
            platforms.append(p)
        }
        var version: UInt64?
        if let value = object["version"] {
            guard let n = value.numberValue, n.text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let v = n.uint64Value, v >= 1, v <= maximumVersion else {
                throw bad("version must be a whole number from 1 to \(maximumVersion)")
            }
            version = v
        }
        return PackDescription(id: id, downloadPolicy: policy, platforms: platforms, version: version)
    }
}

/// Rules for asset pack IDs.
public enum PackID {
    /// The longest ID accepted, in bytes.
    public static let maximumLength = 128

    /// Checks that `id` is 1 to 128 characters from `A-Z a-z 0-9 . _ -`,
    /// starting with a letter or digit — safe as a file name and a key prefix.
    ///
    /// - Throws: `StoreError.invalidPackID` saying which rule it breaks.
    public static func validate(_ id: String) throws(StoreError) {
        let bytes = Array(id.utf8)
        guard !bytes.isEmpty else { throw .invalidPackID(id, reason: .empty) }
        guard bytes.count <= maximumLength else {
            throw .invalidPackID(id, reason: .tooLong)
        }
        func alnum(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) }
        guard alnum(bytes[0]) else { throw .invalidPackID(id, reason: .badFirstCharacter) }
        for b in bytes where !(alnum(b) || b == 0x2e || b == 0x5f || b == 0x2d) {
            throw .invalidPackID(id, reason: .badCharacter)
        }
    }
}

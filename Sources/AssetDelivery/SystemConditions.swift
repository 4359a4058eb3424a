import AssetSystem

/// What the machine is doing, as a discretionary download asks before it
/// starts: whether it runs on battery and how loaded it is. Read from
/// `<root>/sys/class/power_supply/*/` and `<root>/proc/loadavg`, with
/// `root` `/` on a real system and a directory of test files in tests.
///
/// Nothing here fails: a file that is missing, unreadable or says
/// something unexpected counts as "not on battery" and "not busy", so a
/// machine without the files (a container, a kernel without the driver)
/// downloads as if plugged in and idle.
public struct SystemConditions: Sendable, Hashable {
    /// The directory `sys/` and `proc/` are read under (`/` on a real system).
    public var root: String

    /// The environment variable that names another ``root``.
    public static let rootVariable = "ASSETPACKS_SYSTEM_ROOT"

    public init(root: String = "/") {
        self.root = root
    }

    /// The root `ASSETPACKS_SYSTEM_ROOT` names in `environment`, or `/`.
    public static func root(environment: [String: String]) -> String {
        guard let value = environment[rootVariable], !value.isEmpty else { return "/" }
        return value
    }

    /// One entry of `sys/class/power_supply`.
    public struct PowerSupply: Sendable, Hashable {
        /// The directory's name (`BAT0`, `AC`, `ucsi-source-psy-USBC000:001`).
        public var name: String
        /// `type`: `Battery`, `Mains`, `USB`, `Wireless`, `UPS`, …
        public var type: String?
        /// `online`: whether an external supply delivers power (`1`).
        public var online: Bool?
        /// `status` of a battery: `Charging`, `Discharging`, `Full`, `Not charging`, …
        public var status: String?
        /// `scope`: `Device` for the battery of a peripheral (a mouse, a
        /// headset), which says nothing about the machine's power.
        public var scope: String?

        /// A battery that powers the machine (not a peripheral's).
        var isSystemBattery: Bool { type == "Battery" && scope != "Device" }
        /// A supply from outside: mains, USB (any of the kernel's `USB*`
        /// types) or wireless charging.
        var isExternal: Bool {
            guard let type else { return false }
            return type == "Mains" || type.hasPrefix("USB") || type == "Wireless"
        }
    }

    /// The power supplies the kernel lists, sorted by name; empty when the
    /// directory is missing.
    public func powerSupplies() -> [PowerSupply] {
        let directory = path("sys/class/power_supply")
        return FileSystem.names(in: directory).sorted().map { name in
            let read = { (attribute: String) in Self.firstLine(of: directory + "/" + name + "/" + attribute) }
            return PowerSupply(name: name, type: read("type"), online: read("online").map { $0 == "1" },
                               status: read("status"), scope: read("scope"))
        }
    }

    /// Whether the machine runs on battery: a system battery is present and
    /// no external supply (mains, USB, wireless) is online. When the kernel
    /// lists no external supply at all (some machines report only the
    /// battery), a system battery whose `status` is `Discharging` decides.
    /// No battery (a desktop, a server, a container): never on battery.
    public var isOnBattery: Bool {
        let supplies = powerSupplies()
        let batteries = supplies.filter(\.isSystemBattery)
        guard !batteries.isEmpty else { return false }
        let external = supplies.filter(\.isExternal)
        if external.isEmpty { return batteries.contains { $0.status == "Discharging" } }
        return !external.contains { $0.online == true }
    }

    /// The 1-minute load average (`proc/loadavg`'s first field), or `nil`
    /// when it cannot be read.
    public var loadAverage: Double? {
        guard let line = Self.firstLine(of: path("proc/loadavg")),
              let first = line.split(separator: " ").first, let value = Double(first), value.isFinite, value >= 0
        else { return nil }
        return value
    }

    /// `root` joined with `relative`.
    func path(_ relative: String) -> String {
        root.hasSuffix("/") ? root + relative : root + "/" + relative
    }

    /// The first line of a small file, trimmed; `nil` when it cannot be read.
    static func firstLine(of path: String) -> String? {
        guard let fd = try? FileDescriptor.open(path, .readOnly),
              let bytes = try? fd.read(count: 4096, at: 0) else { return nil }
        let line = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self).trimmingSpaces
        return line.isEmpty ? nil : line
    }
}

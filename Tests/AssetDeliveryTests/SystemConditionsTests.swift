import Foundation
import Synchronization
import Testing
import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// "On battery" and "busy" from a test root of sysfs and procfs files, and
/// the gate a discretionary download waits at.
@Suite struct SystemConditionsTests {
    let dir = TemporaryDirectory("system-conditions")

    /// Writes `sys/class/power_supply/<name>/<attribute>` for each attribute.
    func supply(_ name: String, _ attributes: [String: String]) throws {
        for (attribute, value) in attributes {
            try dir.write("sys/class/power_supply/\(name)/\(attribute)", value + "\n")
        }
    }

    var conditions: SystemConditions { SystemConditions(root: dir.path) }

    /// A container's `downloads/slots/`, as the layout opens it.
    func slotDirectory() throws -> LayoutDirectory {
        try AssetStore(container: GroupContainer(path: dir.file("container"))).downloadSlotsDirectory
    }

    @Test func aMachineWithoutTheFilesIsNeitherOnBatteryNorBusy() {
        #expect(!conditions.isOnBattery)
        #expect(conditions.loadAverage == nil)
        #expect(conditions.powerSupplies().isEmpty)
        #expect(SystemConditions(root: dir.file("nowhere")).isOnBattery == false)
    }

    @Test func aBatteryWithMainsOfflineIsOnBatteryAndMainsOnlineIsNot() throws {
        try supply("BAT0", ["type": "Battery", "status": "Discharging", "scope": "System"])
        try supply("AC", ["type": "Mains", "online": "0"])
        #expect(conditions.isOnBattery)
        #expect(conditions.powerSupplies().map(\.name) == ["AC", "BAT0"])
        try supply("AC", ["online": "1"])
        #expect(!conditions.isOnBattery)
    }

    @Test func aUSBOrWirelessSupplyOnlineIsExternalPower() throws {
        try supply("BAT1", ["type": "Battery", "status": "Charging"])
        try supply("AC", ["type": "Mains", "online": "0"])
        try supply("ucsi-source-psy-USBC000:001", ["type": "USB_PD", "online": "1"])
        #expect(!conditions.isOnBattery)
        try supply("ucsi-source-psy-USBC000:001", ["online": "0"])
        try supply("qi", ["type": "Wireless", "online": "1"])
        #expect(!conditions.isOnBattery)
        try supply("qi", ["online": "0"])
        #expect(conditions.isOnBattery)
    }

    @Test func withNoExternalSupplyListedTheBatteryStatusDecides() throws {
        try supply("BAT0", ["type": "Battery", "status": "Discharging"])
        #expect(conditions.isOnBattery)
        try supply("BAT0", ["status": "Full"])
        #expect(!conditions.isOnBattery)
    }

    @Test func aPeripheralsBatteryOrAnUnreadableTypeIsNotTheMachines() throws {
        try supply("hidpp_battery_0", ["type": "Battery", "status": "Discharging", "scope": "Device"])
        #expect(!conditions.isOnBattery)
        // A supply directory without a type file says nothing.
        try FileManager.default.createDirectory(atPath: dir.file("sys/class/power_supply/odd"), withIntermediateDirectories: true)
        #expect(!conditions.isOnBattery)
        #expect(conditions.powerSupplies().first { $0.name == "odd" }?.type == nil)
    }

    @Test(arguments: [("0.52 0.58 0.59 1/417 2101", 0.52), ("12.00 3 1 2/300 9", 12.0)])
    func theLoadAverageIsTheFirstField(line: String, load: Double) throws {
        try dir.write("proc/loadavg", line + "\n")
        #expect(conditions.loadAverage == load)
    }

    @Test(arguments: ["", "busy", "-1 0 0", "nan 1 1"])
    func aLoadAverageThatIsNotANumberIsUnknown(line: String) throws {
        try dir.write("proc/loadavg", line)
        #expect(conditions.loadAverage == nil)
    }

    @Test func theRootComesFromTheEnvironment() {
        #expect(SystemConditions.root(environment: [:]) == "/")
        #expect(SystemConditions.root(environment: ["ASSETPACKS_SYSTEM_ROOT": ""]) == "/")
        #expect(SystemConditions.root(environment: ["ASSETPACKS_SYSTEM_ROOT": "/tmp/x"]) == "/tmp/x")
    }

    func policy(slots: Int = 1, load: Double? = 2, battery: Bool = true, recheck: Double = 0.05) -> DiscretionaryPolicy {
        DiscretionaryPolicy(maximumBytesPerSecond: nil, maximumConcurrentDownloads: slots, defersOnBattery: battery,
                            maximumLoadAverage: load, recheckInterval: recheck, conditions: conditions)
    }

    @Test func theDeferralNamesBatteryBeforeLoad() throws {
        #expect(policy().deferral() == nil)
        try dir.write("proc/loadavg", "2.50 1 1 1/1 1")
        #expect(policy().deferral() == "the machine is busy (1-minute load average above 2.0)")
        #expect(policy(load: 3).deferral() == nil)
        #expect(policy(load: nil).deferral() == nil)
        try supply("BAT0", ["type": "Battery", "status": "Discharging"])
        #expect(policy().deferral() == "the machine is on battery")
        #expect(policy(battery: false).deferral() == "the machine is busy (1-minute load average above 2.0)")
    }

    @Test(.timeLimit(.minutes(3)))
    func aTurnWaitsWhileDeferredReportingEachNewReasonOnce() throws {
        try supply("BAT0", ["type": "Battery", "status": "Discharging"])
        try supply("AC", ["type": "Mains", "online": "0"])
        let reasons = Shared<[String]>([])
        let done = Shared(false)
        let policy = policy()
        let slots = try slotDirectory()
        let thread = Thread {
            let slot = try? DiscretionaryGate.waitForTurn(policy, slots: slots) { reason in reasons.withLock { $0.append(reason) } }?.slot
            done.withLock { $0 = slot != nil }
        }
        thread.start()
        #expect(eventually(timeout: 30) { reasons.withLock { $0.count } == 1 })
        try dir.write("proc/loadavg", "5.00 1 1 1/1 1")
        try supply("AC", ["online": "1"])
        #expect(eventually(timeout: 30) { reasons.withLock { $0.count } == 2 })
        #expect(!done.withLock { $0 }, "the turn came while the machine was busy")
        try dir.write("proc/loadavg", "0.10 1 1 1/1 1")
        #expect(eventually(timeout: 30) { done.withLock { $0 } })
        #expect(reasons.withLock { $0 } == ["the machine is on battery", "the machine is busy (1-minute load average above 2.0)"])
    }

    @Test(.timeLimit(.minutes(3)))
    func slotsAreSharedAndFreedWhenATurnEnds() throws {
        let slots = try slotDirectory()
        var first: DiscretionaryTurn? = try DiscretionaryGate.waitForTurn(policy(slots: 2), slots: slots, deferred: nil)
        guard let second = try DiscretionaryGate.waitForTurn(policy(slots: 2), slots: slots, deferred: nil) else {
            Issue.record("no turn")
            return
        }
        #expect(first?.slot == 0 && second.slot == 1)
        #expect(try FileLock.isHeld(path: slots.path(of: "0.lock")) && FileLock.isHeld(path: slots.path(of: "1.lock")))
        let reasons = Shared<[String]>([])
        let got = Shared<Int?>(nil)
        let policy = policy(slots: 2)
        Thread {
            let slot = try? DiscretionaryGate.waitForTurn(policy, slots: slots) { reason in reasons.withLock { $0.append(reason) } }?.slot
            got.withLock { $0 = slot }
        }.start()
        #expect(eventually(timeout: 30) { !reasons.withLock { $0 }.isEmpty })
        #expect(got.withLock { $0 } == nil)
        first = nil
        #expect(eventually(timeout: 30) { got.withLock { $0 } == 0 })
        #expect(reasons.withLock { $0 } == ["all 2 download slots of the container are in use"])
        _ = consume second
    }
}

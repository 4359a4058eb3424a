import AssetPacks

extension VerifyCommand {
    /// A verification, as `verify --json` prints it.
    struct ReportJSON: Encodable {
        let container: String
        let deep: Bool
        let repair: Bool
        let dryRun: Bool
        let packsChecked: Int
        let membersChecked: Int
        let bytesChecked: UInt64
        let findings: [FindingJSON]
        let repairs: [RepairJSON]
        /// With a repair (not a dry run): what a second pass still found.
        let remaining: [FindingJSON]?
        let exitStatus: Int32

        init(_ report: Verification.Report, container: String, options: Verification.Options) {
            let repaired = options.repair && !options.dryRun
            self.container = container
            deep = options.deep
            repair = options.repair
            dryRun = options.dryRun
            packsChecked = report.packsChecked
            membersChecked = report.membersChecked
            bytesChecked = report.bytesChecked
            findings = report.findings.map(FindingJSON.init)
            repairs = report.repairs.map(RepairJSON.init)
            remaining = repaired ? report.remaining.map(FindingJSON.init) : nil
            exitStatus = VerifyCommand.exitStatus(report, repaired: repaired)
        }
    }

    /// One finding: its stable code, severity and what it concerns.
    struct FindingJSON: Encodable {
        let code: String
        let severity: String
        let message: String
        let pack: String?
        let object: String?

        init(_ f: Verification.Finding) {
            code = f.code.rawValue
            severity = f.severity.rawValue
            message = f.message
            pack = f.pack
            object = f.object
        }
    }

    /// One repair, done or (in a dry run) not.
    struct RepairJSON: Encodable {
        let codes: [String]
        let action: String
        let done: Bool
        let pack: String?

        init(_ r: Verification.Repair) {
            codes = r.codes.map(\.rawValue)
            action = r.action
            done = r.done
            pack = r.pack
        }
    }
}

import AssetPacks

/// `assetpack limits`: shows or records the container's pack limits.
enum LimitsCommand: Command {
    static let name = "limits"
    static let summary = "Show or set how much the container's packs may inflate to."
    static let discussion = """
        Installs refuse a pack whose deflated members declare more than these limits, before inflating \
        anything, and reads refuse a member installed under looser ones: the defence against decompression \
        bombs. Stored members are never held to them. Without options, prints the limits the container \
        enforces. Each option given records that limit for the container, keeping the others as they are; \
        --reset removes the record, and the defaults apply. Sizes are bytes, or a number with K, M, G or T \
        (powers of 1024).
        """

    static let memberSize = Option.value(
        "member-size", placeholder: "bytes",
        help: "The largest size a deflated member may declare (default: 1G).")
    static let ratio = Option.value(
        "ratio", placeholder: "n",
        help: "The largest ratio, to 1, of a deflated member's size to its compressed size (default: 200).")
    static let ratioExemptSize = Option.value(
        "ratio-exempt-size", placeholder: "bytes",
        help: "Members of at most this size may have any ratio (default: 1M).")
    static let packSize = Option.value(
        "pack-size", placeholder: "bytes",
        help: "The largest sum of a pack's deflated members' sizes (default: 16G).")
    static let reset = Option.flag("reset", help: "Remove the container's limits: the defaults apply.")

    static let options = [memberSize, ratio, ratioExemptSize, packSize, reset, CommonOptions.json] + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let sizes = (member: try arguments.byteCount(memberSize), ratio: try arguments.wholeNumber(ratio),
                     exempt: try arguments.byteCount(ratioExemptSize), pack: try arguments.byteCount(packSize))
        let setting = sizes.member != nil || sizes.ratio != nil || sizes.exempt != nil || sizes.pack != nil
        let resetting = arguments.flag(reset)
        if setting && resetting { throw .usage("--reset cannot be combined with a limit") }
        let manager = try StoreOptions.manager(arguments, createsContainer: setting || resetting)
        let limits: AssetPackManager.Limits
        let recorded: Bool
        do throws(AssetPackError) {
            if resetting {
                try manager.setLimits(nil)
                Output.error("limits removed: the defaults apply")
            } else if setting {
                var limits = try manager.limits()
                if let v = sizes.member { limits.maximumMemberSize = v }
                if let v = sizes.ratio { limits.maximumCompressionRatio = v }
                if let v = sizes.exempt { limits.compressionRatioExemptSize = v }
                if let v = sizes.pack { limits.maximumPackSize = v }
                try manager.setLimits(limits)
                Output.error("limits recorded")
            }
            limits = try manager.limits()
            recorded = try manager.recordedLimits() != nil
        } catch {
            throw .from(error)
        }
        if arguments.flag(CommonOptions.json) {
            try Output.json(LimitsJSON(recorded: recorded, maximumMemberSize: limits.maximumMemberSize,
                                       maximumCompressionRatio: limits.maximumCompressionRatio,
                                       compressionRatioExemptSize: limits.compressionRatioExemptSize,
                                       maximumPackSize: limits.maximumPackSize))
            return ExitCode.success
        }
        var table = TextTable([.left, .right])
        table.add(["member-size", "\(limits.maximumMemberSize)"])
        table.add(["ratio", "\(limits.maximumCompressionRatio)"])
        table.add(["ratio-exempt-size", "\(limits.compressionRatioExemptSize)"])
        table.add(["pack-size", "\(limits.maximumPackSize)"])
        table.lines.forEach { Output.line($0) }
        if !recorded && !resetting { Output.error("the container records no limits: these are the defaults") }
        return ExitCode.success
    }

    /// The limits as `limits --json` prints them.
    struct LimitsJSON: Encodable {
        /// Whether the container records them (else they are the defaults).
        let recorded: Bool
        let maximumMemberSize: UInt64
        let maximumCompressionRatio: UInt64
        let compressionRatioExemptSize: UInt64
        let maximumPackSize: UInt64
    }
}

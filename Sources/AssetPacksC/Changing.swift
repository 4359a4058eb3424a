import AssetPacks
import CAssetPacksHeader

@_cdecl("ap_install")
public func ap_install(_ container: OpaquePointer?, _ file: UnsafePointer<CChar>?, _ id: UnsafePointer<CChar>?,
                       _ change: UnsafeMutablePointer<Int32>?) -> Int32 {
    install(container, file, id, flags: 0, change, function: "ap_install")
}

@_cdecl("ap_install_flags")
public func ap_install_flags(_ container: OpaquePointer?, _ file: UnsafePointer<CChar>?, _ id: UnsafePointer<CChar>?,
                             _ flags: UInt32, _ change: UnsafeMutablePointer<Int32>?) -> Int32 {
    install(container, file, id, flags: flags, change, function: "ap_install_flags")
}

private func install(_ container: OpaquePointer?, _ file: UnsafePointer<CChar>?, _ id: UnsafePointer<CChar>?, flags: UInt32,
                     _ change: UnsafeMutablePointer<Int32>?, function: StaticString) -> Int32 {
    call {
        let c = try Argument.container(container, function)
        let file = try Argument.string(file, function, "file")
        let id = try Argument.optionalString(id, function, "id")
        try Argument.flags(flags, known: AP_INSTALL_BACKGROUND, function)
        try c.requireWritable("install \(file)")
        let priority: AssetPackManager.WorkPriority = flags & AP_INSTALL_BACKGROUND != 0 ? .background : .normal
        let result = try c.manager.installPack(at: file, id: id, priority: priority)
        switch result.change {
        case .installed: change?.pointee = AP_INSTALLED
        case .replaced: change?.pointee = AP_REPLACED
        case .unchanged: change?.pointee = AP_UNCHANGED
        }
        return AP_OK
    }
}

@_cdecl("ap_remove")
public func ap_remove(_ container: OpaquePointer?, _ pack: UnsafePointer<CChar>?) -> Int32 {
    call {
        let c = try Argument.container(container, "ap_remove")
        let pack = try Argument.string(pack, "ap_remove", "pack")
        try c.requireWritable("remove pack \(pack)")
        try c.manager.remove(assetPackWithID: pack)
        return AP_OK
    }
}

@_cdecl("ap_verify")
public func ap_verify(_ container: OpaquePointer?, _ flags: UInt32,
                      _ callback: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<ap_finding>?) -> Void)?,
                      _ context: UnsafeMutableRawPointer?) -> Int32 {
    call {
        let c = try Argument.container(container, "ap_verify")
        try Argument.flags(flags, known: AP_VERIFY_DEEP | AP_VERIFY_REPAIR | AP_VERIFY_DRY_RUN, "ap_verify")
        let repair = flags & AP_VERIFY_REPAIR != 0
        let dryRun = flags & AP_VERIFY_DRY_RUN != 0
        if dryRun && !repair { throw Refusal.invalid("ap_verify", "flags", "has AP_VERIFY_DRY_RUN without AP_VERIFY_REPAIR") }
        if repair && !dryRun { try c.requireWritable("repair") }
        let report = try c.manager.verify(Verification.Options(deep: flags & AP_VERIFY_DEEP != 0, repair: repair, dryRun: dryRun))
        if let callback {
            for (finding, remaining) in report.findings.map({ ($0, false) }) + report.remaining.map({ ($0, true) }) {
                deliver(finding, remaining: remaining, to: callback, context)
            }
        }
        // fsck's statuses, as `assetpack verify` exits.
        guard report.hasErrors else { return 0 }
        let corrected = repair && !dryRun && !report.remaining.contains { $0.severity == .error }
        return corrected ? 1 : 4
    }
}

/// Hands one finding to the caller's callback, its strings valid during the call.
private func deliver(_ finding: Verification.Finding, remaining: Bool,
                    to callback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<ap_finding>?) -> Void,
                    _ context: UnsafeMutableRawPointer?) {
    finding.code.rawValue.withCString { code in
        finding.message.withCString { message in
            withOptionalCString(finding.pack) { pack in
                withOptionalCString(finding.object) { object in
                    var c = ap_finding()
                    c.struct_size = MemoryLayout<ap_finding>.size
                    c.code = code
                    c.severity = switch finding.severity {
                    case .warning: AP_SEVERITY_WARNING
                    case .reclaimable: AP_SEVERITY_RECLAIMABLE
                    case .error: AP_SEVERITY_ERROR
                    }
                    c.remaining = remaining ? 1 : 0
                    c.pack = pack
                    c.object = object
                    c.message = message
                    callback(context, &c)
                }
            }
        }
    }
}

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

import AssetPacks
import CAssetPacksHeader

/// Opens `container` as `flags` say and hands the new handle to `out`.
private func open(_ container: AssetPackManager.Container, flags: UInt32, function: StaticString,
                  out: UnsafeMutablePointer<OpaquePointer?>) throws -> Int32 {
    try Argument.flags(flags, known: AP_OPEN_READWRITE | AP_OPEN_CREATE, function)
    let writable = flags & AP_OPEN_READWRITE != 0
    if flags & AP_OPEN_CREATE != 0 && !writable {
        throw Refusal.invalid(function, "flags", "has AP_OPEN_CREATE without AP_OPEN_READWRITE")
    }
    let options = AssetPackManager.Options(createsContainer: flags & AP_OPEN_CREATE != 0)
    let handle = ContainerHandle(manager: try AssetPackManager(container: container, options: options), writable: writable)
    out.pointee = OpaquePointer(Unmanaged.passRetained(handle).toOpaque())
    return AP_OK
}

@_cdecl("ap_open")
public func ap_open(_ path: UnsafePointer<CChar>?, _ flags: UInt32, _ container: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let out = try Argument.required(container, "ap_open", "container")
        let path = try Argument.string(path, "ap_open", "path")
        return try open(AssetPackManager.Container(path: path), flags: flags, function: "ap_open", out: out)
    }
}

@_cdecl("ap_open_group")
public func ap_open_group(_ group: UnsafePointer<CChar>?, _ flags: UInt32, _ container: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let out = try Argument.required(container, "ap_open_group", "container")
        let group = try Argument.optionalString(group, "ap_open_group", "group") ?? "default"
        return try open(.default(group: group), flags: flags, function: "ap_open_group", out: out)
    }
}

@_cdecl("ap_close")
public func ap_close(_ container: OpaquePointer?) {
    guard let container else { return }
    Unmanaged<ContainerHandle>.fromOpaque(UnsafeRawPointer(container)).release()
}

@_cdecl("ap_container_path")
public func ap_container_path(_ container: OpaquePointer?) -> UnsafePointer<CChar> {
    guard let handle = ContainerHandle.from(container) else { return emptyCString }
    return UnsafePointer(handle.path)
}

@_cdecl("ap_set_lock_timeout")
public func ap_set_lock_timeout(_ container: OpaquePointer?, _ seconds: Double) -> Int32 {
    call {
        let handle = try Argument.container(container, "ap_set_lock_timeout")
        guard seconds.isFinite else { throw Refusal.invalid("ap_set_lock_timeout", "seconds", "is \(seconds), not a finite number") }
        try handle.manager.setLockTimeout(seconds < 0 ? nil : seconds)
        return AP_OK
    }
}

@_cdecl("ap_version")
public func ap_version(_ major: UnsafeMutablePointer<Int32>?, _ minor: UnsafeMutablePointer<Int32>?,
                       _ patch: UnsafeMutablePointer<Int32>?) -> UnsafePointer<CChar> {
    major?.pointee = AP_VERSION_MAJOR
    minor?.pointee = AP_VERSION_MINOR
    patch?.pointee = AP_VERSION_PATCH
    let text: StaticString = "1.3.0"
    return UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

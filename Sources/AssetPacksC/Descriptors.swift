import AssetPacks
import CAssetPacksHeader

@_cdecl("ap_get_descriptor")
public func ap_get_descriptor(_ container: OpaquePointer?, _ pack: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                              _ flags: UInt32, _ info: UnsafeMutablePointer<ap_descriptor_info>?) -> Int32 {
    call {
        let c = try Argument.container(container, "ap_get_descriptor")
        let pack = try Argument.pack(pack, "ap_get_descriptor")
        let path = try Argument.string(path, "ap_get_descriptor", "path")
        let info = try Argument.required(info, "ap_get_descriptor", "info")
        try Argument.flags(flags, known: AP_DESCRIPTOR_STANDALONE, "ap_get_descriptor")
        try Argument.structSize(info.pointee.struct_size, MemoryLayout<ap_descriptor_info>.size, "ap_get_descriptor", "info")
        // ap_descriptor_info promises a file position of the caller's own.
        let options: AssetDescriptor.Options = flags & AP_DESCRIPTOR_STANDALONE != 0 ? [.standalone, .ownOffset] : .ownOffset
        let d = try c.manager.descriptor(for: path, searchingInAssetPackWithID: pack, options: options)
        info.pointee.source = d.source == .archive ? AP_SOURCE_ARCHIVE : AP_SOURCE_MEMORY
        info.pointee.offset = d.offset
        info.pointee.length = d.length
        info.pointee.crc32 = d.crc32
        info.pointee.fd = d.take()
        return AP_OK
    }
}

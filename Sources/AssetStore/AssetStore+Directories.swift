extension AssetStore {
    /// `downloads/`: each pack's download lock, status record and control
    /// record (AssetDelivery's `DownloadBoard`), opened without following a
    /// symlink (``ContainerLayout``). A store that does not create the
    /// layout opens it once another process has made it.
    public var downloadsDirectory: LayoutDirectory { layout.current(layout.downloads) }

    /// `downloads/slots/`: the discretionary downloads' slot locks.
    public var downloadSlotsDirectory: LayoutDirectory { layout.current(layout.downloadSlots) }

    /// `catalog/`: the catalog cache, a directory per catalog URL.
    public var catalogDirectory: LayoutDirectory { layout.current(layout.catalog) }

    /// The container directory itself (reached through the caller's path).
    public var containerDirectory: LayoutDirectory { layout.root }
}

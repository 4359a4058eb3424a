// AssetArchive

// AssetStore

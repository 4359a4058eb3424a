// AssetPacks

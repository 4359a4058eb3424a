// AssetIndex

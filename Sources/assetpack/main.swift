print("assetpack")

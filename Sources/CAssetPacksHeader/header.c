// The header of libassetpacks, compiled once here so the build checks it.
#include "assetpacks.h"
